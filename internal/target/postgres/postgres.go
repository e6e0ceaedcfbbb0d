// Package postgres is the PostgreSQL target. It drives pgx's pgconn layer
// directly: statements are parsed, bound and executed with reusable
// argument buffers and rows are read without decoding, so the client spends
// as little CPU per statement as a C client does.
package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbmark/dbmark/internal/mux"
	"github.com/dbmark/dbmark/internal/target"
)

// Modes are pgbench's -M values.
const (
	ModeSimple   = "simple"   // simple protocol, arguments inlined as literals
	ModeExtended = "extended" // extended protocol, unnamed statement per execution
	ModePrepared = "prepared" // extended protocol, named statement prepared once
)

// Register adds the postgres schemes to r.
func Register(r *target.Registry) {
	r.Register(Open, "postgres", "postgresql", "pgsql")
}

// Target is a PostgreSQL server.
type Target struct {
	cfg      *pgconn.Config
	mode     string
	netIO    string
	redacted string
}

// Open parses u and checks the options; it does not connect.
func Open(_ context.Context, u *url.URL, opts target.Options) (target.Target, error) {
	mode := opts.PGMode
	if mode == "" {
		mode = ModePrepared
	}
	switch mode {
	case ModeSimple, ModeExtended, ModePrepared:
	default:
		return nil, fmt.Errorf("--pg-mode %q: must be simple, extended or prepared", mode)
	}
	raw := *u
	if raw.Scheme == "pgsql" {
		raw.Scheme = "postgres"
	}
	cfg, err := pgconn.ParseConfig(raw.String())
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", target.ErrBadURL, target.Redact(u.String()), err)
	}
	// Measured (bench/README.md): with pgconn, waiting in the worker's own
	// thread (target.DialBlocking) costs about what Go's poller does for
	// point selects and read-write transactions, and more for pgbench's
	// tpcb-like, where the poller wakes once for several answers. So the
	// poller unless blocking is asked for.
	io := target.NetIOPoll
	cfg.DialFunc = target.DialPoll
	if opts.NetIO == target.NetIOBlocking {
		io = target.NetIOBlocking
		cfg.DialFunc = target.DialBlocking
	}
	return &Target{cfg: cfg, mode: mode, netIO: io, redacted: target.Redact(u.String())}, nil
}

// HoldsProcessor says whether connections wait for the server in raw
// system calls (target.ProcessorHolder).
func (t *Target) HoldsProcessor() bool { return t.netIO == target.NetIOBlocking }

// Multiplexes: statements can wait in a mux task (connections opened in
// one are made for it, see Connect).
func (t *Target) Multiplexes() bool { return true }

// ProcessPerConnection: each connection has a backend process of its own
// (target.ServerProcess).
func (t *Target) ProcessPerConnection() bool { return true }

func (t *Target) Kind() string                        { return "postgres" }
func (t *Target) Redacted() string                    { return t.redacted }
func (t *Target) Dialect() target.Dialect             { return dialect{} }
func (t *Target) Close() error                        { return nil }
func (t *Target) Classify(err error) target.ErrorInfo { return Classify(err) }

// Mode is the protocol mode (pgbench's -M).
func (t *Target) Mode() string { return t.mode }

func (t *Target) connectRaw(ctx context.Context) (*pgconn.PgConn, error) {
	cfg := t.cfg.Copy()
	if mux.From(ctx) != nil {
		// A task's connection must stay out of Go's poller
		// (target.TaskConn); its statements wait in the task's loop.
		cfg.DialFunc = target.DialBlocking
	}
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, connectError(t.cfg, err)
	}
	return pc, nil
}

// Connect opens one connection.
func (t *Target) Connect(ctx context.Context) (target.Conn, error) {
	pc, err := t.connectRaw(ctx)
	if err != nil {
		return nil, err
	}
	return newConn(pc, t.mode), nil
}

func endpoint(cfg *pgconn.Config) string {
	if strings.HasPrefix(cfg.Host, "/") {
		return fmt.Sprintf("socket %s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

// connectError turns a failed connection into one line that says what to do.
func connectError(cfg *pgconn.Config, err error) error {
	where := endpoint(cfg)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "28P01", "28000":
			return fmt.Errorf("connect to PostgreSQL at %s: authentication failed for user %q (check the user and password in --target)", where, cfg.User)
		case "3D000":
			return fmt.Errorf("connect to PostgreSQL at %s: database %q does not exist (create it with: createdb %s)", where, cfg.Database, cfg.Database)
		case "53300":
			return fmt.Errorf("connect to PostgreSQL at %s: too many connections (raise max_connections or use fewer --threads)", where)
		}
		return fmt.Errorf("connect to PostgreSQL at %s: %s (SQLSTATE %s)", where, pgErr.Message, pgErr.Code)
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("connect to PostgreSQL at %s: connection refused (is the server running and listening there?)", where)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && len(msg) > 200 {
		msg = msg[i+2:]
	}
	return fmt.Errorf("connect to PostgreSQL at %s: %s", where, msg)
}

// Inspect reports the server's version and settings.
func (t *Target) Inspect(ctx context.Context) (target.Engine, error) {
	pc, err := t.connectRaw(ctx)
	if err != nil {
		return target.Engine{}, err
	}
	defer pc.Close(context.Background())
	e := target.Engine{Name: "PostgreSQL", Settings: map[string]string{}, Driver: "pgx/v5 pgconn, -M " + t.mode + ", " + t.netIO + " reads"}
	res := pc.ExecParams(ctx, "SELECT name, setting FROM pg_settings", nil, nil, nil, nil).Read()
	if res.Err != nil {
		return e, fmt.Errorf("inspect PostgreSQL: read settings: %w", res.Err)
	}
	for _, row := range res.Rows {
		e.Settings[string(row[0])] = string(row[1])
	}
	e.Version = e.Settings["server_version"]
	e.DataDir = e.Settings["data_directory"]
	if r := pc.ExecParams(ctx, "SELECT version()", nil, nil, nil, nil).Read(); r.Err == nil && len(r.Rows) == 1 {
		e.Settings["version()"] = string(r.Rows[0][0])
	}
	return e, nil
}

// Classify maps PostgreSQL errors to classes by SQLSTATE.
func Classify(err error) target.ErrorInfo {
	if err == nil {
		return target.ErrorInfo{}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return target.ErrorInfo{Class: target.Canceled, Code: "canceled"}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "40001", pgErr.Code == "40P01", pgErr.Code == "55P03":
			return target.ErrorInfo{Class: target.Retryable, Code: pgErr.Code}
		case strings.HasPrefix(pgErr.Code, "08"), pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03":
			return target.ErrorInfo{Class: target.Reconnect, Code: pgErr.Code}
		}
		return target.ErrorInfo{Class: target.Fatal, Code: pgErr.Code}
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return target.ErrorInfo{Class: target.Reconnect, Code: "connection_lost"}
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return target.ErrorInfo{Class: target.Reconnect, Code: "connect"}
	}
	return target.ErrorInfo{Class: target.Fatal, Code: "client"}
}

type dialect struct{}

func (dialect) Placeholder(n int) string          { return "$" + strconv.Itoa(n) }
func (dialect) AutoIncrementPK(col string) string { return col + " SERIAL PRIMARY KEY" }
func (dialect) IntPK(col string) string           { return col + " INTEGER NOT NULL PRIMARY KEY" }
func (dialect) Begin(bool) string                 { return "BEGIN" }

// Conn is one PostgreSQL connection.
type Conn struct {
	pc     *pgconn.PgConn
	w      *wire // statements; pgconn for the rest
	mode   string
	watch  target.CancelWatch
	nextID atomic.Int64
	closed bool
	res    results  // RunText's and RunRow's reused result
	pl     pipeline // reused by every StartPipeline
}

func newConn(pc *pgconn.PgConn, mode string) *Conn {
	c := &Conn{pc: pc, w: newWire(pc.Conn()), mode: mode}
	c.res.keep = true
	c.watch.Interrupt = target.InterruptConn(pc.Conn())
	return c
}

// roundTrip sends what is queued and reads the answers into res.
func (c *Conn) roundTrip(ctx context.Context, res *results) error {
	c.w.sock.Use(ctx)
	err := c.w.flush()
	if err == nil {
		err = c.w.read(res)
	}
	return c.wrap(ctx, err)
}

// keepLast resets c.res for a request whose last row is kept; cols names
// the columns when the server will not describe them.
func (c *Conn) keepLast(cols []string) *results {
	c.res.rows, c.res.affected, c.res.open = 0, 0, false
	c.res.row.Rows = 0
	c.res.row.Columns = c.res.row.Columns[:0]
	c.res.cols = cols
	return &c.res
}

// closeTimeout bounds the polite goodbye to the server.
const closeTimeout = 2 * time.Second

// bg is the context handed to pgconn: cancellation is handled by the
// connection's watch, so pgconn need not register on every call.
var bg = context.Background()

// wrap turns an error after an interrupted read into the context's error.
func (c *Conn) wrap(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Exec runs sql with the simple protocol.
func (c *Conn) Exec(ctx context.Context, sql string) error {
	if err := c.watch.Watch(ctx); err != nil {
		return err
	}
	queueQuery(c.w, sql)
	var res results
	return c.roundTrip(ctx, &res)
}

// QueryRow returns the first column of the first row as text.
func (c *Conn) QueryRow(ctx context.Context, sql string) (string, bool, error) {
	if err := c.watch.Watch(ctx); err != nil {
		return "", false, err
	}
	res := c.pc.ExecParams(bg, sql, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return "", false, c.wrap(ctx, res.Err)
	}
	if len(res.Rows) == 0 || len(res.Rows[0]) == 0 {
		return "", false, nil
	}
	return string(res.Rows[0][0]), true, nil
}

// Prepare readies sql (with $n placeholders) for the connection's mode.
func (c *Conn) Prepare(ctx context.Context, sql string) (target.Stmt, error) {
	if err := c.watch.Watch(ctx); err != nil {
		return nil, err
	}
	s := &Stmt{c: c, sql: sql}
	switch c.mode {
	case ModePrepared:
		name := "dbm" + strconv.FormatInt(c.nextID.Add(1), 10)
		sd, err := c.pc.Prepare(bg, name, sql, nil)
		if err != nil {
			return nil, fmt.Errorf("prepare %q: %w", sql, c.wrap(ctx, err))
		}
		s.sd = sd
		for _, f := range sd.Fields {
			s.cols = append(s.cols, f.Name)
		}
	case ModeSimple:
		tpl, err := target.ParseTemplate(sql)
		if err != nil {
			return nil, err
		}
		s.tpl = tpl
	}
	return s, nil
}

// ServerPID is the backend's process id (target.ServerProcess).
func (c *Conn) ServerPID() int { return int(c.pc.PID()) }

// Close closes the connection.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.watch.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if c.w.broken != nil {
		// Lost or interrupted: no goodbye to send, only a socket to close.
		cancel()
		_ = c.pc.Close(ctx)
		return nil
	}
	return c.pc.Close(ctx)
}

// Stmt is a statement on one Conn.
type Stmt struct {
	c    *Conn
	sql  string
	sd   *pgconn.StatementDescription
	cols []string         // the prepared statement's column names
	tpl  *target.Template // simple mode
	text []byte           // simple mode's reused SQL text
}

// queue queues one execution of the statement with args in the
// connection's mode.
func (s *Stmt) queue(args []target.Value) error {
	w := s.c.w
	switch s.c.mode {
	case ModeSimple:
		b, err := s.tpl.Render(s.text[:0], args, false)
		if err != nil {
			return err
		}
		s.text = b
		queueQuery(w, b)
		return nil
	case ModePrepared:
		w.bind(s.sd.Name, args)
	default:
		// pgbench's -M extended (libpq's PQsendQueryParams): parse, bind
		// and describe the unnamed statement every time.
		w.parse("", s.sql)
		w.bind("", args)
		w.describePortal()
	}
	w.execute()
	w.sync()
	return nil
}

// Run executes the statement and discards its rows.
func (s *Stmt) Run(ctx context.Context, args []target.Value) (int64, error) {
	if err := s.c.watch.Watch(ctx); err != nil {
		return 0, err
	}
	if err := s.queue(args); err != nil {
		return 0, err
	}
	var res results
	err := s.c.roundTrip(ctx, &res)
	if res.rows == 0 {
		res.rows = res.affected
	}
	return res.rows, err
}

// RunRow executes the statement and keeps the last row it returned.
func (s *Stmt) RunRow(ctx context.Context, args []target.Value) (target.Row, error) {
	if err := s.c.watch.Watch(ctx); err != nil {
		return target.Row{}, err
	}
	if err := s.queue(args); err != nil {
		return target.Row{}, err
	}
	res := s.c.keepLast(s.cols)
	if err := s.c.roundTrip(ctx, res); err != nil {
		return target.Row{}, err
	}
	return res.row, nil
}

// Close deallocates a prepared statement.
func (s *Stmt) Close() error {
	if s.sd == nil || s.c.closed || s.c.w.broken != nil {
		return nil // a lost connection takes its statements with it
	}
	err := s.c.pc.Deallocate(bg, s.sd.Name)
	s.sd = nil
	return err
}

// BulkInsert loads rows with COPY ... FROM STDIN in text format.
func (c *Conn) BulkInsert(ctx context.Context, table string, columns []string, rows target.RowSource) (int64, error) {
	if err := c.watch.Watch(ctx); err != nil {
		return 0, err
	}
	r := &copyReader{rows: rows, vals: make([]target.Value, len(columns))}
	sql := fmt.Sprintf("COPY %s (%s) FROM STDIN", table, strings.Join(columns, ", "))
	tag, err := c.pc.CopyFrom(bg, r, sql)
	if err != nil {
		return 0, fmt.Errorf("copy into %s: %w", table, c.wrap(ctx, err))
	}
	return tag.RowsAffected(), nil
}

// copyReader renders rows as COPY text lines on demand.
type copyReader struct {
	rows target.RowSource
	vals []target.Value
	buf  bytes.Buffer
	done bool
}

func (r *copyReader) Read(p []byte) (int, error) {
	for r.buf.Len() < len(p) && !r.done {
		if !r.rows.Next(r.vals) {
			r.done = true
			break
		}
		var line []byte
		line = r.buf.AvailableBuffer()
		for i, v := range r.vals {
			if i > 0 {
				line = append(line, '\t')
			}
			if v.IsNull {
				line = append(line, '\\', 'N')
				continue
			}
			if !v.IsStr {
				line = strconv.AppendInt(line, v.Int, 10)
				continue
			}
			for _, ch := range v.Str {
				switch ch {
				case '\\':
					line = append(line, '\\', '\\')
				case '\t':
					line = append(line, '\\', 't')
				case '\n':
					line = append(line, '\\', 'n')
				case '\r':
					line = append(line, '\\', 'r')
				default:
					line = append(line, ch)
				}
			}
		}
		line = append(line, '\n')
		r.buf.Write(line)
	}
	if r.buf.Len() == 0 && r.done {
		return 0, io.EOF
	}
	return r.buf.Read(p)
}

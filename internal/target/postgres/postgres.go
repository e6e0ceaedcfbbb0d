// Package postgres is the PostgreSQL target, on pgx's pgconn: statements
// go through ExecStatement, ExecParams and Exec with their result readers,
// arguments are encoded as text into buffers reused between executions,
// and rows are counted or copied without decoding.
package postgres

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/transport"
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
	r.RegisterDurability("postgres", Unsafe)
}

// Target is a PostgreSQL server.
type Target struct {
	cfg       *pgconn.Config
	mode      string
	transport string
	// autoTransport: transport is the engine's choice (--transport auto).
	autoTransport bool
	// hold is auto's blocking connections' (nil otherwise).
	hold     *transport.Hold
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
	if err := transport.Check(opts.Transport); err != nil {
		return nil, err
	}
	raw := *u
	if raw.Scheme == "pgsql" {
		raw.Scheme = "postgres"
	}
	cfg, err := pgconn.ParseConfig(raw.String())
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", target.ErrBadURL, target.Redact(u.String()), err)
	}
	// pgconn's own dialer (its keep-alive), on the run's transport; TLS
	// is pgconn's, on top. Its cancel requests dial through it too.
	// The engine's choice: over a unix socket, where a short statement's
	// reply comes within microseconds, the blocking transport had the
	// higher rate in every round of bench/'s A/B at 8 clients on 2
	// processors (on another machine, by turns); from 16 clients the
	// poller had, in every round. Over TCP the two were level by turns,
	// and where statements wait on the server the poller costs less. So
	// the blocking transport when every host is a socket and there are at
	// most 4 clients a processor, the poller otherwise.
	tr, auto := opts.Transport, transport.IsAuto(opts.Transport)
	if auto {
		tr = transport.Polled()
		if socketsOnly(cfg) && transport.Few(opts.Clients, 4) {
			tr = transport.Held()
		}
	}
	// Auto's blocking connections are released to the poller when the
	// server holds them long (transport.Hold, shared by a cluster's
	// servers); a named transport stays.
	var hold *transport.Hold
	if auto {
		if hold = opts.Hold; hold == nil {
			hold = new(transport.Hold)
		}
	}
	cfg.DialFunc = transport.Wrap(tr, cfg.DialFunc, hold)
	if cfg.ConnectTimeout == 0 {
		// A server that accepts and never answers must not hold the run.
		cfg.ConnectTimeout = target.ConnectTimeout
	}
	if opts.Notices != nil {
		var mu sync.Mutex // the connections' notices, each written whole
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprint(opts.Notices, NoticeMessage(n))
		}
	}
	return &Target{cfg: cfg, mode: mode, transport: tr, autoTransport: auto, hold: hold, redacted: target.Redact(u.String())}, nil
}

// socketsOnly says whether every host cfg may connect to (its first and
// its fallbacks) is a unix socket.
func socketsOnly(cfg *pgconn.Config) bool {
	hosts := append([]*pgconn.FallbackConfig{{Host: cfg.Host, Port: cfg.Port}}, cfg.Fallbacks...)
	for _, h := range hosts {
		if network, _ := pgconn.NetworkAddress(h.Host, h.Port); network != "unix" {
			return false
		}
	}
	return true
}

func (t *Target) Kind() string                        { return "postgres" }
func (t *Target) Redacted() string                    { return t.redacted }
func (t *Target) Dialect() target.Dialect             { return dialect{} }
func (t *Target) Close() error                        { return nil }
func (t *Target) Classify(err error) target.ErrorInfo { return Classify(err) }

var _ target.ThreadHolder = (*Target)(nil)

// HoldsThreads says whether the connections are on the blocking
// transport, whose waits keep the client's thread, and not released from
// it (transport.Hold), for now.
func (t *Target) HoldsThreads() bool { return t.transport == transport.Blocking && t.hold.Holding() }

// HoldSwitches lists the moves of auto's blocking connections to the
// poller and back, and why (transport.Hold).
func (t *Target) HoldSwitches() []transport.Switch { return t.hold.Switches() }

// Mode is the protocol mode (pgbench's -M).
func (t *Target) Mode() string { return t.mode }

// Protocol is Mode: a PostgreSQL target is a target.ProtocolTarget.
func (t *Target) Protocol() string { return t.mode }

func (t *Target) connectRaw(ctx context.Context) (*pgconn.PgConn, error) {
	pc, err := pgconn.ConnectConfig(ctx, t.cfg)
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
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &connError{msg: connectMessage(cfg, err).Error(), cfg: cfg, err: err}
}

// connectMessage is dbmark's line for a failed connection.
func connectMessage(cfg *pgconn.Config, err error) error {
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
	if notPostgres(err) {
		return fmt.Errorf("connect to PostgreSQL at %s: the server there did not answer as PostgreSQL does (is it another service on that port?)", where)
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return fmt.Errorf("connect to PostgreSQL at %s: no answer within %v (is the server overloaded or stopped? connect_timeout in the URL sets the bound)", where, cfg.ConnectTimeout)
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

// notPostgres says whether err is pgconn's reaction to bytes that are not
// PostgreSQL's protocol (an HTTP server or other service on the port).
func notPostgres(err error) bool {
	var tooLong *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &tooLong) {
		return true
	}
	msg := err.Error()
	// A message of a known type that has no place at connect (a MariaDB
	// greeting's first byte, 'd', reads as CopyData): pgconn wraps no
	// cause, so its text ends in "%!w(<nil>)".
	return strings.Contains(msg, "unknown message type") || strings.Contains(msg, "invalid message") ||
		strings.Contains(msg, "received unexpected message")
}

// Inspect reports the server's version and settings.
func (t *Target) Inspect(ctx context.Context) (target.Engine, error) {
	pc, err := t.connectRaw(ctx)
	if err != nil {
		return target.Engine{}, err
	}
	defer pc.Close(context.Background())
	e := target.Engine{Name: "PostgreSQL", Settings: map[string]string{}, Driver: "pgx/v5 pgconn, -M " + t.mode + ", " + tlsState(pc) + ", " + transport.Describe(t.transport)}
	if t.autoTransport {
		e.Driver += " (auto)"
	}
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
	var lost *lostError
	if errors.As(err, &lost) && !errors.As(err, new(*pgconn.PgError)) {
		return target.ErrorInfo{Class: target.Reconnect, Code: "connection_lost"}
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

// Conn is one PostgreSQL connection, used by one goroutine at a time.
// Every call hands the caller's context to pgconn, which interrupts the
// socket when it ends, except a prepared statement's Run and RunRow, the
// workloads' every statement: they give pgconn context.Background(),
// which it does not watch, and w interrupts the socket in the same way
// (a deadline in the past) while registering with a context once, not
// per statement (target.Watch).
type Conn struct {
	pc     *pgconn.PgConn
	w      target.Watch
	mode   string
	nextID int
	row    target.Row // RunText's reused result
	pl     pipeline   // reused by every StartPipeline
	cur    target.Activity
}

func newConn(pc *pgconn.PgConn, mode string) *Conn {
	c := &Conn{pc: pc, mode: mode}
	nc := pc.Conn()
	c.w.Interrupt = func() { _ = nc.SetDeadline(time.Now()) }
	c.w.Restore = func() { _ = nc.SetDeadline(time.Time{}) }
	return c
}

var _ target.Idler = (*Conn)(nil)

// Idle says no transaction is open: the server's last ReadyForQuery said
// so.
func (c *Conn) Idle() bool { return c.pc.TxStatus() == 'I' }

// closeTimeout bounds the polite goodbye to the server.
const closeTimeout = 2 * time.Second

// wrap turns an error after an interrupted read into the context's
// error, and any error that left pgconn's connection closed (the server
// ended the session, perhaps after a notice) into a lost connection.
func wrap(ctx context.Context, pc *pgconn.PgConn, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case pc.IsClosed():
		return &lostError{serverErr(err)}
	}
	return serverErr(err)
}

// lostError is an error after which the connection is gone.
type lostError struct{ err error }

func (e *lostError) Error() string { return e.err.Error() }
func (e *lostError) Unwrap() error { return e.err }

// Current is the statement the connection is running, or ran last
// (target.Activity).
func (c *Conn) Current() string { return c.cur.Current() }

// The connection's statements run under its Watch of ctx, and pgconn is
// given context.Background(): pgconn's own watching registers with ctx
// for every statement, taking the mutex of the run's context, which
// every client shares.

// Exec runs sql with the simple protocol.
func (c *Conn) Exec(ctx context.Context, sql string) error {
	c.cur.Set(sql)
	if err := c.w.Begin(ctx); err != nil {
		return err
	}
	defer c.w.End()
	_, err := c.pc.Exec(context.Background(), sql).ReadAll()
	return wrap(ctx, c.pc, err)
}

// ExecRows runs sql with the simple protocol, as Exec does, and returns
// the rows it returned or else affected.
func (c *Conn) ExecRows(ctx context.Context, sql string) (int64, error) {
	c.cur.Set(sql)
	if err := c.w.Begin(ctx); err != nil {
		return 0, err
	}
	defer c.w.End()
	return runText(ctx, c.pc, sql)
}

// QueryRow returns the first column of the first row as text.
func (c *Conn) QueryRow(ctx context.Context, sql string) (string, bool, error) {
	c.cur.Set(sql)
	if err := c.w.Begin(ctx); err != nil {
		return "", false, err
	}
	defer c.w.End()
	res := c.pc.ExecParams(context.Background(), sql, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return "", false, wrap(ctx, c.pc, res.Err)
	}
	if len(res.Rows) == 0 || len(res.Rows[0]) == 0 {
		return "", false, nil
	}
	return string(res.Rows[0][0]), true, nil
}

// Prepare readies sql (with $n placeholders) for the connection's mode.
func (c *Conn) Prepare(ctx context.Context, sql string) (target.Stmt, error) {
	s := &Stmt{c: c, sql: sql}
	switch c.mode {
	case ModePrepared:
		c.nextID++
		c.cur.Set(sql)
		sd, err := c.pc.Prepare(ctx, "dbm"+strconv.Itoa(c.nextID), sql, nil)
		if err != nil {
			return nil, fmt.Errorf("prepare %q: %w", sql, wrap(ctx, c.pc, err))
		}
		s.sd = sd
	case ModeSimple:
		tpl, err := target.ParseTemplate(sql)
		if err != nil {
			return nil, err
		}
		s.tpl = tpl
	}
	return s, nil
}

// Close closes the connection; it is safe to call twice.
func (c *Conn) Close() error {
	c.w.Release()
	if c.pc.IsClosed() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return c.pc.Close(ctx)
}

// Stmt is a statement on one Conn.
type Stmt struct {
	c    *Conn
	sql  string
	sd   *pgconn.StatementDescription // prepared mode
	tpl  *target.Template             // simple mode
	args params
	text []byte     // simple mode's reused SQL text
	row  target.Row // RunRow's reused result
}

// params holds a statement's arguments as text parameters in buffers
// reused from one execution to the next.
type params struct {
	vals [][]byte
	bufs [][]byte
}

func (p *params) encode(args []target.Value) [][]byte {
	if cap(p.vals) < len(args) {
		p.vals = make([][]byte, len(args))
		p.bufs = make([][]byte, len(args))
	}
	p.vals = p.vals[:len(args)]
	for i, a := range args {
		switch {
		case a.IsNull:
			p.vals[i] = nil // pgconn sends a nil parameter as NULL
		case a.IsStr && a.Str == nil:
			p.vals[i] = []byte{} // an empty string, not NULL
		case a.IsStr:
			p.vals[i] = a.Str
		default:
			p.bufs[i] = strconv.AppendInt(p.bufs[i][:0], a.Int, 10)
			p.vals[i] = p.bufs[i]
		}
	}
	return p.vals
}

// reader sends one execution of the statement in the extended protocol.
func (s *Stmt) reader(ctx context.Context, args []target.Value) *pgconn.ResultReader {
	s.c.cur.SetStmt(&s.sql)
	if s.sd != nil {
		return s.c.pc.ExecStatement(ctx, s.sd, s.args.encode(args), nil, nil)
	}
	// pgbench's -M extended (libpq's PQsendQueryParams): parse, bind and
	// describe the unnamed statement every time.
	return s.c.pc.ExecParams(ctx, s.sql, s.args.encode(args), nil, nil, nil)
}

// render writes the simple protocol's SQL text with args inlined.
func (s *Stmt) render(args []target.Value) (string, error) {
	b, err := s.tpl.Render(s.text[:0], args, false)
	if err != nil {
		return "", err
	}
	s.text = b
	s.c.cur.SetStmt(&s.sql)
	return string(b), nil
}

// Run executes the statement and discards its rows.
func (s *Stmt) Run(ctx context.Context, args []target.Value) (int64, error) {
	if err := s.c.w.Begin(ctx); err != nil {
		return 0, err
	}
	defer s.c.w.End()
	if s.tpl != nil {
		sql, err := s.render(args)
		if err != nil {
			return 0, err
		}
		return runText(ctx, s.c.pc, sql)
	}
	rr := s.reader(context.Background(), args)
	var rows int64
	for rr.NextRow() {
		rows++
	}
	tag, err := rr.Close()
	if err != nil {
		return rows, wrap(ctx, s.c.pc, err)
	}
	if rows == 0 {
		rows = tag.RowsAffected()
	}
	return rows, nil
}

// runText runs sql with the simple protocol, discarding rows, and returns
// the rows returned or else affected. The caller's Watch holds ctx;
// pgconn is given context.Background().
func runText(ctx context.Context, pc *pgconn.PgConn, sql string) (int64, error) {
	mrr := pc.Exec(context.Background(), sql)
	var rows, affected int64
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		for rr.NextRow() {
			rows++
		}
		tag, _ := rr.Close() // its error is also the reader's
		affected += tag.RowsAffected()
	}
	if err := mrr.Close(); err != nil {
		return rows, wrap(ctx, pc, err)
	}
	if rows == 0 {
		rows = affected
	}
	return rows, nil
}

// RunRow executes the statement and keeps the last row it returned.
func (s *Stmt) RunRow(ctx context.Context, args []target.Value) (target.Row, error) {
	s.row.Rows = 0
	s.row.Columns = s.row.Columns[:0]
	if err := s.c.w.Begin(ctx); err != nil {
		return target.Row{}, err
	}
	defer s.c.w.End()
	var err error
	if s.tpl != nil {
		var sql string
		if sql, err = s.render(args); err != nil {
			return target.Row{}, err
		}
		err = textRow(s.c.pc, sql, &s.row)
	} else {
		err = lastRow(s.reader(context.Background(), args), &s.row)
	}
	if err != nil {
		return target.Row{}, wrap(ctx, s.c.pc, err)
	}
	return s.row, nil
}

// lastRow reads one result into row (whose counts the caller has reset),
// copying the last row's values.
func lastRow(rr *pgconn.ResultReader, row *target.Row) error {
	for rr.NextRow() {
		row.Rows++
		vals := rr.Values()
		if cap(row.Values) < len(vals) {
			row.Values = make([][]byte, len(vals))
		}
		row.Values = row.Values[:len(vals)]
		for i, v := range vals {
			if v == nil {
				row.Values[i] = nil
				continue
			}
			row.Values[i] = append(row.Values[i][:0:0], v...)
		}
	}
	row.Returned = row.Rows > 0
	if row.Rows > 0 {
		for _, f := range rr.FieldDescriptions() {
			row.Columns = append(row.Columns, f.Name)
		}
	}
	tag, err := rr.Close()
	if err == nil && row.Rows == 0 {
		row.Rows = tag.RowsAffected()
		row.Columns = row.Columns[:0]
	}
	return err
}

// textRow runs sql with the simple protocol into row, which ends up
// holding the last result. As runText, under the caller's Watch.
func textRow(pc *pgconn.PgConn, sql string, row *target.Row) error {
	mrr := pc.Exec(context.Background(), sql)
	row.Sets = row.Sets[:0]
	for mrr.NextResult() {
		row.Rows = 0
		row.Columns = row.Columns[:0]
		_ = lastRow(mrr.ResultReader(), row) // its error is also Close's
		if len(row.Columns) > 0 {
			// The sets' slices are reused from call to call; lastRow
			// copies each value into a slice of its own, which they keep.
			n := len(row.Sets)
			if n < cap(row.Sets) {
				row.Sets = row.Sets[:n+1]
			} else {
				row.Sets = append(row.Sets, target.RowSet{})
			}
			set := &row.Sets[n]
			set.Columns = append(set.Columns[:0], row.Columns...)
			set.Values = append(set.Values[:0], row.Values...)
		}
	}
	return mrr.Close()
}

// Close deallocates a prepared statement.
func (s *Stmt) Close() error {
	if s.sd == nil || s.c.pc.IsClosed() {
		return nil // a lost connection takes its statements with it
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	err := s.c.pc.Deallocate(ctx, s.sd.Name)
	s.sd = nil
	return err
}

// BulkInsert loads rows with COPY ... FROM STDIN in text format.
func (c *Conn) BulkInsert(ctx context.Context, table string, columns []string, rows target.RowSource) (int64, error) {
	c.cur.Set("COPY " + table)
	r := &copyReader{rows: rows, vals: make([]target.Value, len(columns))}
	sql := fmt.Sprintf("COPY %s (%s) FROM STDIN", table, strings.Join(columns, ", "))
	tag, err := c.pc.CopyFrom(ctx, r, sql)
	if err != nil {
		return 0, fmt.Errorf("copy into %s: %w", table, wrap(ctx, c.pc, err))
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

// tlsState says whether pc's connection is encrypted, for the result's
// driver line.
func tlsState(pc *pgconn.PgConn) string {
	if tc, ok := pc.Conn().(*tls.Conn); ok {
		return tls.VersionName(tc.ConnectionState().Version)
	}
	return "no TLS"
}

// Package mysql is the MySQL and MariaDB target. It uses
// go-sql-driver/mysql's connections directly, without database/sql: no pool,
// no per-call locks, and no per-query context watcher goroutine hand-off.
package mysql

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	my "github.com/go-sql-driver/mysql"

	"github.com/dbmark/dbmark/internal/target"
)

// PS modes are sysbench's --db-ps-mode values.
const (
	PSAuto    = "auto"    // server-side prepared statements
	PSDisable = "disable" // arguments inlined into text queries
)

// Register adds the mysql schemes to r.
func Register(r *target.Registry) {
	r.Register(Open, "mysql", "mariadb")
}

// Target is a MySQL or MariaDB server.
type Target struct {
	cfg      *my.Config
	psMode   string
	redacted string
	pollIO   bool
	// driverOnly keeps statements on the driver's own path, as with TLS
	// or compression; tests use it to cover that path.
	driverOnly bool
}

// Open builds the driver configuration from a URL such as
// mysql://user:pw@host:3306/db or mysql://user@localhost/db?socket=/run/mysqld/mysqld.sock.
// Other query parameters are passed to the driver as DSN parameters.
func Open(_ context.Context, u *url.URL, opts target.Options) (target.Target, error) {
	mode := opts.PSMode
	if mode == "" {
		mode = PSAuto
	}
	if mode != PSAuto && mode != PSDisable {
		return nil, fmt.Errorf("--db-ps-mode %q: must be auto or disable", mode)
	}
	red := target.Redact(u.String())
	cfg := my.NewConfig()
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if strings.Contains(cfg.DBName, "/") {
		return nil, fmt.Errorf("%w %q: the path must be a single database name", target.ErrBadURL, red)
	}
	q := u.Query()
	if sock := q.Get("socket"); sock != "" {
		cfg.Net, cfg.Addr = "unix", sock
		q.Del("socket")
	} else {
		host := u.Hostname()
		if host == "" {
			host = "127.0.0.1"
		}
		port := u.Port()
		if port == "" {
			port = "3306"
		}
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, port)
	}
	if len(q) > 0 {
		// Let the driver parse its own parameters (tls, charset, timeouts...).
		extra, err := my.ParseDSN("/?" + q.Encode())
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", target.ErrBadURL, red, err)
		}
		extra.User, extra.Passwd, extra.Net, extra.Addr, extra.DBName = cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName
		cfg = extra
	}
	// The driver logs failed reads itself; an interrupted read at the end of
	// a run is expected, and real errors reach the caller anyway.
	cfg.Logger = my.Logger(discard{})
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	// Measured (bench/README.md): waiting in the worker's own thread
	// (target.DialBlocking) costs less CPU per statement than Go's poller
	// over both TCP and the unix socket, up to blockingPerCPU connections
	// per core.
	poll := opts.NetIO == target.NetIOPoll ||
		opts.NetIO == "" && opts.Conns > blockingPerCPU*runtime.NumCPU()
	return &Target{cfg: cfg, psMode: mode, redacted: red, pollIO: poll}, nil
}

// blockingPerCPU is how many connections per core wait in their own
// threads unless --net-io says otherwise. A goroutine in a raw wait counts
// as running, so the scheduler's monitor preempts each one every 10 ms
// with a signal that wakes its thread; beyond 16 connections per core
// those signals and what follows them took a fifth of the client's CPU
// (point selects on 2 cores: 23,000 to 32,000 a second at 48 to 256
// connections, against 30,000 to 44,000 with the poller, whose waits pass
// through the scheduler).
const blockingPerCPU = 16

type discard struct{}

func (discard) Print(...any) {}

func (t *Target) Kind() string                        { return "mysql" }
func (t *Target) Redacted() string                    { return t.redacted }
func (t *Target) Dialect() target.Dialect             { return dialect{} }
func (t *Target) Close() error                        { return nil }
func (t *Target) Classify(err error) target.ErrorInfo { return Classify(err) }

// Connect opens one connection. The dial function keeps the socket so the
// connection can be interrupted when its context ends, and statements can
// run on it directly (wire).
func (t *Target) Connect(ctx context.Context) (target.Conn, error) {
	cfg := t.cfg.Clone()
	var nc net.Conn
	var hs *handshakeConn
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var err error
		if t.pollIO {
			nc, err = target.DialPoll(ctx, network, addr)
		} else {
			// The driver reads and writes only in its caller: in a
			// task, all of the connection's waits can be in its loop.
			nc, err = target.DialTask(ctx, network, addr)
		}
		if err != nil {
			return nil, err
		}
		hs = &handshakeConn{Conn: nc}
		return hs, nil
	}
	connector, err := my.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to MySQL at %s: %w", t.where(), err)
	}
	dc, err := connector.Connect(ctx)
	if err != nil {
		return nil, t.connectError(err)
	}
	c := &Conn{dc: dc.(mysqlConn), psMode: t.psMode}
	c.watch.Interrupt = target.InterruptConn(nc)
	if !t.driverOnly && hs.seen && hs.caps&(capSSL|capCompress) == 0 {
		// Encrypted or compressed, the bytes on the socket are the
		// driver's to make; otherwise statements go on the wire.
		c.w = newWire(nc, hs.caps, hs.ext)
	}
	return c, nil
}

// handshakeConn notes the capability flags of the driver's handshake
// response, which are the ones the driver and the server agreed on (the
// driver keeps them to itself); the shape of the answers depends on them.
type handshakeConn struct {
	net.Conn
	caps, ext uint32
	seen      bool
}

func (h *handshakeConn) Write(b []byte) (int, error) {
	// The response is the client's first packet (sequence 1): capability
	// flags(4), max packet(4), charset(1), filler(19), MariaDB's extended
	// flags(4) or more filler.
	if !h.seen && len(b) >= 4+32 && b[3] == 1 {
		h.caps = binary.LittleEndian.Uint32(b[4:])
		h.ext = binary.LittleEndian.Uint32(b[4+28:])
		h.seen = true
	}
	return h.Conn.Write(b)
}

// HoldsProcessor says whether connections wait for the server in raw
// system calls (target.ProcessorHolder).
func (t *Target) HoldsProcessor() bool { return !t.pollIO }

// Multiplexes: a connection opened in a mux task waits in its loop,
// unless --net-io poll keeps it in Go's poller.
func (t *Target) Multiplexes() bool { return !t.pollIO }

// LoopsByDefault: no. MariaDB serves each connection from a thread of its
// own, and a client thread per connection pairs with it: the scheduler
// keeps each pair on one CPU, where loops serving several connections
// wake server threads on the other CPU (1.2 to 5.5 times the rescheduling
// interrupts per transaction, and a lower rate in most runs; see
// bench/README.md). An explicit --jobs still serves them from loops.
func (t *Target) LoopsByDefault() bool { return false }

func (t *Target) netIO() string {
	if t.pollIO {
		return target.NetIOPoll
	}
	return target.NetIOBlocking
}

func (t *Target) where() string {
	if t.cfg.Net == "unix" {
		return "socket " + t.cfg.Addr
	}
	return t.cfg.Addr
}

func (t *Target) connectError(err error) error {
	where := t.where()
	var me *my.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1045, 1698:
			return fmt.Errorf("connect to MySQL at %s: access denied for user %q (check the user and password in --target)", where, t.cfg.User)
		case 1049:
			return fmt.Errorf("connect to MySQL at %s: database %q does not exist (create it with: CREATE DATABASE %s)", where, t.cfg.DBName, t.cfg.DBName)
		case 1040:
			return fmt.Errorf("connect to MySQL at %s: too many connections (raise max_connections or use fewer --threads)", where)
		}
		return fmt.Errorf("connect to MySQL at %s: %s (error %d)", where, me.Message, me.Number)
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("connect to MySQL at %s: connection refused (is the server running and listening there?)", where)
	}
	return fmt.Errorf("connect to MySQL at %s: %v", where, err)
}

// Inspect reports the server's version and global variables.
func (t *Target) Inspect(ctx context.Context) (target.Engine, error) {
	c, err := t.Connect(ctx)
	if err != nil {
		return target.Engine{}, err
	}
	defer c.Close()
	conn := c.(*Conn)
	path := "statements through the driver"
	if conn.w != nil {
		path = "statements on its socket"
	}
	e := target.Engine{Name: "MySQL", Settings: map[string]string{}, Driver: "go-sql-driver/mysql, " + path + ", --db-ps-mode " + t.psMode + ", " + t.netIO() + " reads"}
	rows, err := conn.dc.Query("SHOW GLOBAL VARIABLES", nil)
	if err != nil {
		return e, fmt.Errorf("inspect MySQL: SHOW GLOBAL VARIABLES: %w", err)
	}
	dest := make([]driver.Value, 2)
	for {
		if err := rows.Next(dest); err != nil {
			if err != io.EOF {
				rows.Close()
				return e, fmt.Errorf("inspect MySQL: SHOW GLOBAL VARIABLES: %w", err)
			}
			break
		}
		e.Settings[text(dest[0])] = text(dest[1])
	}
	rows.Close()
	e.Version = e.Settings["version"]
	e.DataDir = e.Settings["datadir"]
	if strings.Contains(strings.ToLower(e.Version+e.Settings["version_comment"]), "mariadb") {
		e.Name = "MariaDB"
	}
	return e, nil
}

func text(v driver.Value) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

// Classify maps MySQL errors to classes by error number, like sysbench's
// --mysql-ignore-errors defaults and its reconnect rules.
func Classify(err error) target.ErrorInfo {
	if err == nil {
		return target.ErrorInfo{}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return target.ErrorInfo{Class: target.Canceled, Code: "canceled"}
	}
	var me *my.MySQLError
	if errors.As(err, &me) {
		code := strconv.Itoa(int(me.Number))
		switch me.Number {
		case 1213, 1205, 1020:
			return target.ErrorInfo{Class: target.Retryable, Code: code}
		case 1053, 1927, 2006, 2013:
			return target.ErrorInfo{Class: target.Reconnect, Code: code}
		}
		return target.ErrorInfo{Class: target.Fatal, Code: code}
	}
	var netErr net.Error
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, my.ErrInvalidConn) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &netErr) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return target.ErrorInfo{Class: target.Reconnect, Code: "connection_lost"}
	}
	return target.ErrorInfo{Class: target.Fatal, Code: "client"}
}

type dialect struct{}

func (dialect) Placeholder(int) string { return "?" }
func (dialect) AutoIncrementPK(col string) string {
	return col + " INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY"
}
func (dialect) IntPK(col string) string { return col + " INTEGER NOT NULL PRIMARY KEY" }
func (dialect) Begin(bool) string       { return "BEGIN" }

// mysqlConn is what the driver's connection offers beyond driver.Conn: the
// pre-context Exec and Query, which send text queries directly.
type mysqlConn interface {
	driver.Conn
	driver.Execer  //nolint:staticcheck // the context variants start a watcher per call
	driver.Queryer //nolint:staticcheck
}

// Conn is one MySQL connection.
type Conn struct {
	dc     mysqlConn
	w      *wire // statements; nil: through the driver (TLS, compression)
	psMode string
	watch  target.CancelWatch
	closed bool
	res    results // RunRow's and QueryRow's reused result
}

func (c *Conn) wrap(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// start begins a command: the connection is watched for ctx and, on the
// wire, the command waits in ctx's task if it has one.
func (c *Conn) start(ctx context.Context) error {
	if err := c.watch.Watch(ctx); err != nil {
		return err
	}
	if c.w != nil {
		if c.w.broken != nil {
			return c.w.broken
		}
		c.w.sock.Use(ctx)
	}
	return nil
}

// keepLast resets c.res for a command whose last row is kept.
func (c *Conn) keepLast() *results {
	c.res.rows, c.res.affected, c.res.keep, c.res.first = 0, 0, true, false
	c.res.row.Rows = 0
	c.res.row.Columns = c.res.row.Columns[:0]
	return &c.res
}

// Exec runs a text query and discards its result.
func (c *Conn) Exec(ctx context.Context, sql string) error {
	if err := c.start(ctx); err != nil {
		return err
	}
	if c.w != nil {
		var res results
		return c.wrap(ctx, query(c.w, sql, &res))
	}
	if returnsRows(sql) {
		_, err := c.query(sql, nil)
		return c.wrap(ctx, err)
	}
	_, err := c.dc.Exec(sql, nil)
	return c.wrap(ctx, err)
}

// QueryRow returns the first column of the first row as text.
func (c *Conn) QueryRow(ctx context.Context, sql string) (string, bool, error) {
	if err := c.start(ctx); err != nil {
		return "", false, err
	}
	if c.w != nil {
		res := c.keepLast()
		res.first = true
		if err := query(c.w, sql, res); err != nil {
			return "", false, c.wrap(ctx, err)
		}
		if res.rows == 0 || len(res.row.Values) == 0 {
			return "", false, nil
		}
		return string(res.row.Values[0]), true, nil
	}
	rows, err := c.dc.Query(sql, nil)
	if err != nil {
		return "", false, c.wrap(ctx, err)
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(dest); err != nil {
		if err == io.EOF {
			return "", false, nil
		}
		return "", false, c.wrap(ctx, err)
	}
	if len(dest) == 0 {
		return "", false, nil
	}
	return text(dest[0]), true, nil
}

// query runs a text query through the driver and counts its rows.
func (c *Conn) query(sql string, args []driver.Value) (int64, error) {
	rows, err := c.dc.Query(sql, args)
	if err != nil {
		return 0, err
	}
	var dest []driver.Value
	return drain(rows, &dest)
}

// drain reads and discards rows, reusing *dest for the values.
func drain(rows driver.Rows, dest *[]driver.Value) (int64, error) {
	n := len(rows.Columns())
	if cap(*dest) < n {
		*dest = make([]driver.Value, n)
	}
	d := (*dest)[:n]
	var count int64
	for {
		err := rows.Next(d)
		if err == io.EOF {
			break
		}
		if err != nil {
			rows.Close()
			return count, err
		}
		count++
	}
	return count, rows.Close()
}

// returnsRows says whether a statement produces a result set.
func returnsRows(sql string) bool {
	s := strings.TrimLeft(sql, " \t\r\n(")
	if len(s) > 8 {
		s = s[:8]
	}
	s = strings.ToUpper(s)
	for _, p := range []string{"SELECT", "SHOW", "WITH", "EXPLAIN", "DESC", "VALUES", "TABLE"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Prepare readies sql (with ? placeholders): on the server with
// --db-ps-mode auto, as a client-side template with disable.
func (c *Conn) Prepare(ctx context.Context, sql string) (target.Stmt, error) {
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	s := &Stmt{c: c, rows: returnsRows(sql)}
	if c.psMode == PSDisable {
		tpl, err := target.ParseTemplate(sql)
		if err != nil {
			return nil, err
		}
		s.tpl = tpl
		return s, nil
	}
	if c.w != nil {
		ws, err := c.w.prepare(sql)
		if err != nil {
			return nil, fmt.Errorf("prepare %q: %w", sql, c.wrap(ctx, err))
		}
		s.ws = ws
		return s, nil
	}
	ds, err := c.dc.Prepare(sql)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", sql, c.wrap(ctx, err))
	}
	s.ds = ds
	return s, nil
}

// Close closes the connection.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.watch.Stop()
	return c.dc.Close()
}

// Stmt is a statement on one Conn.
type Stmt struct {
	c    *Conn
	rows bool
	ws   *stmt            // server-side prepared, on the wire
	ds   driver.Stmt      // server-side prepared, through the driver
	tpl  *target.Template // client-side
	args []driver.Value
	dest []driver.Value
	text []byte
	row  target.Row
}

// Run executes the statement and discards its rows.
func (s *Stmt) Run(ctx context.Context, args []target.Value) (int64, error) {
	if err := s.c.start(ctx); err != nil {
		return 0, err
	}
	if w := s.c.w; w != nil {
		var res results
		err := s.runWire(w, args, &res)
		return res.rows + res.affected, s.c.wrap(ctx, err)
	}
	n, err := s.run(args)
	return n, s.c.wrap(ctx, err)
}

func (s *Stmt) runWire(w *wire, args []target.Value, res *results) error {
	if s.tpl != nil {
		b, err := s.tpl.Render(s.text[:0], args, true)
		if err != nil {
			return err
		}
		s.text = b
		return query(w, b, res)
	}
	return w.execute(s.ws, args, res)
}

// RunRow executes the statement and keeps the last row it returned.
func (s *Stmt) RunRow(ctx context.Context, args []target.Value) (target.Row, error) {
	if err := s.c.start(ctx); err != nil {
		return target.Row{}, err
	}
	if w := s.c.w; w != nil {
		if err := s.runWire(w, args, s.c.keepLast()); err != nil {
			return target.Row{}, s.c.wrap(ctx, err)
		}
		return s.c.res.row, nil
	}
	s.row.Columns = s.row.Columns[:0]
	if !s.rows {
		n, err := s.run(args)
		s.row.Rows = n
		return s.row, s.c.wrap(ctx, err)
	}
	var rows driver.Rows
	var err error
	if s.tpl != nil {
		b, rerr := s.tpl.Render(s.text[:0], args, true)
		if rerr != nil {
			return target.Row{}, rerr
		}
		s.text = b
		rows, err = s.c.dc.Query(string(b), nil)
	} else {
		rows, err = s.ds.Query(s.bind(args)) //nolint:staticcheck // see mysqlConn
	}
	if err == nil {
		err = target.ReadLastRow(rows, &s.row, &s.dest)
	}
	if err != nil {
		return target.Row{}, s.c.wrap(ctx, err)
	}
	return s.row, nil
}

// bind converts args into the reused driver arguments.
func (s *Stmt) bind(args []target.Value) []driver.Value {
	if cap(s.args) < len(args) {
		s.args = make([]driver.Value, len(args))
	}
	s.args = s.args[:len(args)]
	for i, a := range args {
		switch {
		case a.IsNull:
			s.args[i] = nil
		case a.IsStr && a.Str == nil:
			s.args[i] = []byte{} // the driver sends a nil []byte as NULL
		case a.IsStr:
			s.args[i] = a.Str
		default:
			s.args[i] = a.Int
		}
	}
	return s.args
}

// run executes the statement through the driver.
func (s *Stmt) run(args []target.Value) (int64, error) {
	if s.tpl != nil {
		b, err := s.tpl.Render(s.text[:0], args, true)
		if err != nil {
			return 0, err
		}
		s.text = b
		q := string(b)
		if s.rows {
			rows, err := s.c.dc.Query(q, nil)
			if err != nil {
				return 0, err
			}
			return drain(rows, &s.dest)
		}
		res, err := s.c.dc.Exec(q, nil)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	s.bind(args)
	if s.rows {
		rows, err := s.ds.Query(s.args) //nolint:staticcheck // see mysqlConn
		if err != nil {
			return 0, err
		}
		return drain(rows, &s.dest)
	}
	res, err := s.ds.Exec(s.args) //nolint:staticcheck // see mysqlConn
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Close releases a server-side statement.
func (s *Stmt) Close() error {
	if s.c.closed {
		return nil
	}
	if s.ws != nil {
		ws := s.ws
		s.ws = nil
		if s.c.w.broken != nil {
			return nil
		}
		return s.c.w.closeStmt(ws)
	}
	if s.ds == nil {
		return nil
	}
	err := s.ds.Close()
	s.ds = nil
	return err
}

// bulkBytes bounds one multi-row INSERT, well under the default max_allowed_packet.
const bulkBytes = 1 << 20

// BulkInsert loads rows with multi-row INSERT statements.
func (c *Conn) BulkInsert(ctx context.Context, table string, columns []string, rows target.RowSource) (int64, error) {
	if err := c.start(ctx); err != nil {
		return 0, err
	}
	head := fmt.Sprintf("INSERT INTO %s (%s) VALUES ", table, strings.Join(columns, ", "))
	vals := make([]target.Value, len(columns))
	buf := make([]byte, 0, bulkBytes+4096)
	var total int64
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		var n int64
		var err error
		if c.w != nil {
			var res results
			err = query(c.w, buf, &res)
			n = res.affected
		} else {
			var res driver.Result
			if res, err = c.dc.Exec(string(buf), nil); err == nil {
				n, _ = res.RowsAffected()
			}
		}
		buf = buf[:0]
		if err != nil {
			return fmt.Errorf("insert into %s: %w", table, c.wrap(ctx, err))
		}
		total += n
		return nil
	}
	for rows.Next(vals) {
		if len(buf) == 0 {
			buf = append(buf, head...)
		} else {
			buf = append(buf, ',')
		}
		buf = append(buf, '(')
		for i, v := range vals {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = target.AppendLiteral(buf, v, true)
		}
		buf = append(buf, ')')
		if len(buf) >= bulkBytes {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	if err := flush(); err != nil {
		return total, err
	}
	return total, nil
}

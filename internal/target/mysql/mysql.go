// Package mysql is the MySQL and MariaDB target. Each connection is one
// go-sql-driver/mysql connection (its driver.Conn, without database/sql's
// pool), used by the one goroutine of the worker that holds it; every
// statement, over TCP, a unix socket or TLS, goes through the driver.
package mysql

import (
	"context"
	"crypto/tls"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	my "github.com/go-sql-driver/mysql"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/transport"
)

// PS modes are sysbench's --db-ps-mode values.
const (
	PSAuto    = "auto"    // server-side prepared statements
	PSDisable = "disable" // arguments inlined into text queries
)

// DefaultConnectTimeout bounds connecting, the handshake and
// authentication included, unless the URL's ?timeout= says otherwise.
const DefaultConnectTimeout = 10 * time.Second

// Register adds the mysql schemes to r.
func Register(r *target.Registry) {
	r.Register(Open, "mysql", "mariadb")
	r.RegisterDurability("mysql", Unsafe)
}

// Target is a MySQL or MariaDB server.
type Target struct {
	cfg       *my.Config
	connector driver.Connector
	psMode    string
	transport string
	// autoTransport: transport is the engine's choice (--transport auto).
	autoTransport bool
	// hold is auto's blocking connections' (nil otherwise).
	hold     *transport.Hold
	redacted string
}

// Open builds the driver configuration from a URL such as
// mysql://user:pw@host:3306/db or mysql://user@localhost/db?socket=/run/mysqld/mysqld.sock.
// Other query parameters are passed to the driver as DSN parameters
// (tls, timeout, charset...).
func Open(_ context.Context, u *url.URL, opts target.Options) (target.Target, error) {
	mode := opts.PSMode
	if mode == "" {
		mode = PSAuto
	}
	if mode != PSAuto && mode != PSDisable {
		return nil, fmt.Errorf("--db-ps-mode %q: must be auto or disable", mode)
	}
	if err := transport.Check(opts.Transport); err != nil {
		return nil, err
	}
	red := target.Redact(u.String())
	q := u.Query()
	network, addr := "unix", q.Get("socket")
	q.Del("socket")
	if addr == "" {
		host := u.Hostname()
		if host == "" {
			host = "127.0.0.1"
		}
		port := u.Port()
		if port == "" {
			port = "3306"
		}
		network, addr = "tcp", net.JoinHostPort(host, port)
	}
	// The driver takes a negative timeout, and dbmark then waits by its
	// default: refused instead, as one that is not a duration.
	for _, k := range []string{"timeout", "readTimeout", "writeTimeout"} {
		v := q.Get(k)
		if v == "" {
			continue
		}
		if d, err := time.ParseDuration(v); err != nil || d < 0 {
			return nil, fmt.Errorf("%w %q: %s=%q: must be a duration of 0 or more, such as 5s", target.ErrBadURL, red, k, v)
		}
	}
	// The driver parses its own parameters (tls, timeout, charset...);
	// given the address, it checks a TLS certificate against its host.
	dsn := network + "(" + addr + ")/"
	if len(q) > 0 {
		dsn += "?" + q.Encode()
	}
	cfg, err := my.ParseDSN(dsn)
	if err != nil {
		// The driver quotes values raw: quoted again, a newline in one
		// cannot split the message.
		return nil, fmt.Errorf("%w %q: %q", target.ErrBadURL, red, err.Error())
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if strings.Contains(cfg.DBName, "/") {
		return nil, fmt.Errorf("%w %q: the path must be a single database name", target.ErrBadURL, red)
	}
	// Values are read back as the server's text (RunRow): dates stay
	// text rather than becoming time.Time.
	cfg.ParseTime = false
	// The driver logs failed reads itself; a read ended by cancellation is
	// expected at the end of a run, and real errors reach the caller.
	cfg.Logger = my.Logger(discard{})
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultConnectTimeout
	}
	// The engine's choice: on MariaDB and MySQL, bench/probe.sh's A/B on
	// a quiet machine found the blocking transport cheaper than Go's in
	// every round over TCP, the socket and TLS to a server on the same
	// machine (client CPU per transaction 0.63-0.70 of Go's, the rate
	// 12-22% higher), and costlier (1.1-1.5x, the rate level) where each
	// statement waits on the server, as it does for a remote one; there
	// the poller transport costs least. Point selects over TCP on 2
	// processors: at 16 clients blocking ahead in every round; at 32 the
	// two level, and blocking at 1.6-1.7x the poller's CPU where
	// statements wait. So blocking for up to 8 clients a processor.
	tr, auto := opts.Transport, transport.IsAuto(opts.Transport)
	if auto {
		tr = transport.Polled()
		if transport.Local(network, addr) && transport.Few(opts.Clients, 8) {
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
	cfg.DialFunc = dialer(transport.Wrap(tr, (&net.Dialer{}).DialContext, hold))
	connector, err := my.NewConnector(cfg)
	if err != nil {
		// The driver quotes values raw: quoted again, a newline in one
		// cannot split the message.
		return nil, fmt.Errorf("%w %q: %q", target.ErrBadURL, red, err.Error())
	}
	return &Target{cfg: cfg, connector: connector, psMode: mode, transport: tr, autoTransport: auto, hold: hold, redacted: red}, nil
}

type discard struct{}

func (discard) Print(...any) {}

func (t *Target) Kind() string                        { return "mysql" }
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

// driverConn is what this package needs of the driver's connection.
type driverConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
}

// Connect opens one connection. Dialing, the handshake and authentication
// together take at most the configured timeout: the driver bounds only
// the dial by it, so the context passed to it is bounded too, and a
// server that accepts and never answers ends the wait.
func (t *Target) Connect(ctx context.Context) (target.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	var raw net.Conn
	dc, err := t.connect(context.WithValue(cctx, dialedKey{}, &raw))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if cctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, fmt.Errorf("connect to MySQL at %s: no answer within %v (is the server up and is it MySQL? ?timeout= in --target waits longer)", t.where(), t.cfg.Timeout)
		}
		return nil, t.connectError(err)
	}
	c, ok := dc.(driverConn)
	if !ok {
		dc.Close()
		return nil, fmt.Errorf("connect to MySQL at %s: the driver's connection (%T) lacks the context methods", t.where(), dc)
	}
	if raw == nil {
		dc.Close()
		return nil, fmt.Errorf("connect to MySQL at %s: the driver did not dial through the target's dialer", t.where())
	}
	conn := &Conn{dc: c, raw: raw, psMode: t.psMode}
	conn.w.Interrupt = func() { raw.Close() }
	return conn, nil
}

// dialedKey carries, in the context given to the driver's Connect, where
// dial puts the connection it made: Conn.watch ends a statement by
// closing it.
type dialedKey struct{}

// dialer is the driver's dialer: dial (a plain net.Dialer, the driver's
// own default, on the run's transport) that also hands the connection to
// Connect.
func dialer(dial transport.DialFunc) transport.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err == nil {
			if p, ok := ctx.Value(dialedKey{}).(*net.Conn); ok {
				*p = nc
			}
		}
		return nc, err
	}
}

// connect runs the driver's connect. A reply the driver cannot parse can
// make it index past the end of a packet; that is an answer from
// something other than MySQL, not a bug to crash on.
func (t *Target) connect(ctx context.Context) (dc driver.Conn, err error) {
	defer func() {
		if r := recover(); r != nil {
			dc, err = nil, errNotMySQL
		}
	}()
	return t.connector.Connect(ctx)
}

var errNotMySQL = errors.New("malformed handshake")

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
	if errors.Is(err, my.ErrNoTLS) {
		return fmt.Errorf("connect to MySQL at %s: the server does not offer TLS (use tls=preferred in --target, or no tls)", where)
	}
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return fmt.Errorf("connect to MySQL at %s: %v (tls=skip-verify in --target encrypts without checking it)", where, err)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return fmt.Errorf("connect to MySQL at %s: %v", where, op.Err)
	}
	if notMySQL(err) {
		return fmt.Errorf("connect to MySQL at %s: the server at %s did not answer as MySQL does (is it another service?)", where, t.cfg.Addr)
	}
	return fmt.Errorf("connect to MySQL at %s: %v", where, err)
}

// notMySQL says whether a connect error means the peer, once connected,
// did not speak MySQL's protocol: it closed without a greeting, or sent
// packets out of sequence, malformed or of an unknown protocol version.
func notMySQL(err error) bool {
	for _, e := range []error{errNotMySQL, my.ErrInvalidConn, my.ErrPktSync, my.ErrPktSyncMul, my.ErrMalformPkt, my.ErrOldProtocol, io.EOF, io.ErrUnexpectedEOF} {
		if errors.Is(err, e) {
			return true
		}
	}
	return strings.Contains(err.Error(), "protocol version")
}

// Inspect reports the server's version and global variables.
func (t *Target) Inspect(ctx context.Context) (target.Engine, error) {
	c, err := t.conn(ctx)
	if err != nil {
		return target.Engine{}, err
	}
	defer c.Close()
	e := target.Engine{Name: "MySQL", Settings: map[string]string{}, Driver: "go-sql-driver/mysql, one connection per worker, --db-ps-mode " + t.psMode}
	if t.cfg.TLS != nil {
		e.Driver += ", TLS"
	}
	e.Driver += ", " + transport.Describe(t.transport)
	if t.autoTransport {
		e.Driver += " (auto)"
	}
	rows, err := c.rows(ctx, "SHOW GLOBAL VARIABLES")
	if err != nil {
		return e, fmt.Errorf("inspect MySQL: SHOW GLOBAL VARIABLES: %w", err)
	}
	for _, r := range rows {
		e.Settings[r[0]] = r[1]
	}
	e.Version = e.Settings["version"]
	e.DataDir = e.Settings["datadir"]
	if strings.Contains(strings.ToLower(e.Version+e.Settings["version_comment"]), "mariadb") {
		e.Name = "MariaDB"
	}
	return e, nil
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
	// The driver closes its connection on each of these: the answer was
	// lost or made no sense, and where the protocol stands is unknown.
	var netErr net.Error
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, my.ErrInvalidConn) || errors.Is(err, my.ErrPktSync) ||
		errors.Is(err, my.ErrPktSyncMul) || errors.Is(err, my.ErrMalformPkt) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &netErr) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return target.ErrorInfo{Class: target.Reconnect, Code: "connection_lost"}
	}
	return target.ErrorInfo{Class: target.Fatal, Code: "client"}
}

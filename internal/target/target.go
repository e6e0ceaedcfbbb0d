// Package target defines where a benchmark's load goes: a database engine
// reached through a URL, one connection per worker, with the engine's
// dialect, its facts and a classification of its errors.
package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dbmark/dbmark/internal/errclass"
	"github.com/dbmark/dbmark/internal/secret"
	"github.com/dbmark/dbmark/internal/target/transport"
)

// Target is one database endpoint. It is safe for concurrent use; the Conns
// it hands out are not.
type Target interface {
	// Kind names the engine ("postgres", "mysql", "sqlite") in results and
	// messages. Nothing outside the engine packages branches on it: what
	// differs between engines is asked of the Dialect.
	Kind() string
	// Connect opens one connection. The runner gives each worker its own.
	Connect(ctx context.Context) (Conn, error)
	// Inspect reports the engine's version and every setting.
	Inspect(ctx context.Context) (Engine, error)
	// Dialect is the engine's SQL vocabulary: what workloads ask for
	// instead of testing Kind.
	Dialect() Dialect
	// Classify maps an error returned by a Conn to its class and code.
	Classify(err error) ErrorInfo
	// Redacted is the URL without its password, safe to print and store.
	Redacted() string
	Close() error
}

// Conn is one connection, used by one goroutine at a time.
type Conn interface {
	// Exec runs SQL text with no parameters and discards any rows.
	Exec(ctx context.Context, sql string) error
	// ExecRows runs SQL text as Exec does, on the same protocol, and
	// returns how many rows it returned, or else affected: a workload
	// that sends its reads as text tells one that found nothing by it.
	ExecRows(ctx context.Context, sql string) (int64, error)
	// Prepare readies a parameterised statement (placeholders written as
	// the dialect's Placeholder). Whether it is prepared on the server
	// depends on the target's mode; the caller does not need to know.
	Prepare(ctx context.Context, sql string) (Stmt, error)
	// QueryRow runs SQL text and returns the first column of the first row
	// as text ("" and false when there is no row).
	QueryRow(ctx context.Context, sql string) (string, bool, error)
	// BulkInsert loads rows through the engine's fastest path (COPY,
	// multi-row INSERT, one large transaction) and returns the rows loaded.
	BulkInsert(ctx context.Context, table string, columns []string, rows RowSource) (int64, error)
	// Query runs one statement of SQL text as a client program would send
	// it and counts what it returns as the rows stream by, keeping none of
	// them: a query of any size runs in the memory of one row.
	Query(ctx context.Context, sql string, o QueryOptions) (Tally, error)
	// SetQueryTimeout makes the engine itself end any later statement of
	// the connection (at least those Query runs) that runs longer than d
	// (0: no limit), so a runaway
	// query is stopped on the server, not only abandoned by the client:
	// PostgreSQL's statement_timeout, MariaDB's max_statement_time (MySQL's
	// max_execution_time, for SELECTs), SQLite's progress handler.
	SetQueryTimeout(ctx context.Context, d time.Duration) error
	// Close releases the connection; it is safe to call twice.
	Close() error
}

// TxStater is a Conn that knows whether it is inside a transaction block
// the session opened and has not ended (PostgreSQL's transaction status).
type TxStater interface {
	InTransaction() bool
}

// Stmt is a statement bound to one Conn.
type Stmt interface {
	// Run executes the statement with args, reads and discards the rows,
	// and returns how many rows were returned or affected.
	Run(ctx context.Context, args []Value) (int64, error)
	Close() error
}

// Value is one statement argument. It is a plain struct rather than an
// interface so a worker can reuse its argument slice without allocating.
// IsNull makes it SQL NULL whatever the other fields hold.
type Value struct {
	Int    int64
	Str    []byte
	IsStr  bool
	IsNull bool
}

// IntVal, StrVal and NullVal build Values.
func IntVal(v int64) Value      { return Value{Int: v} }
func StrVal(b []byte) Value     { return Value{Str: b, IsStr: true} }
func NullVal() Value            { return Value{IsNull: true} }
func (v *Value) SetInt(i int64) { *v = Value{Int: i} }
func (v *Value) SetNull()       { *v = Value{IsNull: true} }

// SetStr points v at b without copying; b must stay unchanged until the
// statement has run.
func (v *Value) SetStr(b []byte) { *v = Value{Str: b, IsStr: true} }

// RowSource yields rows for BulkInsert. Next fills dst (len(columns) values)
// and returns false when there are no more rows.
type RowSource interface {
	Next(dst []Value) bool
}

// Engine is what a target knows about the server it talks to.
type Engine struct {
	Name     string            `json:"name"`    // "PostgreSQL", "MariaDB", "MySQL", "SQLite"
	Version  string            `json:"version"` // the server's own version string
	Settings map[string]string `json:"settings,omitempty"`
	DataDir  string            `json:"data_dir,omitempty"`
	Driver   string            `json:"driver,omitempty"` // client library and mode
}

// Class is what to do about an error (package errclass, which the runner
// reads without knowing any engine).
type Class = errclass.Class

const (
	Fatal     = errclass.Fatal
	Retryable = errclass.Retryable
	Reconnect = errclass.Reconnect
	Canceled  = errclass.Canceled
)

// ErrorInfo is an error's class and its SQLSTATE or vendor code.
type ErrorInfo = errclass.Info

// Options are the target settings common to every engine, bound from flags.
type Options struct {
	// PGMode is pgbench's -M: simple, extended or prepared.
	PGMode string
	// PSMode is sysbench's --db-ps-mode: auto (server-side prepared
	// statements) or disable.
	PSMode string
	// Transport is how a server engine's connections move their bytes
	// (internal/target/transport): auto (the default, also when empty:
	// the engine chooses), go or blocking.
	Transport string
	// Clients is how many clients the run connects (0: not known), which
	// an engine's auto transport weighs.
	Clients int
	// Hold, when set, is shared by the servers of one run (a cluster's):
	// auto's blocking connections to each are judged together and move to
	// the poller and back together, as the runner that watches them does.
	// Nil: the target's own.
	Hold   *transport.Hold
	Logger *slog.Logger
	// Notices receives the server's notices (PostgreSQL's NOTICE, WARNING,
	// INFO), each in its client library's form (libpq's: "NOTICE:  ..."),
	// from any connection at any time; nil drops them.
	Notices io.Writer
}

// ConnectTimeout bounds a connection's dial, TLS and authentication when
// the target's URL does not set its own bound.
const ConnectTimeout = 10 * time.Second

// Activity is what a connection is running, or ran last: the text of the
// statement, read by the runner to say where a stuck client waits. Set
// and SetStmt are called by the connection's goroutine and Current from
// any other; neither copies the text.
type Activity struct {
	// stmt is the text SetStmt recorded last, nil after a Set: a
	// prepared statement's, switched without the lock (a client of
	// sysbench's point select runs the statements of four tables in
	// turn, and took the lock for three in four). last is its copy that
	// the connection's goroutine alone reads and writes, without an
	// atomic load.
	stmt atomic.Pointer[string]
	last *string
	mu   sync.Mutex
	sql  string // Set's, when stmt is nil
}

// Set records sql as the statement being run. The same string again (a
// text at the same address) is a comparison of two words, not the lock;
// only the connection's goroutine writes sql, so it reads it without the
// lock. Texts are not compared: statements of one length that differ late
// (a table's number) would cost more than the lock. The comparison is
// small enough to be inlined; the lock is taken out of line.
func (a *Activity) Set(sql string) {
	if a.last != nil || len(a.sql) != len(sql) || unsafe.StringData(a.sql) != unsafe.StringData(sql) {
		a.set(sql)
	}
}

func (a *Activity) set(sql string) {
	a.mu.Lock()
	a.sql = sql
	a.last = nil
	a.stmt.Store(nil)
	a.mu.Unlock()
}

// SetStmt records *sql as the statement being run: a text that stays
// unchanged at its address while the connection may run it (a prepared
// statement's). It is an atomic store of the address, made only when it
// changes, and no lock.
func (a *Activity) SetStmt(sql *string) {
	if a.last != sql {
		a.last = sql
		a.stmt.Store(sql)
	}
}

// Current returns the statement last Set or SetStmt.
func (a *Activity) Current() string {
	if p := a.stmt.Load(); p != nil {
		return *p
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if p := a.stmt.Load(); p != nil {
		return *p // SetStmt came after the look above
	}
	return a.sql
}

// Reporter is a Conn that says what it is running (an Activity's
// Current). Every engine's connections implement it.
type Reporter interface {
	Current() string
}

// Idler is a Conn that knows whether a transaction is open on it
// (PostgreSQL says so each time it is ready for a query): a client need
// not end one that is not, and a ROLLBACK there would make the server warn.
type Idler interface {
	Idle() bool
}

// ThreadHolder is a Target whose connections wait for the server in a
// system call on the client's own thread (the blocking transport), not in
// Go's network poller: each client then needs a processor of the Go
// scheduler to itself (workload.Load.SyscallBound).
type ThreadHolder interface {
	// HoldsThreads says whether they do for now. The engine may release
	// them to the poller during a run, and hold them again
	// (transport.Hold).
	HoldsThreads() bool
	// HoldSwitches lists those moves, and why.
	HoldSwitches() []transport.Switch
}

// Opener builds a Target from a parsed URL.
type Opener func(ctx context.Context, u *url.URL, opts Options) (Target, error)

// Registry maps URL schemes to engines. Engines add themselves with Register
// from the command's wiring, so the target package imports none of them.
type Registry struct {
	mu      sync.RWMutex
	openers map[string]Opener
	// durability holds each kind's DurabilityRule (durability.go).
	durability map[string]DurabilityRule
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{openers: map[string]Opener{}} }

// Register adds an opener for each scheme.
func (r *Registry) Register(o Opener, schemes ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range schemes {
		r.openers[s] = o
	}
}

// Schemes lists the registered URL schemes.
func (r *Registry) Schemes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.openers))
	for s := range r.openers {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// ErrBadURL marks a target URL that cannot be used.
var ErrBadURL = errors.New("bad target URL")

// Open parses raw and opens the target for its scheme.
func (r *Registry) Open(ctx context.Context, raw string, opts Options) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v (expected postgres://user@host/db, mysql://user:pw@host/db or sqlite:///path)", ErrBadURL, Redact(raw), unwrapURLError(err))
	}
	r.mu.RLock()
	o, ok := r.openers[strings.ToLower(u.Scheme)]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q: %s", ErrBadURL, Redact(raw), unknownScheme(raw, u.Scheme, r.Schemes()))
	}
	t, err := o(ctx, u, opts)
	if err != nil {
		return nil, scrub(err, u, raw)
	}
	return t, nil
}

// scrubbedError is an engine's error with the URL's password taken out.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrub takes the secrets of u, parsed from raw, out of err's text, in the
// forms a URL prints them (user:password@ and secret parameters, escaped or
// not), the words of raw the secret policy hides, and whatever else it
// finds in the text, so an engine that quotes the
// URL or DSN it was given cannot show them.
func scrub(err error, u *url.URL, raw string) error {
	msg := err.Error()
	out := msg
	if u.User != nil {
		if _, has := u.User.Password(); has {
			out = strings.ReplaceAll(out, u.User.String()+"@", url.UserPassword(u.User.Username(), secret.Mask).String()+"@")
		}
	}
	for k, vs := range u.Query() {
		if !secret.Key(k) {
			continue
		}
		for _, v := range vs {
			if v == "" {
				continue
			}
			for _, form := range []string{url.QueryEscape(k) + "=" + url.QueryEscape(v), k + "=" + v, v} {
				out = strings.ReplaceAll(out, form, k+"="+secret.Mask)
			}
		}
	}
	// An engine may quote raw in its own words (a password with an
	// unescaped "@" read as a database's name).
	for _, h := range secret.Hidden(raw) {
		out = strings.ReplaceAll(out, h, secret.Mask)
	}
	out = secret.Text(out)
	if out == msg {
		return err
	}
	return &scrubbedError{msg: out, err: err}
}

// unknownScheme says why raw names no engine: a Go MySQL DSN or a libpq
// keyword string is named as such, with the URL to write instead.
func unknownScheme(raw, scheme string, schemes []string) string {
	switch secret.FormOf(raw) {
	case secret.FormGoDSN:
		return "a Go MySQL DSN is not a target URL: write it as mysql://USER:PASSWORD@HOST:PORT/DB"
	case secret.FormKeywords:
		return "a libpq keyword string is not a target URL: write it as postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=..."
	}
	return fmt.Sprintf("unknown scheme %q (use one of %s)", scheme, strings.Join(schemes, ", "))
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Redact masks the secrets of a target given in any form the engines
// accept: see secret.Target.
func Redact(raw string) string { return secret.Target(raw) }

// Row is what RowStmt.RunRow returns: how many rows the statement returned
// or affected and, when it returned rows, the last row's column names and
// values as text (nil for NULL). The slices are reused by the next call.
type Row struct {
	Rows    int64
	Columns []string
	Values  [][]byte
	// Returned says the rows were returned, not affected: a SELECT of
	// no columns returns rows that have no columns to name.
	Returned bool
	// Sets holds, for SQL text of several statements (ProtocolConn's
	// RunText), the last row of every result that returned rows, in
	// order: what pgbench's \aset stores.
	Sets []RowSet
}

// RowSet is the last row of one result: its column names and values.
type RowSet struct {
	Columns []string
	Values  [][]byte
}

// RowStmt is a Stmt that also hands back its last row, for scripts that
// store results in variables (pgbench's \gset and \aset). Every engine's
// statements implement it.
type RowStmt interface {
	Stmt
	RunRow(ctx context.Context, args []Value) (Row, error)
}

// ProtocolConn is a Conn whose statements can travel by more than one
// protocol, as PostgreSQL's do (pgbench's -M simple, extended or
// prepared). Scripts need it to substitute variables into SQL text in the
// simple protocol and to pipeline statements, as pgbench does. Other
// engines do not implement it.
type ProtocolConn interface {
	Conn
	// Protocol is the mode statements are sent in: "simple", "extended"
	// or "prepared".
	Protocol() string
	// RunText runs SQL text (one or more statements) with the simple
	// protocol and returns its last result as RowStmt.RunRow does.
	RunText(ctx context.Context, sql []byte) (Row, error)
	// StartPipeline enters pipeline mode; until End, the connection is
	// used only through the Pipeline. It fails in the simple protocol.
	StartPipeline(ctx context.Context) (Pipeline, error)
}

// Pipeline sends statements without waiting for their results, which are
// read at End. Statements between two syncs form one implicit
// transaction, unless they manage transactions themselves; after an
// error the server skips the rest of that transaction.
type Pipeline interface {
	// Queue adds one execution of st, a statement of the pipeline's
	// connection, with args. The arguments are encoded at once, so args
	// may be reused.
	Queue(st Stmt, args []Value) error
	// Sync ends an implicit transaction and sends what is queued without
	// waiting for the results.
	Sync() error
	// End syncs, reads every result and leaves pipeline mode, even after
	// an error. A statement's error is a *PipelineError.
	End(ctx context.Context) error
	// Abort leaves pipeline mode after an error of the caller's, without
	// a sync: what was not synced is never committed. It may have to
	// close the connection to do so.
	Abort()
}

// PipelineError is the error of a pipelined statement. Index is its place
// among the statements queued since the pipeline started.
type PipelineError struct {
	Index int
	Err   error
}

func (e *PipelineError) Error() string { return e.Err.Error() }
func (e *PipelineError) Unwrap() error { return e.Err }

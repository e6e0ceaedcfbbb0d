// Package sqlite is the embedded SQLite target, through mattn/go-sqlite3:
// the real C engine with its own unix VFS, so fsync and locking are
// SQLite's, not an emulation's.
package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/transport"
)

// Register adds the sqlite schemes to r.
func Register(r *target.Registry) {
	r.Register(Open, "sqlite", "sqlite3", "file")
	r.RegisterDurability("sqlite", Unsafe)
}

// defaults applied unless the URL sets them: WAL lets readers run beside a
// writer, and a busy timeout makes writers wait instead of failing at once.
var defaults = map[string]string{
	"_journal_mode": "WAL",
	"_busy_timeout": "5000",
}

// Target is one SQLite database file.
type Target struct {
	path     string
	dsn      string
	redacted string
	drv      *sqlite3.SQLiteDriver
	// openMu serialises opening: the driver switches a new file to WAL on
	// open, which needs a lock that concurrent opens would fight over.
	openMu sync.Mutex
	caches caches
	// pragmas run on every connection as it opens (--server-set).
	pragmas connPragmas
}

// Open accepts sqlite:///abs/path.db, sqlite://rel/path.db and file: URLs.
// Query parameters are mattn/go-sqlite3's DSN parameters (_synchronous,
// _busy_timeout, _journal_mode, cache...).
func Open(_ context.Context, u *url.URL, opts target.Options) (target.Target, error) {
	if err := transport.Check(opts.Transport); err != nil {
		return nil, err
	}
	if !transport.IsAuto(opts.Transport) && opts.Transport != transport.Go {
		return nil, fmt.Errorf("--transport %s: SQLite runs inside dbmark, with no connection to a server to carry (drop --transport)", opts.Transport)
	}
	path := u.Host + u.Path
	if u.Scheme == "file" || path == "" {
		path = u.Opaque + path
	}
	if path == "" {
		return nil, fmt.Errorf("%w %q: no file path (use sqlite:///abs/path.db or sqlite://relative.db)", target.ErrBadURL, target.Redact(u.String()))
	}
	q := u.Query()
	for k, v := range defaults {
		if !q.Has(k) {
			q.Set(k, v)
		}
	}
	return &Target{
		path:     path,
		dsn:      "file:" + path + "?" + q.Encode(),
		redacted: target.Redact(u.String()),
		drv:      &sqlite3.SQLiteDriver{},
	}, nil
}

// New opens the database file at path with the default settings.
func New(path string) target.Target {
	t, _ := Open(context.Background(), &url.URL{Scheme: "sqlite", Path: path}, target.Options{})
	return t
}

func (t *Target) Kind() string                        { return "sqlite" }
func (t *Target) Redacted() string                    { return t.redacted }
func (t *Target) Dialect() target.Dialect             { return dialect{} }
func (t *Target) Close() error                        { return nil }
func (t *Target) Classify(err error) target.ErrorInfo { return Classify(err) }

// Path is the database file.
func (t *Target) Path() string { return t.path }

// Connect opens one connection. The directory must exist; the file is
// created on first use.
func (t *Target) Connect(ctx context.Context) (target.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir := filepath.Dir(t.path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("open SQLite database %s: directory %s does not exist (create it first)", t.path, dir)
	}
	t.openMu.Lock()
	dc, db, err := t.openRaw()
	t.openMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("open SQLite database %s: %w", t.path, err)
	}
	c := &Conn{c: dc.(*sqlite3.SQLiteConn), cache: connCache{db: db, set: &t.caches}}
	t.caches.add(c)
	if err := t.pragmas.apply(ctx, c); err != nil {
		c.Close()
		return nil, fmt.Errorf("open SQLite database %s: %w", t.path, err)
	}
	return c, nil
}

// pragmas reported by Inspect: the settings that change SQLite's speed and durability.
var pragmas = []string{
	"journal_mode", "synchronous", "page_size", "cache_size", "mmap_size", "busy_timeout",
	"locking_mode", "temp_store", "wal_autocheckpoint", "auto_vacuum", "foreign_keys",
	"journal_size_limit", "cache_spill", "threads",
}

// Inspect reports the SQLite version, compile options and pragmas.
func (t *Target) Inspect(ctx context.Context) (target.Engine, error) {
	c, err := t.Connect(ctx)
	if err != nil {
		return target.Engine{}, err
	}
	defer c.Close()
	conn := c.(*Conn)
	v, _, err := conn.QueryRow(ctx, "SELECT sqlite_version()")
	if err != nil {
		return target.Engine{}, fmt.Errorf("inspect SQLite: %w", err)
	}
	e := target.Engine{Name: "SQLite", Version: v, Settings: map[string]string{}, DataDir: filepath.Dir(t.path), Driver: "mattn/go-sqlite3 (cgo)"}
	for _, p := range pragmas {
		if val, ok, err := conn.QueryRow(ctx, "PRAGMA "+p); err == nil && ok {
			e.Settings[p] = val
		}
	}
	rows, err := conn.c.QueryContext(ctx, "PRAGMA compile_options", nil)
	if err != nil {
		return e, fmt.Errorf("inspect SQLite: compile options: %w", err)
	}
	defer rows.Close()
	var opts []string
	dest := make([]driver.Value, 1)
	for rows.Next(dest) == nil {
		opts = append(opts, text(dest[0]))
	}
	e.Settings["compile_options"] = strings.Join(opts, ",")
	return e, nil
}

func text(v driver.Value) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

// Classify maps SQLite result codes to classes: BUSY and LOCKED are
// retryable, an interrupt is the run ending.
func Classify(err error) target.ErrorInfo {
	if err == nil {
		return target.ErrorInfo{}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return target.ErrorInfo{Class: target.Canceled, Code: "canceled"}
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrBusy, sqlite3.ErrLocked:
			return target.ErrorInfo{Class: target.Retryable, Code: "SQLITE_BUSY"}
		case sqlite3.ErrInterrupt:
			return target.ErrorInfo{Class: target.Canceled, Code: "SQLITE_INTERRUPT"}
		}
		return target.ErrorInfo{Class: target.Fatal, Code: fmt.Sprintf("SQLITE_%d", int(se.ExtendedCode))}
	}
	return target.ErrorInfo{Class: target.Fatal, Code: "client"}
}

// Conn is one SQLite connection. The context-aware calls let SQLite's own
// interrupt stop a statement (or a busy wait) when the run ends.
type Conn struct {
	c      *sqlite3.SQLiteConn
	cur    target.Activity
	closed bool
	cache  connCache
	dest   []driver.Value // ExecRows' scan buffer
	// timeout is SetQueryTimeout's: Query arms it for each statement.
	timeout time.Duration
}

// Exec runs sql and discards any rows.
func (c *Conn) Exec(ctx context.Context, sql string) error {
	c.cur.Set(sql)
	_, err := c.c.ExecContext(ctx, sql, nil)
	c.cache.poll()
	return err
}

// ExecRows runs sql, as Exec does, and returns the rows it returned or
// else affected.
func (c *Conn) ExecRows(ctx context.Context, sql string) (int64, error) {
	c.cur.Set(sql)
	if !returnsRows(sql) {
		res, err := c.c.ExecContext(ctx, sql, nil)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	rows, err := c.c.QueryContext(ctx, sql, nil)
	if err != nil {
		return 0, err
	}
	return countRows(rows, &c.dest)
}

// QueryRow returns the first column of the first row as text.
func (c *Conn) QueryRow(ctx context.Context, sql string) (string, bool, error) {
	defer c.cache.poll()
	rows, err := c.c.QueryContext(ctx, sql, nil)
	if err != nil {
		return "", false, err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(dest); err != nil {
		if err == io.EOF {
			return "", false, nil
		}
		return "", false, err
	}
	if len(dest) == 0 {
		return "", false, nil
	}
	return text(dest[0]), true, nil
}

// Prepare compiles sql once for the connection.
func (c *Conn) Prepare(ctx context.Context, sql string) (target.Stmt, error) {
	ds, err := c.c.PrepareContext(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", sql, err)
	}
	return &Stmt{c: c, sql: sql, s: ds.(*sqlite3.SQLiteStmt), rows: returnsRows(sql)}, nil
}

// Current is the statement the connection is running, or ran last
// (target.Reporter).
func (c *Conn) Current() string { return c.cur.Current() }

func returnsRows(sql string) bool {
	s := strings.ToUpper(strings.TrimLeft(sql, " \t\r\n("))
	return strings.HasPrefix(s, "SELECT") || strings.HasPrefix(s, "WITH") || strings.HasPrefix(s, "PRAGMA") || strings.HasPrefix(s, "VALUES")
}

// Close closes the connection.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.cache.set.remove(c)
	return c.c.Close()
}

// Stmt is a prepared statement.
type Stmt struct {
	c    *Conn
	sql  string
	s    *sqlite3.SQLiteStmt
	rows bool
	args []driver.NamedValue
	dest []driver.Value
	row  target.Row
}

// RunRow executes the statement and keeps the last row it returned.
func (s *Stmt) RunRow(ctx context.Context, args []target.Value) (target.Row, error) {
	s.c.cur.SetStmt(&s.sql)
	s.bind(args)
	s.row.Columns = s.row.Columns[:0]
	if !s.rows {
		n, err := s.Run(ctx, args)
		s.row.Rows = n
		return s.row, err
	}
	rows, err := s.s.QueryContext(ctx, s.args)
	if err != nil {
		return target.Row{}, err
	}
	err = target.ReadLastRow(rows, &s.row, &s.dest)
	s.c.cache.poll()
	if err != nil {
		return target.Row{}, err
	}
	return s.row, nil
}

// Run executes the statement and discards its rows.
func (s *Stmt) Run(ctx context.Context, args []target.Value) (int64, error) {
	s.c.cur.SetStmt(&s.sql)
	s.bind(args)
	// Between statements the connection hands its page cache counts to
	// the sampler when asked (cachestat.go).
	defer s.c.cache.poll()
	if !s.rows {
		res, err := s.s.ExecContext(ctx, s.args)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	rows, err := s.s.QueryContext(ctx, s.args)
	if err != nil {
		return 0, err
	}
	return countRows(rows, &s.dest)
}

// countRows reads and discards rows, reusing *dest for the values, closes
// them and returns how many there were.
func countRows(rows driver.Rows, dest *[]driver.Value) (int64, error) {
	if n := len(rows.Columns()); cap(*dest) < n {
		*dest = make([]driver.Value, n)
	}
	d := (*dest)[:len(rows.Columns())]
	var n int64
	for {
		err := rows.Next(d)
		if err == io.EOF {
			break
		}
		if err != nil {
			rows.Close()
			return n, err
		}
		n++
	}
	return n, rows.Close()
}

// bind converts args into the reused driver arguments.
func (s *Stmt) bind(args []target.Value) {
	if cap(s.args) < len(args) {
		s.args = make([]driver.NamedValue, len(args))
	}
	s.args = s.args[:len(args)]
	for i, a := range args {
		s.args[i].Ordinal = i + 1
		switch {
		case a.IsNull:
			s.args[i].Value = nil
		case a.IsStr:
			// A string binds as TEXT (a []byte would be a BLOB, which never
			// equals a text literal). The driver copies it, so the string
			// may share a.Str's bytes.
			s.args[i].Value = unsafe.String(unsafe.SliceData(a.Str), len(a.Str))
		default:
			s.args[i].Value = a.Int
		}
	}
}

// Close finalizes the statement.
func (s *Stmt) Close() error { return s.s.Close() }

// bulkTxRows is how many rows go into one transaction while loading.
const bulkTxRows = 100_000

// BulkInsert loads rows through one prepared INSERT in large transactions.
func (c *Conn) BulkInsert(ctx context.Context, table string, columns []string, rows target.RowSource) (int64, error) {
	marks := strings.TrimSuffix(strings.Repeat("?,", len(columns)), ",")
	st, err := c.Prepare(ctx, fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(columns, ", "), marks))
	if err != nil {
		return 0, err
	}
	defer st.Close()
	vals := make([]target.Value, len(columns))
	var total, inTx int64
	for rows.Next(vals) {
		if inTx == 0 {
			if err := c.Exec(ctx, "BEGIN IMMEDIATE"); err != nil {
				return total, fmt.Errorf("insert into %s: %w", table, err)
			}
		}
		if _, err := st.Run(ctx, vals); err != nil {
			_ = c.Exec(context.Background(), "ROLLBACK")
			return total, fmt.Errorf("insert into %s: %w", table, err)
		}
		inTx++
		if inTx == bulkTxRows {
			if err := c.Exec(ctx, "COMMIT"); err != nil {
				return total, fmt.Errorf("insert into %s: commit: %w", table, err)
			}
			total += inTx
			inTx = 0
		}
	}
	if inTx > 0 {
		if err := c.Exec(ctx, "COMMIT"); err != nil {
			return total, fmt.Errorf("insert into %s: commit: %w", table, err)
		}
		total += inTx
	}
	return total, nil
}

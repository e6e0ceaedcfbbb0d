// Package sitestore is the public results site's database: the submitted
// (redacted) documents with the columns that lists, facets and leaderboards
// read, the submission events the rate limits count, and the secret the
// servers share. It is never the user's own results store.
//
// SQLite (a file, the default, for trying the site with no set-up) and
// PostgreSQL (production: several servers share one database and keep no
// state of their own) share the queries and the goose migrations that
// create the schema: one set of templates, filled in with each backend's
// words for the few types they write differently.
package sitestore

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing/fstest"
	"text/template"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
	"github.com/pressly/goose/v3"

	"github.com/dbmark/dbmark/internal/secret"
	"github.com/dbmark/dbmark/internal/store/sqldb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// words are what a migration template may name: the types the backends
// write differently. The rest of every migration is the same text on both.
type words struct {
	Seq    string // an identity primary key, in insertion order
	BigInt string // a 64-bit integer
	Double string // a double-precision float
}

// SQLite's words are those of the first schema written for it: SQLite
// would take BIGINT and DOUBLE PRECISION too, but stores made before the
// migrations were shared declare INTEGER and REAL (only "INTEGER PRIMARY
// KEY" makes seq the rowid), and new ones should not differ from them.
var (
	postgresWords = words{Seq: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", BigInt: "BIGINT", Double: "DOUBLE PRECISION"}
	sqliteWords   = words{Seq: "INTEGER PRIMARY KEY AUTOINCREMENT", BigInt: "INTEGER", Double: "REAL"}
)

// migrationsFor renders the migration templates with w, for goose to read.
// The files keep their names, and so their goose versions.
func migrationsFor(w words) (fs.FS, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	out := fstest.MapFS{}
	for _, name := range names {
		tmpl, err := template.New(path.Base(name)).Option("missingkey=error").ParseFS(migrations, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		var b bytes.Buffer
		if err := tmpl.Execute(&b, w); err != nil {
			return nil, fmt.Errorf("render migration %s: %w", name, err)
		}
		out[path.Base(name)] = &fstest.MapFile{Data: b.Bytes(), Mode: 0o444}
	}
	return out, nil
}

// ErrNotFound is returned (wrapped) when no entry has the id.
var ErrNotFound = errors.New("no such result")

// Facet is a column a list can be filtered and counted by.
type Facet struct {
	Key   string // the column and the URL parameter
	Label string
}

// Facets are the filterable columns, in the order pages show them. Only
// these names ever reach SQL as column names.
var Facets = []Facet{
	{"workload", "workload"}, {"workload_version", "workload version"},
	{"engine", "engine"}, {"engine_version", "engine version"},
	{"cpu_model", "CPU model"}, {"cpus", "CPUs"}, {"memory", "memory"},
	{"disk_model", "storage"}, {"rotational", "rotational"}, {"raid", "RAID"},
	{"fs", "filesystem"}, {"mount_options", "mount options"},
	{"virtualization", "virtualization or cloud"}, {"kernel", "kernel"},
	{"dbmark", "dbmark version"}, {"month", "date"}, {"status", "status"},
	{"client", "client"},
}

func isFacet(k string) bool {
	for _, f := range Facets {
		if f.Key == k {
			return true
		}
	}
	return false
}

// Entry is one submission as stored.
type Entry struct {
	ID           string // the permalink's id
	Hash         string // canonical hash of the runs: equal documents, equal hash
	SubmittedAt  time.Time
	StartedAt    time.Time
	Hidden       bool
	Released     bool   // made by a released dbmark build
	Status       string // "ok", or the worst status of its runs
	Kind         string // "run" or "sweep"
	Runs         int
	Headline     float64
	HeadlineUnit string
	Better       string // "higher" or "lower"
	// Comparable is a key shared by results that did the same work (the
	// workload, its version and the options that change the work).
	Comparable string
	Reproduces string            // the id of the result this one reproduces
	Facets     map[string]string // by Facet.Key ("status" is Status)
	Document   []byte            // the submission as stored; nil in lists
	// Peer is the set of comparable results an ok entry stands among
	// (peers.go); nil for others. Written with the entry, not read back.
	Peer *Peer
}

// Store is the site's database. It is safe for concurrent use, and several
// processes may share one.
type Store struct {
	db *sql.DB // reads, and everything on PostgreSQL
	// w writes. On SQLite it is one connection of its own: writers queue
	// for it in Go instead of in SQLite's busy handler, whose sleeps of up
	// to 100 ms between tries were the submissions' tail. On PostgreSQL it
	// is db.
	w  *sql.DB
	pg bool
	fx *facetIndex
	// peers keeps each set's standing analysis (peers.go).
	peers peerCache
	// puts queue submissions for the SQLite writer (nil on PostgreSQL,
	// whose connections commit side by side); stop ends it, stopped says
	// it has.
	puts          chan *putRequest
	stop, stopped chan struct{}
	closeOnce     sync.Once
}

// Open opens the site database named by dsn (a SQLite file path or
// postgres://...), creating and migrating it as needed.
func Open(ctx context.Context, dsn string, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	lower := strings.ToLower(dsn)
	if strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://") {
		cfg, err := pgx.ParseConfig(dsn) // its errors never show the password
		if err != nil {
			return nil, fmt.Errorf("site store: %w", err)
		}
		db := stdlib.OpenDB(*cfg)
		// Requests beyond the pool wait for a connection rather than open
		// more: the database, not the number of clients, sets the pace.
		db.SetMaxOpenConns(16)
		db.SetMaxIdleConns(16)
		s := &Store{db: db, w: db, pg: true, fx: newFacetIndex(true)}
		if err := s.migratePostgres(ctx, logger); err != nil {
			db.Close()
			return nil, fmt.Errorf("site store: open %s: %w", redactURL(dsn), err)
		}
		return s, nil
	}
	if strings.Contains(dsn, "://") {
		return nil, fmt.Errorf("site store: %q is neither a file nor a postgres:// URL", redactURL(dsn))
	}
	if dsn == "" {
		return nil, errors.New("site store: no file or postgres:// URL given")
	}
	abs, err := filepath.Abs(dsn)
	if err != nil {
		return nil, fmt.Errorf("site store: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("site store: create directory: %w", err)
	}
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	q.Set("_txlock", "immediate") // writers queue on the busy timeout instead of failing
	q.Set("_journal_mode", "WAL")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	db, err := sql.Open("sqlite3", u.String())
	if err != nil {
		return nil, fmt.Errorf("site store: open %s: %w", abs, err)
	}
	// A few readers: WAL lets them run beside the writer, and each
	// connection has a page cache of its own.
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	w, err := sql.Open("sqlite3", u.String())
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("site store: open %s: %w", abs, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	s := &Store{db: db, w: w, fx: newFacetIndex(false)}
	if err := s.migrate(ctx, goose.DialectSQLite3, sqliteWords, logger); err != nil {
		s.Close()
		return nil, fmt.Errorf("site store: open %s: %w", abs, err)
	}
	s.puts, s.stop, s.stopped = make(chan *putRequest), make(chan struct{}), make(chan struct{})
	go s.writer()
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if s.stop != nil {
		s.closeOnce.Do(func() { close(s.stop) })
		<-s.stopped
	}
	err := s.db.Close()
	if s.w != s.db {
		err = errors.Join(err, s.w.Close())
	}
	return err
}

func (s *Store) migratePostgres(ctx context.Context, logger *slog.Logger) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	// Servers starting together: one migrates, the others wait on the lock
	// and then find nothing to do. The lock goes with the transaction.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("lock for migration: %w", err)
	}
	defer tx.Rollback()
	const lockID = 0x64626d73697465 // "dbmsite"
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", lockID); err != nil {
		return fmt.Errorf("lock for migration: %w", err)
	}
	return s.migrate(ctx, goose.DialectPostgres, postgresWords, logger)
}

func (s *Store) migrate(ctx context.Context, dialect goose.Dialect, w words, logger *slog.Logger) error {
	fsys, err := migrationsFor(w)
	if err != nil {
		return err
	}
	return sqldb.Migrate(ctx, s.w, dialect, fsys, "site_goose_version", logger)
}

// q writes query's ? placeholders in the backend's own form.
func (s *Store) q(query string) string {
	if !s.pg {
		return query
	}
	return sqldb.Rebind(query)
}

// redactURL masks the secrets of the store's address by the secret policy.
func redactURL(s string) string { return secret.Target(s) }

func micros(t time.Time) int64 { return t.UTC().UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// facetColumns are the facet columns the entries table keeps, without
// status (a column of its own).
func facetColumns() []string {
	var out []string
	for _, f := range Facets {
		if f.Key != "status" {
			out = append(out, f.Key)
		}
	}
	return out
}

// Quota is a client's allowance, checked and spent in the transaction
// that stores its submission.
type Quota struct {
	Client string // a keyed hash, never an address
	Now    time.Time
	Limits Limits
}

// Put stores e unless an entry with the same hash exists. It returns the
// id of the stored entry (e's, or the existing one's) and whether e was
// new. With q, the submission is counted against the client's limits in
// the same transaction (one commit: one sync of the log): when they do not
// allow it, nothing is stored and wait says how long the client must
// wait. A result already stored costs the client nothing.
func (s *Store) Put(ctx context.Context, e *Entry, q *Quota) (id string, created bool, wait time.Duration, err error) {
	if s.puts != nil {
		return s.putQueued(ctx, e, q)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return "", false, 0, fmt.Errorf("site store: save %s: %w", e.ID, err)
	}
	defer tx.Rollback()
	r := s.put(ctx, tx, e, q)
	if r.err != nil || !r.created {
		return r.id, false, r.wait, r.err // rolled back: the client's event with it
	}
	if err := tx.Commit(); err != nil {
		return "", false, 0, fmt.Errorf("site store: save %s: %w", e.ID, err)
	}
	s.fx.changed()
	return e.ID, true, 0, nil
}

type putResult struct {
	id      string
	created bool
	wait    time.Duration
	err     error
}

// put does Put's work in tx. Unless the result says created, the caller
// must undo what it did in tx (the client's event).
func (s *Store) put(ctx context.Context, tx *sql.Tx, e *Entry, q *Quota) putResult {
	cols := []string{"id", "hash", "submitted_us", "started_us", "hidden", "released", "status", "kind", "runs",
		"headline", "headline_unit", "better", "comparable", "reproduces", "search"}
	args := []any{e.ID, e.Hash, micros(e.SubmittedAt), micros(e.StartedAt), boolInt(e.Hidden), boolInt(e.Released),
		e.Status, e.Kind, e.Runs, e.Headline, e.HeadlineUnit, e.Better, e.Comparable, e.Reproduces, searchText(e)}
	for _, c := range facetColumns() {
		cols = append(cols, c)
		args = append(args, e.Facets[c])
	}
	query := "INSERT INTO entries (" + strings.Join(cols, ", ") + ") VALUES (" +
		strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ") ON CONFLICT DO NOTHING"
	if q != nil {
		if wait, err := s.spend(ctx, tx, *q); err != nil || wait > 0 {
			return putResult{wait: wait, err: err}
		}
	}
	res, err := tx.ExecContext(ctx, s.q(query), args...)
	if err != nil {
		return putResult{err: fmt.Errorf("site store: save %s: %w", e.ID, err)}
	}
	n, err := res.RowsAffected()
	if err != nil {
		return putResult{err: fmt.Errorf("site store: save %s: %w", e.ID, err)}
	}
	if n == 0 {
		// Stored already: the same result (its hash, and so its id),
		// perhaps by a submission that committed while this one waited.
		// Any unique column is a conflict here: on PostgreSQL, one with a
		// target (hash) still failed on the id of a row committed meanwhile.
		var id string
		err := tx.QueryRowContext(ctx, s.q("SELECT id FROM entries WHERE hash = ?"), e.Hash).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return putResult{err: fmt.Errorf("site store: save %s: another result has this id", e.ID)}
		}
		if err != nil {
			return putResult{err: fmt.Errorf("site store: find by hash: %w", err)}
		}
		return putResult{id: id}
	}
	if _, err := tx.ExecContext(ctx, s.q("INSERT INTO documents (id, document) VALUES (?, ?)"), e.ID, string(e.Document)); err != nil {
		return putResult{err: fmt.Errorf("site store: save %s: %w", e.ID, err)}
	}
	if err := s.putPeer(ctx, tx, e.ID, e.Peer, e.Headline, e.Better); err != nil {
		return putResult{err: fmt.Errorf("site store: save %s: %w", e.ID, err)}
	}
	return putResult{id: e.ID, created: true}
}

// putRequest is a Put waiting for the SQLite writer.
type putRequest struct {
	ctx  context.Context
	e    *Entry
	q    *Quota
	done chan putResult // buffered: the writer never waits on a caller
}

// maxGroup is how many submissions one SQLite commit takes at most.
const maxGroup = 64

func (s *Store) putQueued(ctx context.Context, e *Entry, q *Quota) (string, bool, time.Duration, error) {
	req := &putRequest{ctx: ctx, e: e, q: q, done: make(chan putResult, 1)}
	select {
	case s.puts <- req:
	case <-ctx.Done():
		return "", false, 0, fmt.Errorf("site store: save %s: %w", e.ID, ctx.Err())
	case <-s.stop:
		return "", false, 0, fmt.Errorf("site store: save %s: the store is closed", e.ID)
	}
	r := <-req.done
	return r.id, r.created, r.wait, r.err
}

// writer commits the submissions queued for SQLite: those that arrived
// while the previous commit was syncing go together in the next
// transaction, each in a savepoint of its own, so that one sync of the log
// makes them all durable. Nothing is answered before its commit returns,
// and nothing waits on purpose for company.
func (s *Store) writer() {
	defer close(s.stopped)
	for {
		var group []*putRequest
		select {
		case r := <-s.puts:
			group = append(group, r)
		case <-s.stop:
			return
		}
	more:
		for len(group) < maxGroup {
			select {
			case r := <-s.puts:
				group = append(group, r)
			default:
				break more
			}
		}
		s.commitGroup(group)
	}
}

func (s *Store) commitGroup(group []*putRequest) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results := make([]putResult, len(group))
	fail := func(err error) {
		for i, r := range group {
			if results[i].err == nil {
				results[i] = putResult{err: fmt.Errorf("site store: save %s: %w", r.e.ID, err)}
			}
			r.done <- results[i]
		}
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		fail(err)
		return
	}
	defer tx.Rollback()
	created := false
	for i, r := range group {
		if err := r.ctx.Err(); err != nil { // its client went away
			results[i] = putResult{err: fmt.Errorf("site store: save %s: %w", r.e.ID, err)}
			continue
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT put"); err != nil {
			fail(err)
			return
		}
		results[i] = s.put(ctx, tx, r.e, r.q)
		undo := "RELEASE put"
		if results[i].err != nil || !results[i].created {
			undo = "ROLLBACK TO put; RELEASE put"
		}
		if _, err := tx.ExecContext(ctx, undo); err != nil {
			fail(err)
			return
		}
		created = created || results[i].created
	}
	if err := tx.Commit(); err != nil {
		for i := range results {
			results[i].err = nil // every one failed with the commit
		}
		fail(err)
		return
	}
	if created {
		s.fx.changed()
	}
	for i, r := range group {
		r.done <- results[i]
	}
}

// Has says whether entry id is stored, hidden or not.
func (s *Store) Has(ctx context.Context, id string) (bool, error) {
	var one int
	err := s.db.QueryRowContext(ctx, s.q("SELECT 1 FROM entries WHERE id = ?"), id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("site store: find %q: %w", id, err)
	}
	return true, nil
}

// IDOfHash returns the id of the entry with this canonical hash.
func (s *Store) IDOfHash(ctx context.Context, hash string) (string, error) {
	var id string
	err := s.db.QueryRowContext(ctx, s.q("SELECT id FROM entries WHERE hash = ?"), hash).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("site store: find by hash: %w", err)
	}
	return id, nil
}

func searchText(e *Entry) string {
	parts := []string{e.ID}
	for _, c := range facetColumns() {
		parts = append(parts, e.Facets[c])
	}
	return strings.ToLower(strings.Join(parts, " "))
}

// listColumns are what a listed entry reads: everything but the document.
func listColumns() string {
	return "seq, id, hash, submitted_us, started_us, hidden, released, status, kind, runs, headline, headline_unit, better, comparable, reproduces, " +
		strings.Join(facetColumns(), ", ")
}

type scanner interface{ Scan(...any) error }

func scanEntry(sc scanner, withDoc bool) (Entry, int64, error) {
	var e Entry
	var seq, sub, start int64
	var hidden, released int
	fc := facetColumns()
	vals := make([]string, len(fc))
	dest := []any{&seq, &e.ID, &e.Hash, &sub, &start, &hidden, &released, &e.Status, &e.Kind, &e.Runs, &e.Headline,
		&e.HeadlineUnit, &e.Better, &e.Comparable, &e.Reproduces}
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	var doc string
	if withDoc {
		dest = append(dest, &doc)
	}
	if err := sc.Scan(dest...); err != nil {
		return e, 0, err
	}
	e.SubmittedAt, e.StartedAt = fromMicros(sub), fromMicros(start)
	e.Hidden, e.Released = hidden != 0, released != 0
	e.Facets = map[string]string{"status": e.Status}
	for i, c := range fc {
		e.Facets[c] = vals[i]
	}
	if withDoc {
		e.Document = []byte(doc)
	}
	return e, seq, nil
}

// Get returns entry id with its document, hidden or not.
func (s *Store) Get(ctx context.Context, id string) (*Entry, error) {
	row := s.db.QueryRowContext(ctx, s.q("SELECT "+listColumns()+", d.document FROM entries JOIN documents d USING (id) WHERE id = ?"), id)
	e, _, err := scanEntry(row, true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("site store: result %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("site store: result %q: %w", id, err)
	}
	return &e, nil
}

// SetHidden hides or shows entry id.
func (s *Store) SetHidden(ctx context.Context, id string, hidden bool) error {
	return s.moderate(ctx, "hide", id, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q("UPDATE entries SET hidden = ? WHERE id = ?"), boolInt(hidden), id)
		return s.one(res, err, "hide", id)
	})
}

// Delete removes entry id and its document.
func (s *Store) Delete(ctx context.Context, id string) error {
	return s.moderate(ctx, "delete", id, func(tx *sql.Tx) error {
		if err := s.deletePeer(ctx, tx, id); err != nil {
			return fmt.Errorf("site store: delete %q: %w", id, err)
		}
		res, err := tx.ExecContext(ctx, s.q("DELETE FROM entries WHERE id = ?"), id)
		if err := s.one(res, err, "delete", id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q("DELETE FROM documents WHERE id = ?"), id); err != nil {
			return fmt.Errorf("site store: delete %q: %w", id, err)
		}
		return nil
	})
}

// moderate runs fn in a transaction that also counts the change, so that
// every server's facet index sees it and builds again.
func (s *Store) moderate(ctx context.Context, what, id string, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("site store: %s %q: %w", what, id, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE site_state SET value = value + 1 WHERE name = 'moderation'"); err != nil {
		return fmt.Errorf("site store: %s %q: %w", what, id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("site store: %s %q: %w", what, id, err)
	}
	s.fx.changed()
	return nil
}

func (s *Store) one(res sql.Result, err error, what, id string) error {
	if err != nil {
		return fmt.Errorf("site store: %s %q: %w", what, id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("site store: %s %q: %w", what, id, err)
	} else if n == 0 {
		return fmt.Errorf("site store: %s %q: %w", what, id, ErrNotFound)
	}
	return nil
}

// Secret returns the named secret, creating it (32 random bytes, hex) on
// first use; every server on the store reads the same one.
func (s *Store) Secret(ctx context.Context, name string) ([]byte, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	if _, err := s.w.ExecContext(ctx, s.q("INSERT INTO site_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING"),
		name, hex.EncodeToString(b[:])); err != nil {
		return nil, fmt.Errorf("site store: secret: %w", err)
	}
	var v string
	if err := s.w.QueryRowContext(ctx, s.q("SELECT value FROM site_secrets WHERE name = ?"), name).Scan(&v); err != nil {
		return nil, fmt.Errorf("site store: secret: %w", err)
	}
	return hex.DecodeString(v)
}

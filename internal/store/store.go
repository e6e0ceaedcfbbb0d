// Package store keeps the results of benchmark runs: every result document
// in full, plus the few columns needed to list, filter and find runs
// without decoding documents.
//
// Two backends share one implementation: SQLite (a file in the user's data
// directory, the default) and PostgreSQL (for a team's shared history).
// Each run gets a short numeric ID for display next to its UUID; IDs are
// never reused, so "run 12" keeps meaning the same run after deletions.
package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/secret"
	"github.com/dbmark/dbmark/internal/store/postgres"
	"github.com/dbmark/dbmark/internal/store/sqlite"
)

// ID is the short display id the store assigns to a run.
type ID int64

// Summary is one run as listed: the columns kept beside the document.
type Summary struct {
	ID           ID
	UUID         string
	StartedAt    time.Time // UTC, truncated to microseconds (the document has the exact value)
	Workload     string
	Target       string // the target's kind, e.g. "postgres"
	Status       string
	Headline     float64
	HeadlineUnit string
	DurationS    float64 // the measured duration the headline covers (Summary.DurationS)
	SweepID      string  // "" when the run is not part of a sweep
}

// Filter narrows List. Zero fields match everything; Limit <= 0 means no limit.
type Filter struct {
	Workload string
	Status   string
	SweepID  string
	Limit    int
}

// Store keeps results. Implementations are safe for concurrent use, and
// several processes may use the same store at once.
type Store interface {
	// Save stores r in one transaction: all of it or nothing. Saving a UUID
	// that is already stored replaces the run and keeps its ID.
	Save(ctx context.Context, r *result.Result) (ID, error)
	// Get returns the stored document of run id.
	Get(ctx context.Context, id ID) (*result.Result, error)
	// Resolve turns what a user typed into an ID: a numeric ID, a full UUID
	// or a unique UUID prefix of at least MinPrefix characters.
	Resolve(ctx context.Context, ref string) (ID, error)
	// List returns the runs that match f, newest first.
	List(ctx context.Context, f Filter) ([]Summary, error)
	// Delete removes run id.
	Delete(ctx context.Context, id ID) error

	// SaveSweep stores a sweep's record; saving a UUID already stored
	// replaces the record (its status changes as it runs) and keeps its ID.
	// Sweeps have IDs of their own, apart from the runs'.
	SaveSweep(ctx context.Context, sw *result.Sweep) (ID, error)
	// GetSweep returns sweep id's record.
	GetSweep(ctx context.Context, id ID) (*result.Sweep, error)
	// ResolveSweep turns what a user typed into a sweep's ID, as Resolve.
	ResolveSweep(ctx context.Context, ref string) (ID, error)
	// SweepRuns returns the stored runs of the sweep with this UUID, in
	// the order they were saved.
	SweepRuns(ctx context.Context, sweepID string) ([]*result.Result, error)
	Close() error
}

var (
	// ErrNotFound is returned (wrapped) when no run matches.
	ErrNotFound = errors.New("result not found")
	// ErrAmbiguous is returned (wrapped) by Resolve when a reference
	// matches more than one run.
	ErrAmbiguous = errors.New("ambiguous result reference")
)

// MinPrefix is the shortest UUID prefix Resolve accepts: shorter ones would
// match too often to be useful.
const MinPrefix = 4

// accepted is what Open's errors list, so a user can fix a bad --store.
const accepted = `a file path, sqlite:///path/to/results.db, file:/path/to/results.db, ` +
	`or postgres://user@host:5432/db (postgresql:// also accepted); empty for the default file`

// Open opens the results store named by dsn, creating and migrating it if
// needed:
//
//   - "" : the SQLite file at DefaultPath
//   - a filesystem path, sqlite://PATH, sqlite:PATH or a file: URI: a SQLite file
//   - postgres://... or postgresql://...: a PostgreSQL database
//
// A nil logger discards.
func Open(ctx context.Context, dsn string, logger *slog.Logger) (Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	kind, loc, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	switch kind {
	case kindPostgres:
		db, err := postgres.Open(ctx, loc, logger)
		if err != nil {
			return nil, fmt.Errorf("store: open %s: %w", redactDSN(loc), err)
		}
		logger.DebugContext(ctx, "results store opened", "backend", "postgres", "url", redactDSN(loc))
		return newSQLStore(db, dialectPostgres, logger), nil
	default:
		if loc == "" {
			if loc, err = DefaultPath(); err != nil {
				return nil, fmt.Errorf("store: %w", err)
			}
		} else if err := parentExists(loc); err != nil {
			return nil, err
		}
		db, err := sqlite.Open(ctx, loc, logger)
		if err != nil {
			return nil, openError(loc, err)
		}
		logger.DebugContext(ctx, "results store opened", "backend", "sqlite", "path", loc)
		return &sqliteStore{newSQLStore(db, dialectSQLite, logger), loc}, nil
	}
}

// OpenRead opens the results store named by dsn for reading: a SQLite
// store that exists and is up to date is opened read-only, without the
// writes that Open may do, so it can be read on a full disk and is never
// modified. Otherwise it is Open's. Writes through the store it returns
// may fail.
func OpenRead(ctx context.Context, dsn string, logger *slog.Logger) (Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	kind, loc, err := parseDSN(dsn)
	if err != nil || kind != kindSQLite {
		return Open(ctx, dsn, logger)
	}
	if loc == "" {
		if loc, err = DefaultPath(); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	db, err := sqlite.OpenRead(ctx, loc)
	if errors.Is(err, sqlite.ErrNeedsSetup) {
		return Open(ctx, loc, logger)
	}
	if err != nil {
		return nil, openError(loc, err)
	}
	logger.DebugContext(ctx, "results store opened for reading", "backend", "sqlite", "path", loc)
	return &sqliteStore{newSQLStore(db, dialectSQLite, logger), loc}, nil
}

// openError says why the SQLite store at path did not open; a damaged
// store's error says all there is to say.
func openError(path string, err error) error {
	var d *sqlite.DamagedError
	if errors.As(err, &d) {
		return fmt.Errorf("store: %w", err)
	}
	return fmt.Errorf("store: open %s: %w", path, err)
}

type backendKind int

const (
	kindSQLite backendKind = iota
	kindPostgres
)

// parseDSN tells the backend and returns what it opens: a path ("" for the
// default) for SQLite, the URL for PostgreSQL.
func parseDSN(dsn string) (backendKind, string, error) {
	dsn = strings.TrimSpace(dsn)
	lower := strings.ToLower(dsn)
	switch {
	case dsn == "":
		return kindSQLite, "", nil
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		return kindPostgres, dsn, nil
	case strings.HasPrefix(lower, "sqlite:"):
		p := strings.TrimPrefix(dsn[len("sqlite:"):], "//")
		if p == "" || strings.ContainsAny(p, "?#") {
			return 0, "", fmt.Errorf("store: %q does not name a file (want sqlite:///abs/path.db or sqlite://rel/path.db, without ?options)", dsn)
		}
		return kindSQLite, p, nil
	case strings.HasPrefix(lower, "file:"):
		p, err := filePath(dsn)
		if err != nil {
			return 0, "", err
		}
		return kindSQLite, p, nil
	case dsn == ":memory:":
		return 0, "", fmt.Errorf("store: an in-memory SQLite store would lose every result on exit; use %s", accepted)
	}
	if scheme, ok := urlScheme(dsn); ok {
		return 0, "", fmt.Errorf("store: unsupported results store %q (scheme %q): use %s", redactDSN(dsn), scheme, accepted)
	}
	if strings.HasPrefix(lower, "postgres:") || strings.HasPrefix(lower, "postgresql:") {
		return 0, "", fmt.Errorf("store: %q is not a PostgreSQL URL (want postgres://user@host:5432/db)", redactDSN(dsn))
	}
	return kindSQLite, dsn, nil
}

// urlScheme returns the scheme of s if s starts like a URL ("scheme://"),
// which a plain path never does.
func urlScheme(s string) (string, bool) {
	i := strings.Index(s, "://")
	if i <= 0 {
		return "", false
	}
	for j, c := range s[:i] {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", false
		}
	}
	return s[:i], true
}

// filePath returns the path of a file: URI (file:rel, file:/abs, file:///abs).
func filePath(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("store: %q is not a valid file: URI: %w", dsn, err)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("store: %q: options in a file: URI are not supported; the store sets its own", dsn)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("store: %q names host %q; a SQLite store must be a local file", dsn, u.Host)
	}
	p := u.Path
	if u.Opaque != "" {
		if p, err = url.PathUnescape(u.Opaque); err != nil {
			return "", fmt.Errorf("store: %q is not a valid file: URI: %w", dsn, err)
		}
	}
	if p == "" {
		return "", fmt.Errorf("store: %q does not name a file", dsn)
	}
	return p, nil
}

// redactDSN masks the secrets of a store's address by the secret policy,
// so errors and logs can show where the store is without leaking them.
func redactDSN(s string) string { return secret.Target(s) }

// DataDir is dbmark's per-user data directory, where the default results
// store and the embedded benchmark database live: $DBMARK_HOME if set, else
// $XDG_DATA_HOME/dbmark, else ~/.local/share/dbmark. It is not created.
func DataDir() (string, error) {
	return dataDir(os.Getenv, os.UserHomeDir)
}

// DefaultPath is the default SQLite results file, results.db in DataDir.
func DefaultPath() (string, error) {
	dir, err := DataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "results.db"), nil
}

func dataDir(getenv func(string) string, home func() (string, error)) (string, error) {
	if d := getenv("DBMARK_HOME"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", fmt.Errorf("data directory from DBMARK_HOME=%q: %w", d, err)
		}
		return abs, nil
	}
	// The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored.
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "dbmark"), nil
	}
	h, err := home()
	if err != nil {
		return "", fmt.Errorf("data directory: set DBMARK_HOME: %w", err)
	}
	if h == "" {
		return "", errors.New("data directory: no home directory; set DBMARK_HOME")
	}
	return filepath.Join(h, ".local", "share", "dbmark"), nil
}

// parentExists refuses a store path given explicitly in a directory that
// does not exist, as --json's: only the default data directory is created
// (a mistyped path would otherwise start a new, empty store).
func parentExists(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store %s: the directory %s does not exist (create it first, or give --store a path in an existing directory)", path, dir)
	}
	if err == nil && !st.IsDir() {
		return fmt.Errorf("store %s: %s is not a directory", path, dir)
	}
	return nil
}

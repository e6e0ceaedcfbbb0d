// Package sqlite opens the SQLite results store: a local file created on
// first use, in WAL mode so that listing the history never blocks a run that
// is saving its result, and with a busy timeout so that runs finishing at
// the same moment in several processes queue instead of failing.
//
// It only connects and migrates; the queries are shared with PostgreSQL in
// package store.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3" // also registers the "sqlite3" driver
	"github.com/pressly/goose/v3"

	"github.com/dbmark/dbmark/internal/store/sqldb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// BusyTimeout is how long a write waits for another connection's write
// transaction before failing with "database is locked".
const BusyTimeout = 10 * time.Second

// Open opens the results database at path for reading and writing,
// creating it and its parent directory (mode 0700: results name hosts and
// targets) if needed, and brings its schema up to date. An existing store
// is first looked at read-only: a damaged one is refused untouched
// (*DamagedError), and one already up to date is opened without the
// setup's writes.
func Open(ctx context.Context, path string, logger *slog.Logger) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := look(ctx, abs)
	if err != nil {
		return nil, err
	}
	if st == stateNew {
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, fmt.Errorf("create directory: %w", err)
		}
	}
	// BEGIN IMMEDIATE takes the write lock up front, where the busy timeout
	// applies. A deferred transaction that reads and then writes can instead
	// fail at once with SQLITE_BUSY when another writer got in between.
	db, err := sql.Open("sqlite3", dsn(abs, "immediate"))
	if err != nil {
		return nil, err
	}
	if st == stateCurrent {
		return db, nil
	}
	if err := setup(ctx, db, abs, st, logger); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// ErrNeedsSetup is OpenRead's answer for a store that does not exist yet
// or whose schema is older than this dbmark's: it must be opened with Open,
// which writes.
var ErrNeedsSetup = errors.New("the results store needs to be created or migrated")

// OpenRead opens an existing, up-to-date results database for reading
// only: nothing is locked, set or migrated, so it works on a full disk,
// and a damaged store is refused untouched (*DamagedError).
func OpenRead(ctx context.Context, path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := look(ctx, abs)
	if err != nil {
		return nil, err
	}
	if st != stateCurrent {
		return nil, ErrNeedsSetup
	}
	return openReadOnly(ctx, abs)
}

// DamagedError says the store's file cannot be read as a results store.
type DamagedError struct {
	Path string
	Err  error
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("the results store %s is damaged (%v); it was left as it is: move it aside (mv %s %s.damaged) and dbmark starts a new one",
		e.Path, e.Err, e.Path, e.Path)
}

func (e *DamagedError) Unwrap() error { return e.Err }

// Damaged returns err as a *DamagedError of the store at path when SQLite
// found the file corrupt or not a database, and err otherwise.
func Damaged(path string, err error) error {
	var serr sqlite3.Error
	if errors.As(err, &serr) && (serr.Code == sqlite3.ErrCorrupt || serr.Code == sqlite3.ErrNotADB) {
		return &DamagedError{Path: path, Err: serr}
	}
	return err
}

// state is what a read-only look at the store's file found.
type state int

const (
	stateNew     state = iota // no file, or a database with no tables
	stateBehind               // a store not in WAL mode or with migrations to apply
	stateCurrent              // a store ready for use as it is
)

// look opens the file read-only, if there is one, and tells how far it is
// set up. It never writes: a file that fails to read, or that holds other
// tables and no schema version, is refused as it is.
func look(ctx context.Context, path string) (state, error) {
	if st, err := os.Stat(path); errors.Is(err, os.ErrNotExist) || err == nil && st.Size() == 0 {
		return stateNew, nil
	} else if err != nil {
		return 0, err
	}
	db, err := openReadOnly(ctx, path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var tables, versions int
	err = db.QueryRowContext(ctx, "SELECT count(*), count(CASE name WHEN 'goose_db_version' THEN 1 END) FROM sqlite_master WHERE type = 'table'").Scan(&tables, &versions)
	if err != nil {
		return 0, Damaged(path, fmt.Errorf("read schema: %w", err))
	}
	switch {
	case tables == 0:
		return stateNew, nil
	case versions == 0:
		return 0, fmt.Errorf("%s holds tables but no results store schema: it is not a dbmark results store (use --store to name one)", path)
	}
	var current sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT max(version_id) FROM goose_db_version").Scan(&current); err != nil {
		return 0, Damaged(path, fmt.Errorf("read schema version: %w", err))
	}
	wal, err := inWALMode(path)
	if err != nil {
		return 0, err
	}
	target, err := latestMigration()
	if err != nil {
		return 0, err
	}
	if !wal || current.Int64 < target {
		// The migration writes: check the whole file first, so a damaged
		// store is never written to.
		var verdict string
		if err := db.QueryRowContext(ctx, "PRAGMA quick_check(1)").Scan(&verdict); err != nil {
			return 0, Damaged(path, fmt.Errorf("check: %w", err))
		}
		if verdict != "ok" {
			return 0, &DamagedError{Path: path, Err: errors.New(verdict)}
		}
		return stateBehind, nil
	}
	return stateCurrent, nil
}

// inWALMode reads the journal mode from the file's header (bytes 18 and
// 19, the read and write versions, are 2 in WAL mode): an immutable
// connection reports no WAL whatever the file says.
func inWALMode(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var h [20]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false, &DamagedError{Path: path, Err: fmt.Errorf("read header: %w", err)}
	}
	return h[18] == 2 && h[19] == 2, nil
}

// latestMigration is the version of the newest embedded migration.
func latestMigration() (int64, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return 0, err
	}
	var latest int64
	for _, n := range names {
		digits := strings.TrimLeft(path.Base(n), "0123456789")
		v, err := strconv.ParseInt(strings.TrimSuffix(path.Base(n), digits), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("migration %s: no version number", n)
		}
		latest = max(latest, v)
	}
	return latest, nil
}

// openReadOnly opens path for reading only and reads its schema once. A
// WAL store's readers share memory through a file beside it, which SQLite
// creates when missing; where it cannot (a full disk), the store is read
// as an immutable file instead: without locks, which is safe since no
// other process can be writing to a store on a full disk either.
func openReadOnly(ctx context.Context, path string) (*sql.DB, error) {
	var err error
	for _, immutable := range []bool{false, true} {
		var db *sql.DB
		if db, err = sql.Open("sqlite3", readOnlyDSN(path, immutable)); err != nil {
			return nil, err
		}
		if err = db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(new(int)); err == nil {
			return db, nil
		}
		db.Close()
		var serr sqlite3.Error
		if !errors.As(err, &serr) || serr.Code != sqlite3.ErrIoErr && serr.Code != sqlite3.ErrCantOpen && serr.Code != sqlite3.ErrFull {
			break
		}
	}
	return nil, Damaged(path, fmt.Errorf("read schema: %w", err))
}

func readOnlyDSN(path string, immutable bool) string {
	q := url.Values{}
	q.Set("mode", "ro")
	if immutable {
		q.Set("immutable", "1")
	}
	q.Set("_busy_timeout", strconv.FormatInt(BusyTimeout.Milliseconds(), 10))
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}

// dsn builds the driver's URI for path, with transactions begun as
// BEGIN txlock. A file: URI with an escaped path keeps a '?' or '%' in a
// file name from being read as options.
func dsn(path, txlock string) string {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(BusyTimeout.Milliseconds(), 10))
	q.Set("_txlock", txlock)
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}

func setup(ctx context.Context, db *sql.DB, path string, st state, logger *slog.Logger) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	unlock, err := lockMigrations(ctx, path)
	if err != nil {
		return err
	}
	defer unlock()
	if st == stateNew {
		// Another process may have created the store while this one waited
		// for the lock; look again before writing to it.
		if st, err = look(ctx, path); err != nil || st == stateCurrent {
			return err
		}
	}
	if err := enableWAL(ctx, db); err != nil {
		return Damaged(path, err)
	}
	return Damaged(path, sqldb.Migrate(ctx, db, goose.DialectSQLite3, fsys, "", logger))
}

// lockMigrations keeps processes that open the same store at once from
// setting it up together. SQLite has no advisory locks, and a lock on the
// store itself would block the migration, so this holds an exclusive
// transaction on a small file beside the store: others wait on it as on
// any SQLite lock (up to BusyTimeout), and the OS drops it if the process
// dies. It is held for the milliseconds of checking the schema version.
func lockMigrations(ctx context.Context, path string) (unlock func(), err error) {
	db, err := sql.Open("sqlite3", dsn(path+".migrate-lock", "exclusive"))
	if err != nil {
		return nil, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("lock for migration: %w", err)
	}
	return func() {
		tx.Rollback() // nothing was written: this only releases the lock
		db.Close()
	}, nil
}

// enableWAL switches the file to WAL mode, which then sticks to the file
// for every later connection. Switching needs the file to itself, and
// SQLite reports SQLITE_BUSY at once rather than wait while another
// program (the sqlite3 shell, say) has it open, so retry until BusyTimeout.
func enableWAL(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(BusyTimeout)
	pause := 5 * time.Millisecond
	for {
		var mode string
		err := db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		var serr sqlite3.Error
		if errors.As(err, &serr) && serr.Code == sqlite3.ErrBusy && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("set WAL mode: %w", ctx.Err())
			case <-time.After(pause):
			}
			pause = min(2*pause, 100*time.Millisecond)
			continue
		}
		if err != nil {
			return fmt.Errorf("set WAL mode: %w", err)
		}
		if mode != "wal" {
			// Some filesystems (network shares) cannot do WAL; say so rather
			// than run with readers and writers blocking each other.
			return fmt.Errorf("journal mode is %q, not WAL: is the file on a network filesystem?", mode)
		}
		return nil
	}
}

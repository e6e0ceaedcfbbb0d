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
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mattn/go-sqlite3" // also registers the "sqlite3" driver
	"github.com/pressly/goose/v3"

	"github.com/dbmark/dbmark/internal/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// BusyTimeout is how long a write waits for another connection's write
// transaction before failing with "database is locked".
const BusyTimeout = 10 * time.Second

// Open opens the results database at path, creating it and its parent
// directory (mode 0700: results name hosts and targets) if needed, and
// brings its schema up to date.
func Open(ctx context.Context, path string, logger *slog.Logger) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("create directory: %w", err)
	}
	// BEGIN IMMEDIATE takes the write lock up front, where the busy timeout
	// applies. A deferred transaction that reads and then writes can instead
	// fail at once with SQLITE_BUSY when another writer got in between.
	db, err := sql.Open("sqlite3", dsn(abs, "immediate"))
	if err != nil {
		return nil, err
	}
	if err := setup(ctx, db, abs, logger); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
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

func setup(ctx context.Context, db *sql.DB, path string, logger *slog.Logger) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	unlock, err := lockMigrations(ctx, path)
	if err != nil {
		return err
	}
	defer unlock()
	if err := enableWAL(ctx, db); err != nil {
		return err
	}
	return migrate.Up(ctx, db, goose.DialectSQLite3, fsys, logger)
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

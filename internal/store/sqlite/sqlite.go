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
	db, err := sql.Open("sqlite3", dsn(abs))
	if err != nil {
		return nil, err
	}
	if err := setup(ctx, db, logger); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// dsn builds the driver's URI for path. A file: URI with an escaped path
// keeps any '?' or '%' in a file name from being read as options.
func dsn(path string) string {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(BusyTimeout.Milliseconds(), 10))
	// BEGIN IMMEDIATE takes the write lock up front, where the busy timeout
	// applies. A deferred transaction that reads and then writes can instead
	// fail at once with SQLITE_BUSY when another writer got in between.
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}

func setup(ctx context.Context, db *sql.DB, logger *slog.Logger) error {
	if err := enableWAL(ctx, db); err != nil {
		return err
	}
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	// No lock: SQLite has no session locks. Each migration runs in its own
	// BEGIN IMMEDIATE transaction and is written to be idempotent, so two
	// processes creating the same new store both succeed.
	return migrate.Up(ctx, db, goose.DialectSQLite3, fsys, logger)
}

// enableWAL switches the file to WAL mode, which then sticks to the file
// for every later connection. Switching needs the file to itself, and SQLite
// reports SQLITE_BUSY at once rather than wait when another process is
// opening the same new file, so retry until BusyTimeout.
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

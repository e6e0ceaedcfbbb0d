package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbmark/dbmark/internal/store/sqlite"
	"github.com/dbmark/dbmark/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.RunDSN(t, func(t *testing.T) string {
		// A name that needs escaping, in a directory that does too. (An
		// explicit store's directory must exist; sqlite.Open still makes
		// the default data directory, TestOpenCreatesPrivateDirInWALMode.)
		dir := filepath.Join(t.TempDir(), "new dir")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, "results?#%.db")
	})
}

func TestOpenCreatesPrivateDirInWALMode(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data", "dbmark")
	path := filepath.Join(dir, "results.db")
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("directory mode = %o, want 700", perm)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file not at %s: %v", path, err)
	}
	var mode string
	var timeout int
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := db.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&timeout); err != nil || int64(timeout) != sqlite.BusyTimeout.Milliseconds() {
		t.Errorf("busy_timeout = %d, %v; want %d", timeout, err, sqlite.BusyTimeout.Milliseconds())
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM runs").Scan(&n); err != nil {
		t.Errorf("runs table: %v", err)
	}
}

func TestConcurrentOpenMigratesOnce(t *testing.T) {
	storetest.MigratesOnce(t, func(t *testing.T) func(context.Context) (*sql.DB, error) {
		path := filepath.Join(t.TempDir(), "results.db")
		return func(ctx context.Context) (*sql.DB, error) { return sqlite.Open(ctx, path, nil) }
	})
}

func TestOpenRejectsNonDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	if err := os.WriteFile(path, []byte("this is not a SQLite database, just some text that is long enough"), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), path, nil)
	if err == nil {
		db.Close()
		t.Fatal("opened a file that is not a database")
	}
	t.Log(err)
}

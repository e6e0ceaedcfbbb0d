package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/pressly/goose/v3"

	"github.com/dbmark/dbmark/internal/store/sqldb"
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

// TestMigrationTakesDegraded opens a store made before the degraded
// status: its runs are kept, a degraded run can be saved, and a deleted
// run's id is still not given again.
func TestMigrationTakesDegraded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	old := fstest.MapFS{}
	for _, n := range []string{"00001_runs.sql", "00002_sweeps.sql"} {
		b, err := os.ReadFile(filepath.Join("migrations", n))
		if err != nil {
			t.Fatal(err)
		}
		old[n] = &fstest.MapFile{Data: b}
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqldb.Migrate(ctx, db, goose.DialectSQLite3, old, "", nil); err != nil {
		t.Fatal(err)
	}
	const ins = `INSERT INTO runs (uuid, started_at, ended_at, workload, target_kind, target_url, status, headline, headline_unit, duration_s, document)
		VALUES (?, '2025-01-01T00:00:00Z', '2025-01-01T00:00:10Z', 'oltp', 'postgres', 'u', ?, 1, 'tps', 10, '{}')`
	for _, u := range []string{"a", "b", "c"} {
		if _, err := db.ExecContext(ctx, ins, u, "ok"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, ins, "d", "degraded"); err == nil {
		t.Fatal("the old schema took a degraded run: the test does not test the migration")
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM runs WHERE uuid = 'c'"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, ins, "d", "degraded"); err != nil {
		t.Fatalf("a degraded run after the migration: %v", err)
	}
	var id, n int
	if err := db.QueryRowContext(ctx, "SELECT id FROM runs WHERE uuid = 'd'").Scan(&id); err != nil || id != 4 {
		t.Errorf("the new run's id = %d (%v), want 4: the deleted run's id 3 must stay unused", id, err)
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM runs WHERE uuid IN ('a', 'b')").Scan(&n); err != nil || n != 2 {
		t.Errorf("%d old runs kept (%v), want 2", n, err)
	}
	if _, err := db.ExecContext(ctx, ins, "e", "bogus"); err == nil {
		t.Error("the migrated schema takes any status")
	}
}

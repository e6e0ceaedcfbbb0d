package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/sqlite"
	"github.com/dbmark/dbmark/internal/target/targettest"
)

func TestConformance(t *testing.T) {
	dir := t.TempDir()
	targettest.Run(t, targettest.Engine{
		Open: func(t *testing.T) target.Target { return sqlite.New(filepath.Join(dir, "conf.db")) },
		// A recursive count that takes far longer than the cancel delay.
		SleepSQL: func(s float64) string {
			return fmt.Sprintf("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i < %d) SELECT COUNT(*) FROM r", int64(s*100_000_000))
		},
		SleepComputes:   "SQLite has no server to wait on: its sleep is a computation, and 8 computing clients cannot all run at once on fewer cores",
		UniqueViolation: "SQLITE_1555",
		Conflict: func(ctx context.Context, t *testing.T, c1, c2 target.Conn, table string) error {
			// A second writer while the first holds the write lock; the
			// busy timeout is shortened so the test does not wait for it.
			if err := c2.Exec(ctx, "PRAGMA busy_timeout=50"); err != nil {
				t.Fatal(err)
			}
			if err := c1.Exec(ctx, "BEGIN IMMEDIATE"); err != nil {
				t.Fatal(err)
			}
			defer c1.Exec(ctx, "ROLLBACK")
			return c2.Exec(ctx, "BEGIN IMMEDIATE")
		},
	})
}

func TestMissingDirectory(t *testing.T) {
	tg := sqlite.New(filepath.Join(t.TempDir(), "no", "such", "dir", "x.db"))
	if _, err := tg.Connect(context.Background()); err == nil {
		t.Fatal("connect in a missing directory succeeded")
	}
}

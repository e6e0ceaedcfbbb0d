package sqlite_test

import (
	"testing"

	"github.com/dbmark/dbmark/internal/target/sqlite"
	"github.com/dbmark/dbmark/internal/target/targettest"
)

func FuzzOpen(f *testing.F) {
	targettest.FuzzOpen(f, "sqlite", []string{"/tmp/x.db?_busy_timeout=5000", "rel.db", "", "/a/b.db?_journal_mode=WAL&cache=shared", "u:p@host/x.db", "%zz"}, sqlite.Open)
}

package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresDSN returns the URL of a new, empty PostgreSQL store: a schema of
// its own on the server at $DBMARK_TEST_STORE_POSTGRES, chosen through the
// search_path connection parameter and dropped when the test ends. It skips
// the test when the variable is not set.
func PostgresDSN(t *testing.T) string {
	t.Helper()
	base := PostgresURL(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "dbmark_store_test_" + hex.EncodeToString(b[:])
	ident := pgx.Identifier{schema}.Sanitize()
	admin := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := admin("CREATE SCHEMA " + ident); err != nil {
		t.Fatalf("create test schema: %v", err)
	}
	t.Cleanup(func() {
		if err := admin("DROP SCHEMA " + ident + " CASCADE"); err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Backends runs fn once with each kind of store: a new SQLite file, and a
// new PostgreSQL store (PostgresDSN; skipped when the server is not named).
func Backends(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, filepath.Join(t.TempDir(), "site.db")) })
	t.Run("postgres", func(t *testing.T) { fn(t, PostgresDSN(t)) })
}

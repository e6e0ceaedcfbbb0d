package postgres_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/dbmark/dbmark/internal/store/postgres"
	"github.com/dbmark/dbmark/internal/store/storetest"
)

// These tests need a server: set DBMARK_TEST_STORE_POSTGRES (see
// storetest.PostgresURL). Each store lives in a schema of its own.

func TestConformance(t *testing.T) {
	storetest.PostgresURL(t) // skip the whole suite at once when unset
	storetest.RunDSN(t, storetest.PostgresDSN)
}

func TestConcurrentOpenMigratesOnce(t *testing.T) {
	storetest.MigratesOnce(t, func(t *testing.T) func(context.Context) (*sql.DB, error) {
		dsn := storetest.PostgresDSN(t)
		return func(ctx context.Context) (*sql.DB, error) { return postgres.Open(ctx, dsn, nil) }
	})
}

func TestDocumentIsJSONB(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, storetest.PostgresDSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var typ string
	err = db.QueryRowContext(ctx, `SELECT data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'runs' AND column_name = 'document'`).Scan(&typ)
	if err != nil || typ != "jsonb" {
		t.Errorf("document column type = %q, %v; want jsonb", typ, err)
	}
}

func TestOpenWithoutSchema(t *testing.T) {
	u := storetest.PostgresURL(t)
	sep := "?"
	for _, c := range u {
		if c == '?' {
			sep = "&"
		}
	}
	db, err := postgres.Open(context.Background(), u+sep+"search_path=dbmark_no_such_schema", nil)
	if err == nil {
		db.Close()
		t.Fatal("opened a store with no schema to put it in")
	}
	t.Log(err)
}

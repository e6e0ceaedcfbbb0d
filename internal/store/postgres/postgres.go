// Package postgres opens the PostgreSQL results store, for a history shared
// by a team or a CI fleet. The store's tables go in the first schema of the
// connection's search_path (a search_path URL parameter chooses it).
//
// It only connects and migrates; the queries are shared with SQLite in
// package store.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/dbmark/dbmark/internal/store/sqldb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// lockID is the advisory lock held while migrating: dbmark's own, so that
// it neither waits for nor blocks another application's migrations in the
// same database. ("dbmark" in ASCII.)
const lockID = 0x64626d61726b

// Open connects to the PostgreSQL database at url (postgres://...) and
// brings the store's schema up to date. Errors never show the password.
func Open(ctx context.Context, url string, logger *slog.Logger) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(url) // its errors redact the password
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDB(*cfg)
	if err := setup(ctx, db, logger); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func setup(ctx context.Context, db *sql.DB, logger *slog.Logger) error {
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	var schema sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if !schema.Valid {
		return fmt.Errorf("no schema to create the store in: the search_path names no existing schema")
	}
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	// Several processes may open a new store at once (a CI fleet): one
	// migrates while the others wait, then find nothing left to do.
	lock, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("lock for migration: %w", err)
	}
	// A transaction-level lock goes with the transaction, whether it ends
	// here or with its connection, so no pooled connection keeps it.
	defer lock.Rollback()
	if _, err := lock.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", lockID); err != nil {
		return fmt.Errorf("lock for migration: %w", err)
	}
	return sqldb.Migrate(ctx, db, goose.DialectPostgres, fsys, "", logger)
}

// Package migrate brings a results database's schema up to date with goose.
// Both backends call it with their own dialect and migration files, so the
// way migrations run and are logged is the same for both.
package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"log/slog"
	"path"

	"github.com/pressly/goose/v3"
)

// Up applies the pending migrations in fsys (goose's NNNNN_name.sql files at
// its root). The caller serialises calls across processes: goose reads the
// versions applied and then applies the rest, and two processes doing that
// at once would both apply them. A nil logger discards.
func Up(ctx context.Context, db *sql.DB, dialect goose.Dialect, fsys fs.FS, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The global registry holds Go migrations registered by init functions;
	// this schema has none, and must not pick up another package's.
	p, err := goose.NewProvider(dialect, db, fsys, goose.WithDisableGlobalRegistry(true), goose.WithSlog(logger))
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	current, target, err := p.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if current > target {
		// A newer dbmark migrated this store. Migrations only add, so an
		// older binary can still read and write what it knows.
		logger.WarnContext(ctx, "results store schema is newer than this dbmark", "schema_version", current, "known_version", target)
		return nil
	}
	if current == target {
		return nil
	}
	results, err := p.Up(ctx)
	for _, r := range results {
		if r.Error == nil {
			logger.DebugContext(ctx, "results store schema migrated", "version", r.Source.Version, "file", path.Base(r.Source.Path), "duration", r.Duration)
		}
	}
	if err != nil {
		return fmt.Errorf("migrate schema from version %d to %d: %w", current, target, err)
	}
	return nil
}

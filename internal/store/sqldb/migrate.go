package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"log/slog"
	"path"

	"github.com/pressly/goose/v3"
)

// Migrate applies the pending migrations in fsys (goose's NNNNN_name.sql
// files at its root), recording the versions in table (goose's own
// goose_db_version when empty). The caller serialises calls across
// processes: goose reads the versions applied and then applies the rest,
// and two processes doing that at once would both apply them. A nil
// logger discards.
func Migrate(ctx context.Context, db *sql.DB, dialect goose.Dialect, fsys fs.FS, table string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The global registry holds Go migrations registered by init functions;
	// these schemas have none, and must not pick up another package's.
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true), goose.WithSlog(logger)}
	if table != "" {
		opts = append(opts, goose.WithTableName(table))
	}
	p, err := goose.NewProvider(dialect, db, fsys, opts...)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	current, target, err := p.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if current > target {
		// A newer dbmark migrated this database. Migrations only add, so
		// an older binary can still read and write what it knows.
		logger.WarnContext(ctx, "database schema is newer than this dbmark", "schema_version", current, "known_version", target)
		return nil
	}
	if current == target {
		return nil
	}
	results, err := p.Up(ctx)
	for _, r := range results {
		if r.Error == nil {
			logger.DebugContext(ctx, "database schema migrated", "version", r.Source.Version, "file", path.Base(r.Source.Path), "duration", r.Duration)
		}
	}
	if err != nil {
		return fmt.Errorf("migrate schema from version %d to %d: %w", current, target, err)
	}
	return nil
}

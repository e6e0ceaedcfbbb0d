package sitestore

import (
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var updateSchema = flag.Bool("update-schema", false, "write the schema catalogs in testdata from the stores the current migrations create")

// TestSchemaUnchanged checks that the migrations create, on each backend,
// exactly the tables, columns, types, defaults and indexes recorded in
// testdata: the catalog that the first released migrations created. A
// store made by any earlier dbmark then has the schema this one expects,
// and the migrations may be reworded without changing what they make.
func TestSchemaUnchanged(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openStore(t, dsn)
		got, err := catalog(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		name := "sqlite"
		if s.pg {
			name = "postgres"
		}
		file := filepath.Join("testdata", "schema-"+name+".txt")
		if *updateSchema {
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("the migrations create another schema than %s:\n got:\n%s\nwant:\n%s", file, got, want)
		}
	})
}

// TestOpensOldStore opens a SQLite store written by the migrations as they
// were first released (schema version 2; two entries, one hidden, a secret
// and one moderation) and uses it: what was stored reads back, and new
// entries, moderation and secrets work beside it.
func TestOpensOldStore(t *testing.T) {
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "site.db")
	gunzip(t, filepath.Join("testdata", "store-v2.db.gz"), dsn)
	s := openStore(t, dsn)
	for id, hidden := range map[string]bool{"oldentry0001": false, "oldentry0002": true} {
		e, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if e.Hidden != hidden || string(e.Document) != `{"old":true}` || e.Facets["engine"] != "PostgreSQL" {
			t.Errorf("%s read back as %+v", id, e)
		}
	}
	var before string
	if err := s.db.QueryRowContext(ctx, "SELECT value FROM site_secrets WHERE name = 'rate'").Scan(&before); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Secret(ctx, "rate"); err != nil || fmt.Sprintf("%x", got) != before {
		t.Errorf("the stored secret reads as %x, %v; want %s", got, err, before)
	}
	at := time.Date(2025, 4, 1, 12, 0, 0, 0, time.UTC)
	e := &Entry{ID: "newentry0001", Hash: "newhash", SubmittedAt: at, StartedAt: at, Status: "ok", Kind: "run", Runs: 1,
		Headline: 50, HeadlineUnit: "tps", Better: "higher", Facets: map[string]string{"workload": "oltp_read_only", "status": "ok"},
		Document: []byte("{}")}
	if _, created, _, err := s.Put(ctx, e, nil); err != nil || !created {
		t.Fatalf("put beside the old entries: created %v, %v", created, err)
	}
	rows, _, err := s.List(ctx, Query{Filters: map[string]string{"workload": "oltp_read_only"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Errorf("listed %d entries, want the new one and the shown old one", len(rows))
	}
	if err := s.Delete(ctx, "oldentry0002"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "oldentry0002"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
	var moderation int
	if err := s.db.QueryRowContext(ctx, "SELECT value FROM site_state WHERE name = 'moderation'").Scan(&moderation); err != nil || moderation != 2 {
		t.Errorf("moderation counter %d, %v; want 2 (one before, one now)", moderation, err)
	}
}

func gunzip(t *testing.T, from, to string) {
	t.Helper()
	f, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// catalog describes the store's schema as text, one line per column and
// index, in a stable order and without the names of the test's schema.
func catalog(ctx context.Context, s *Store) (string, error) {
	var qs []string
	if s.pg {
		qs = []string{
			`SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' nullable=' || is_nullable ||
				' default=' || COALESCE(column_default, '-') || ' identity=' || is_identity || ' ' || COALESCE(identity_generation, '-')
			 FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
			`SELECT 'index ' || indexname || ' ' || replace(indexdef, current_schema() || '.', '')
			 FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname`,
			`SELECT 'version ' || version_id FROM site_goose_version ORDER BY version_id`,
			`SELECT 'state ' || name || '=' || value FROM site_state ORDER BY name`,
		}
	} else {
		qs = []string{
			`SELECT 'column ' || m.name || '.' || c.name || ' ' || c.type || ' notnull=' || c."notnull" ||
				' default=' || COALESCE(c.dflt_value, '-') || ' pk=' || c.pk
			 FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' ORDER BY m.name, c.cid`,
			`SELECT 'index ' || name || ' on ' || tbl_name || ' ' || COALESCE(sql, '(automatic)')
			 FROM sqlite_master WHERE type = 'index' ORDER BY name`,
			`SELECT 'version ' || version_id FROM site_goose_version ORDER BY version_id`,
			`SELECT 'state ' || name || '=' || value FROM site_state ORDER BY name`,
		}
	}
	var b strings.Builder
	for _, q := range qs {
		if err := lines(ctx, s.db, q, &b); err != nil {
			return "", fmt.Errorf("read catalog: %w", err)
		}
	}
	return b.String(), nil
}

func lines(ctx context.Context, db *sql.DB, q string, b *strings.Builder) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return err
		}
		b.WriteString(l + "\n")
	}
	return rows.Err()
}

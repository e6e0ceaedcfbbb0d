package sitestore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Rederive brings the columns derived from each stored document (the
// headline and what it is of, the comparable key, the facets) up to the
// rules of version, once: entries stored under older rules (a sweep's
// headline its best run, no durability) are derived again by derive from
// their documents. A store already at version is left alone; servers that
// start together may each do it, to the same end. Every server's facet
// index is built again after.
func (s *Store) Rederive(ctx context.Context, version int64, derive func(doc []byte) (*Entry, error)) (int, error) {
	if _, err := s.w.ExecContext(ctx, "INSERT INTO site_state (name, value) VALUES ('derived', 0) ON CONFLICT (name) DO NOTHING"); err != nil {
		return 0, fmt.Errorf("site store: rederive: %w", err)
	}
	var at int64
	if err := s.db.QueryRowContext(ctx, "SELECT value FROM site_state WHERE name = 'derived'").Scan(&at); err != nil {
		return 0, fmt.Errorf("site store: rederive: %w", err)
	}
	if at >= version {
		return 0, nil
	}
	fc := facetColumns()
	set := []string{"headline = ?", "headline_of = ?", "comparable = ?", "search = ?"}
	for _, c := range fc {
		set = append(set, c+" = ?")
	}
	update := s.q("UPDATE entries SET " + strings.Join(set, ", ") + " WHERE id = ?")
	n := 0
	for after := ""; ; {
		// A page of documents at a time, by id: memory stays that of a page.
		rows, err := s.db.QueryContext(ctx, s.q("SELECT id, document FROM documents WHERE id > ? ORDER BY id LIMIT 100"), after)
		if err != nil {
			return n, fmt.Errorf("site store: rederive: %w", err)
		}
		type doc struct {
			id  string
			doc []byte
		}
		var page []doc
		for rows.Next() {
			var d doc
			var text string
			if err := rows.Scan(&d.id, &text); err != nil {
				rows.Close()
				return n, fmt.Errorf("site store: rederive: %w", err)
			}
			d.doc = []byte(text)
			page = append(page, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return n, fmt.Errorf("site store: rederive: %w", err)
		}
		if len(page) == 0 {
			break
		}
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return n, fmt.Errorf("site store: rederive: %w", err)
		}
		for _, d := range page {
			e, err := derive(d.doc)
			if err != nil {
				tx.Rollback()
				return n, fmt.Errorf("site store: rederive %s: %w", d.id, err)
			}
			args := []any{e.Headline, e.HeadlineOf, e.Comparable, searchText(&Entry{ID: d.id, Facets: e.Facets})}
			for _, c := range fc {
				args = append(args, e.Facets[c])
			}
			if _, err := tx.ExecContext(ctx, update, append(args, d.id)...); err != nil {
				tx.Rollback()
				return n, fmt.Errorf("site store: rederive %s: %w", d.id, err)
			}
			n++
		}
		if err := tx.Commit(); err != nil {
			return n, fmt.Errorf("site store: rederive: %w", err)
		}
		after = page[len(page)-1].id
	}
	setVersion := func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, s.q("UPDATE site_state SET value = ? WHERE name = 'derived'"), version)
		return err
	}
	if n == 0 {
		_, err := s.w.ExecContext(ctx, s.q("UPDATE site_state SET value = ? WHERE name = 'derived'"), version)
		return 0, err
	}
	return n, s.moderate(ctx, "rederive", "", setVersion)
}

package sitestore

import (
	"context"
	"fmt"
)

// FromSource returns every entry a from-source leaderboard of workload
// ("" for all) ranks: ok runs of unreleased builds (built from source or
// modified), not hidden. They are never ranked with released builds.
func (s *Store) FromSource(ctx context.Context, workload string) ([]Entry, error) {
	return s.rankable(ctx, workload, false)
}

// rankable returns the ok, visible entries of workload ("" for all) from
// released builds or from the others.
func (s *Store) rankable(ctx context.Context, workload string, released bool) ([]Entry, error) {
	rows, err := s.db.QueryContext(ctx, s.q("SELECT "+listColumns()+" FROM entries WHERE (workload = ? OR ? = '') AND status = 'ok' AND released = ? AND hidden = 0 ORDER BY seq"),
		workload, workload, boolInt(released))
	if err != nil {
		return nil, fmt.Errorf("site store: leaderboard: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, _, err := scanEntry(rows, false)
		if err != nil {
			return nil, fmt.Errorf("site store: leaderboard: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/dbmark/dbmark/internal/redact"
	"github.com/dbmark/dbmark/internal/result"
)

// ErrSweepNotFound is returned (wrapped) when no sweep matches.
var ErrSweepNotFound = errors.New("sweep not found")

const upsertSweepSQL = `
INSERT INTO sweeps (uuid, started_at, workload, status, document)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (uuid) DO UPDATE SET
    started_at = excluded.started_at,
    workload = excluded.workload,
    status = excluded.status,
    document = excluded.document
RETURNING id`

func validSweepStatus(s result.SweepStatus) bool {
	switch s {
	case result.SweepRunning, result.SweepDone, result.SweepInterrupted, result.SweepFailed:
		return true
	}
	return false
}

func (s *sqlStore) SaveSweep(ctx context.Context, sw *result.Sweep) (ID, error) {
	if sw == nil {
		return 0, errors.New("store: save sweep: no sweep")
	}
	u, err := uuid.Parse(sw.ID)
	if err != nil {
		return 0, fmt.Errorf("store: save sweep %s: id is not a UUID: %w", sw.ID, err)
	}
	if !validSweepStatus(sw.Status) {
		return 0, fmt.Errorf("store: save sweep %s: status %q is not running, done, interrupted or failed", sw.ID, sw.Status)
	}
	if sw.StartedAt.IsZero() {
		return 0, fmt.Errorf("store: save sweep %s: start time is not set", sw.ID)
	}
	doc, err := redact.Secrets(sw) // as a run's: no secret is stored
	if err != nil {
		return 0, fmt.Errorf("store: save sweep %s: encode: %w", sw.ID, err)
	}
	// Update first: a sweep is saved again at every change of status, and
	// an upsert would draw a new id from the sequence each time, leaving
	// gaps between the ids people type.
	var id ID
	err = s.db.QueryRowContext(ctx, s.d.rebind(`UPDATE sweeps SET started_at = ?, workload = ?, status = ?, document = ? WHERE uuid = ? RETURNING id`),
		s.d.timeArg(sw.StartedAt), sw.Workload, string(sw.Status), string(doc), u.String()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = s.db.QueryRowContext(ctx, s.d.rebind(upsertSweepSQL),
			u.String(), s.d.timeArg(sw.StartedAt), sw.Workload, string(sw.Status), string(doc)).Scan(&id)
	}
	if err != nil {
		return 0, fmt.Errorf("store: save sweep %s: %w", sw.ID, err)
	}
	return id, nil
}

func (s *sqlStore) GetSweep(ctx context.Context, id ID) (*result.Sweep, error) {
	var doc []byte
	err := s.db.QueryRowContext(ctx, s.d.rebind(`SELECT document FROM sweeps WHERE id = ?`), id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: get sweep %d: %w", id, ErrSweepNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get sweep %d: %w", id, err)
	}
	var sw result.Sweep
	if err := json.Unmarshal(doc, &sw); err != nil {
		return nil, fmt.Errorf("store: get sweep %d: decode: %w", id, err)
	}
	return &sw, nil
}

func (s *sqlStore) ResolveSweep(ctx context.Context, ref string) (ID, error) {
	ref = strings.ToLower(strings.TrimSpace(ref))
	id, err := s.resolve(ctx, sweepsTable, ref)
	if errors.Is(err, ErrNotFound) {
		err = ErrSweepNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("store: resolve sweep %q: %w", ref, err)
	}
	return id, nil
}

func (s *sqlStore) SweepRuns(ctx context.Context, sweepID string) ([]*result.Result, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT document FROM runs WHERE sweep_id = ? ORDER BY id`), sweepID)
	if err != nil {
		return nil, fmt.Errorf("store: runs of sweep %s: %w", sweepID, err)
	}
	defer rows.Close()
	var out []*result.Result
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("store: runs of sweep %s: %w", sweepID, err)
		}
		r, err := result.Unmarshal(doc)
		if err != nil {
			return nil, fmt.Errorf("store: runs of sweep %s: %w", sweepID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: runs of sweep %s: %w", sweepID, err)
	}
	return out, nil
}

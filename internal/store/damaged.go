package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/store/sqlite"
)

// sqliteStore is the shared store on a SQLite file, whose errors say so
// when the file turns out damaged: a store can open cleanly and still fail
// on a page it had not read yet.
type sqliteStore struct {
	*sqlStore
	path string
}

func (s *sqliteStore) explain(err error) error {
	var d *sqlite.DamagedError
	if err == nil || errors.As(err, &d) {
		return err
	}
	if errors.As(sqlite.Damaged(s.path, err), &d) {
		return fmt.Errorf("store: %w", d)
	}
	return err
}

func (s *sqliteStore) Save(ctx context.Context, r *result.Result) (ID, error) {
	id, err := s.sqlStore.Save(ctx, r)
	return id, s.explain(err)
}

func (s *sqliteStore) Get(ctx context.Context, id ID) (*result.Result, error) {
	r, err := s.sqlStore.Get(ctx, id)
	return r, s.explain(err)
}

func (s *sqliteStore) Resolve(ctx context.Context, ref string) (ID, error) {
	id, err := s.sqlStore.Resolve(ctx, ref)
	return id, s.explain(err)
}

func (s *sqliteStore) List(ctx context.Context, f Filter) ([]Summary, error) {
	rows, err := s.sqlStore.List(ctx, f)
	return rows, s.explain(err)
}

func (s *sqliteStore) Delete(ctx context.Context, id ID) error {
	return s.explain(s.sqlStore.Delete(ctx, id))
}

func (s *sqliteStore) SaveSweep(ctx context.Context, sw *result.Sweep) (ID, error) {
	id, err := s.sqlStore.SaveSweep(ctx, sw)
	return id, s.explain(err)
}

func (s *sqliteStore) GetSweep(ctx context.Context, id ID) (*result.Sweep, error) {
	sw, err := s.sqlStore.GetSweep(ctx, id)
	return sw, s.explain(err)
}

func (s *sqliteStore) ResolveSweep(ctx context.Context, ref string) (ID, error) {
	id, err := s.sqlStore.ResolveSweep(ctx, ref)
	return id, s.explain(err)
}

func (s *sqliteStore) SweepRuns(ctx context.Context, sweepID string) ([]*result.Result, error) {
	runs, err := s.sqlStore.SweepRuns(ctx, sweepID)
	return runs, s.explain(err)
}

package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/store"
)

// NewSweep returns a sweep record with every field set.
func NewSweep(id string, started time.Time) *result.Sweep {
	return &result.Sweep{
		SchemaVersion: result.SchemaVersion,
		ID:            id,
		Workload:      "oltp_point_select",
		Command:       []string{"dbmark", "sweep", "oltp_point_select", "--threads", "1,8", "--iterations", "3"},
		Args:          []string{"--threads", "1,8", "--tables", "2:4:2", "--note", `"quoted" é`},
		Axes:          []result.SweepAxis{{Name: "threads", Values: []string{"1", "8"}}, {Name: "tables", Values: []string{"2", "4"}}},
		Zip:           [][]string{{"threads", "tables"}},
		Iterations:    3,
		UntilCV:       0.03,
		MaxIterations: 10,
		Headline:      "tps",
		Better:        "higher",
		StartedAt:     started.UTC(),
		Status:        result.SweepRunning,
	}
}

func testSweeps(t *testing.T, s store.Store) {
	ctx := context.Background()
	sw := NewSweep(newUUID("5eeb"), baseTime())
	id, err := s.SaveSweep(ctx, sw)
	if err != nil || id <= 0 {
		t.Fatalf("save sweep: %d, %v", id, err)
	}
	got, err := s.GetSweep(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, sw) {
		t.Fatalf("stored sweep differs\nwant %+v\ngot  %+v", sw, got)
	}

	// Its status changes as it runs: the same record, the same ID.
	sw.Status, sw.EndedAt, sw.Error = result.SweepInterrupted, sw.StartedAt.Add(time.Minute), "interrupted"
	id2, err := s.SaveSweep(ctx, sw)
	if err != nil || id2 != id {
		t.Fatalf("save again: id %d, %v; want %d", id2, err, id)
	}
	if got, _ := s.GetSweep(ctx, id); got == nil || got.Status != result.SweepInterrupted || !got.EndedAt.Equal(sw.EndedAt) {
		t.Fatalf("after saving again: %+v", got)
	}

	for _, ref := range []string{"1", sw.ID, sw.ID[:6], "  " + sw.ID[:8] + " "} {
		if r, err := s.ResolveSweep(ctx, ref); err != nil || r != id {
			t.Errorf("resolve sweep %q = %d, %v; want %d", ref, r, err, id)
		}
	}
	for _, ref := range []string{"99", uuid.NewString(), "ffff0"} {
		if _, err := s.ResolveSweep(ctx, ref); !errors.Is(err, store.ErrSweepNotFound) {
			t.Errorf("resolve sweep %q: %v; want ErrSweepNotFound", ref, err)
		}
	}
	if _, err := s.GetSweep(ctx, id+100); !errors.Is(err, store.ErrSweepNotFound) {
		t.Errorf("get missing sweep: %v", err)
	}
	// Sweeps and runs have IDs of their own: run 1 is not sweep 1.
	if _, err := s.Resolve(ctx, "1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("sweep 1 resolved as a run: %v", err)
	}

	// Saving again draws no id: the next sweep is the next number.
	next, err := s.SaveSweep(ctx, NewSweep(newUUID("0e07"), baseTime()))
	if err != nil || next != id+1 {
		t.Errorf("next sweep: id %d, %v; want %d", next, err, id+1)
	}

	bad := NewSweep(newUUID("bad0"), baseTime())
	bad.Status = "paused"
	if _, err := s.SaveSweep(ctx, bad); err == nil {
		t.Error("saved a sweep with status paused")
	}

	// Its runs, in the order saved, and no other.
	var want []string
	for i := range 3 {
		r := NewResult(newUUID(""), baseTime().Add(time.Duration(-i)*time.Hour)) // started earlier, saved later
		r.Sweep = &result.SweepRef{ID: sw.ID, Cell: map[string]string{"threads": "8"}, Iteration: i + 1}
		mustSave(t, s, r)
		want = append(want, r.ID)
	}
	other := NewResult(newUUID(""), baseTime())
	mustSave(t, s, other) // its sweep is "sweep-1"
	lone := NewResult(newUUID(""), baseTime())
	lone.Sweep = nil
	mustSave(t, s, lone)
	runs, err := s.SweepRuns(ctx, sw.ID)
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []string
	for _, r := range runs {
		gotIDs = append(gotIDs, r.ID)
	}
	if !reflect.DeepEqual(gotIDs, want) {
		t.Fatalf("runs of the sweep = %v, want %v", gotIDs, want)
	}
	if runs[2].Sweep == nil || runs[2].Sweep.Iteration != 3 || runs[2].Sweep.Cell["threads"] != "8" {
		t.Fatalf("sweep reference lost: %+v", runs[2].Sweep)
	}
	if none, err := s.SweepRuns(ctx, uuid.NewString()); err != nil || len(none) != 0 {
		t.Fatalf("runs of an unknown sweep: %v, %v", none, err)
	}
}

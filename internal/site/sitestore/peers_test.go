package sitestore

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// peerEntry is a released run in the set k.
func peerEntry(i int, headline float64) *Entry {
	e := testEntry(fmt.Sprintf("peer%08d", i))
	e.SubmittedAt, e.StartedAt = time.Now(), time.Now()
	e.Released, e.Headline, e.Comparable = true, headline, "c"
	e.Peer = &Peer{Key: "k", Workload: "w", Label: "E 1, threads 1", Facts: map[string]string{"fs": "ext4"}}
	return e
}

// Two servers on one store see each other's results in a set's standing
// at once, and a hide and a delete by either.
func TestStandingFollowsTheStore(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		a := openStore(t, dsn)
		b := openStore(t, dsn)
		if err := b.WarmStanding(ctx); err != nil {
			t.Fatal(err)
		}
		if ps, err := b.Standing(ctx, "k"); err != nil || ps != nil {
			t.Fatalf("an empty set: %+v, %v", ps, err)
		}
		for i := range 5 {
			if _, _, _, err := a.Put(ctx, peerEntry(i, float64(100+i)), nil); err != nil {
				t.Fatal(err)
			}
		}
		count := func(s *Store) int {
			t.Helper()
			ps, err := s.Standing(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			if ps.Label != "E 1, threads 1" || ps.Workload != "w" || ps.Better != "higher" {
				t.Errorf("set read back as %+v", ps)
			}
			return ps.Analysis.Len()
		}
		if n := count(b); n != 5 {
			t.Errorf("the other server sees %d results, want 5", n)
		}
		a.Put(ctx, peerEntry(5, 1), nil)
		if n := count(b); n != 6 {
			t.Errorf("after one more, %d", n)
		}
		if err := b.SetHidden(ctx, "peer00000001", true); err != nil {
			t.Fatal(err)
		}
		if n := count(a); n != 5 {
			t.Errorf("after a hide on the other server, %d", n)
		}
		if err := a.Delete(ctx, "peer00000002"); err != nil {
			t.Fatal(err)
		}
		if na, nb := count(a), count(b); na != 4 || nb != 4 {
			t.Errorf("after a delete, %d and %d", na, nb)
		}
		// A server started now reads the same.
		c := openStore(t, dsn)
		if err := c.WarmStanding(ctx); err != nil {
			t.Fatal(err)
		}
		if n := count(c); n != 4 {
			t.Errorf("a new server sees %d", n)
		}
	})
}

// Pages read a set while results are stored into it (go test -race).
func TestStandingConcurrent(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir()+"/site.db")
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 3 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				ps, err := s.Standing(ctx, "k")
				if err != nil {
					errs <- err
					return
				}
				if ps != nil {
					ps.Analysis.Percentile(100, false)
					_ = ps.Analysis.Findings
				}
			}
		}()
	}
	for i := range 40 {
		if _, _, _, err := s.Put(ctx, peerEntry(i, float64(100+i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	ps, err := s.Standing(ctx, "k")
	if err != nil || ps.Analysis.Len() != 40 {
		t.Fatalf("%v, %v", ps, err)
	}
}

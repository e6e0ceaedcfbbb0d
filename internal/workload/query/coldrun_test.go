package query

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/sqlite"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

// fakeCold counts the cold steps, each taking a while, without touching
// the machine's page cache.
type fakeCold struct{ drops, restarts atomic.Int32 }

func (f *fakeCold) check(target.Target, *Options) error { return nil }
func (f *fakeCold) dropCache() (bool, error) {
	f.drops.Add(1)
	time.Sleep(50 * time.Millisecond)
	return true, nil
}
func (f *fakeCold) restart(context.Context, string, target.Target) error {
	f.restarts.Add(1)
	return nil
}

// With --cold, each query's first iteration is made cold once, through a
// new connection after the restart, and the time that takes is not the
// suite's.
func TestColdRunsBeforeEachQuery(t *testing.T) {
	ctx := context.Background()
	tg := sqlite.New(filepath.Join(t.TempDir(), "cold.db"))
	defer tg.Close()
	fc := &fakeCold{}
	s := NewSuite()
	s.cold = fc
	s.opt.Cold, s.opt.RestartCmd, s.opt.Iterations = true, []string{"restart"}, 2
	qs := []Query{{Label: "a", SQL: "SELECT 1"}, {Label: "b", SQL: "SELECT 2"}, {Label: "c", SQL: "SELECT 3"}}
	load, err := s.Load(ctx, workload.Env{Target: tg, Seed: 1}, qs)
	if err != nil {
		t.Fatal(err)
	}
	cfg := runner.Config{Threads: 1, SelfLimited: true, MaxTries: 1, Percentiles: []float64{50}}
	out := sqlclient.Run(ctx, cfg, tg, load, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if out.Status != result.StatusOK {
		t.Fatalf("status %s: %v", out.Status, out.Err)
	}
	res := &result.Result{Status: out.Status, StartedAt: out.StartedAt}
	load.Finish(ctx, res)
	if fc.drops.Load() != 3 || fc.restarts.Load() != 3 {
		t.Errorf("%d drops and %d restarts, want one of each per query (3)", fc.drops.Load(), fc.restarts.Load())
	}
	q := res.Queries
	if !q.Cold || !q.Restarted || !q.Dropped || res.Status != result.StatusOK {
		t.Errorf("queries %+v, status %s (%s)", q, res.Status, res.Error)
	}
	// Three cold steps of 50 ms each are left out of the suite's time,
	// and the first, before the suite's first run, is not taken out of it.
	if q.TotalS >= 0.1 || q.TotalS <= 0 {
		t.Errorf("the suite took %v s: want its runs' time alone, the cold steps between them left out", q.TotalS)
	}
	for _, one := range q.List {
		if one.Errors != 0 || len(one.Runs) != 2 || one.ColdS <= 0 {
			t.Errorf("%s: %+v", one.Label, one)
		}
	}
}

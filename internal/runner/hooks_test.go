package runner_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

// observed is a worker that sleeps per event and records what the
// runner tells it.
type observed struct {
	scriptWorker
	sleep time.Duration
	mu    *sync.Mutex
	seen  map[workload.EventStatus]int
}

func (w *observed) Event(ctx context.Context, retry bool) (metrics.Op, error) {
	time.Sleep(w.sleep)
	return w.scriptWorker.Event(ctx, retry)
}

func (w *observed) Observe(e workload.EventInfo) {
	w.mu.Lock()
	w.seen[e.Status]++
	w.mu.Unlock()
}

// TestSkipLateUnderRate overloads one worker (10 ms events at 1000/s)
// with a 5 ms SkipLate: most events are skipped, each one is observed,
// and with CountFailed skipped events count toward the limit.
func TestSkipLateUnderRate(t *testing.T) {
	tg := counterTable(t, "")
	var mu sync.Mutex
	seen := map[workload.EventStatus]int{}
	load := script(increment)
	inner := load.NewWorker
	load.NewWorker = func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
		w, err := inner(ctx, seat)
		if err != nil {
			return nil, err
		}
		return &observed{scriptWorker: *w.(*scriptWorker), sleep: 10 * time.Millisecond, mu: &mu, seen: seen}, nil
	}
	load.Observe = func(w workload.Worker, e workload.EventInfo) { w.(*observed).Observe(e) }
	cfg := runner.Config{Threads: 1, Events: 200, Rate: 1000, MaxTries: 1, Percentiles: []float64{50},
		SkipLate: 5 * time.Millisecond, CountFailed: true, Seed: 1}
	out := sqlclient.Run(context.Background(), cfg, tg, load, nil, quiet)
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	committed, skipped := seen[workload.EventCommitted], seen[workload.EventSkipped]
	if committed+skipped != 200 || int64(committed) != out.Summary.Events {
		t.Fatalf("committed %d + skipped %d, want 200; summary events %d", committed, skipped, out.Summary.Events)
	}
	if skipped < 100 {
		t.Fatalf("only %d of 200 skipped at ten times the possible rate", skipped)
	}
}

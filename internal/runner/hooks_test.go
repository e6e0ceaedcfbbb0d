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

// TestQuietCommitsObservesTheRest: with Load.QuietCommits, Observe is
// told of the failed events and of those committed after a retry, never
// of one committed at its first try; without it, of every event. The
// counter's row is locked for the first 300 ms, so early events fail
// after their tries and later ones commit.
func TestQuietCommitsObservesTheRest(t *testing.T) {
	for _, q := range []bool{false, true} {
		tg, holder := lockedCounter(t)
		time.AfterFunc(300*time.Millisecond, func() { holder.Exec(context.Background(), "COMMIT") })
		var mu sync.Mutex
		seen := map[workload.EventStatus]int{}
		firstTry := 0
		load := script(increment)
		load.QuietCommits = q
		load.Observe = func(_ workload.Worker, e workload.EventInfo) {
			mu.Lock()
			defer mu.Unlock()
			seen[e.Status]++
			if e.Status == workload.EventCommitted && e.Tries == 1 {
				firstTry++
			}
		}
		c := cfg()
		c.Duration, c.MaxTries, c.CountFailed = 600*time.Millisecond, 3, true
		out := sqlclient.Run(context.Background(), c, tg, load, nil, quiet)
		if out.Err != nil {
			t.Fatal(out.Err)
		}
		s := out.Summary
		committed := s.Events + s.DrainEvents
		if committed == 0 || seen[workload.EventFailed] == 0 {
			t.Fatalf("quiet %v: %d committed, %d failed observed: want both > 0", q, committed, seen[workload.EventFailed])
		}
		if q && firstTry != 0 {
			t.Errorf("quiet: %d events committed at their first try observed; want none", firstTry)
		}
		if !q && int64(seen[workload.EventCommitted]) != committed {
			t.Errorf("not quiet: %d commits observed; want every one, %d", seen[workload.EventCommitted], committed)
		}
	}
}

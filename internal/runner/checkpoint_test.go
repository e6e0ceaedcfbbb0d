package runner_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

// TestCheckpointsSplitTheRun gives a 1.5 s run of 0.1 s events checkpoints
// at 0.5 s and 1 s (and one past its end): each span counts what its
// clients did since the one before, at its time, and the spans add up to
// the run's events, the last one closed by the run's end.
func TestCheckpointsSplitTheRun(t *testing.T) {
	tg := counterTable(t, "")
	c := cfg()
	c.Threads, c.Duration = 2, 1500*time.Millisecond
	c.ReportInterval = 300 * time.Millisecond // the live lines' ticks go on between checkpoints
	c.Checkpoints = []time.Duration{0, 500 * time.Millisecond, time.Second, 10 * time.Second}
	var mu sync.Mutex
	var got []runner.Span
	c.OnCheckpoint = func(s runner.Span) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	}
	out := sqlclient.Run(context.Background(), c, tg, slowIncrement(100*time.Millisecond), func(result.Interval, int) {}, quiet)
	if out.Status != result.StatusOK {
		t.Fatalf("status %s: %v", out.Status, out.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("run: %d events, %d drained, %.3f s, series %d points, fairness %+v", out.Summary.Events, out.Summary.DrainEvents, out.Summary.DurationS, len(out.Series), *out.Summary.Fairness)
	// A checkpoint the ticker reaches late is reported late, and one
	// already past then is skipped, as sysbench skips it: on a loaded
	// machine the second may go.
	if len(got) < 2 || len(got) > 3 {
		t.Fatalf("%d spans, want the checkpoints at 0.5 s and 1 s (0 is past at the start, 10 s after the end) and the last: %+v", len(got), got)
	}
	var events int64
	for i, s := range got {
		t.Logf("span %d: at %v, %.3f s, %d events, fairness %+v", i, s.At, s.Seconds, s.Events, *s.Fairness)
		events += s.Events
		if s.Final != (i == len(got)-1) || s.Unfinished != 0 {
			t.Errorf("span %d: final %v, unfinished %d", i, s.Final, s.Unfinished)
		}
		// 2 clients of 10 events/s each.
		if s.Events == 0 || s.Writes != 0 || s.Latency == nil || s.Latency.MinMS < 95 {
			t.Errorf("span %d: %d events, %d writes, latency %+v; want events of 100 ms", i, s.Events, s.Writes, s.Latency)
		}
		// A client commits an event just before it records it: one each
		// may be in the counts and not yet in the metrics.
		if s.Fairness == nil || math.Abs(s.Fairness.EventsMean*2-float64(s.Events)) > 2 {
			t.Errorf("span %d: fairness %+v does not share its %d events", i, s.Fairness, s.Events)
		}
		if i > 0 && math.Abs((got[i].At-got[i-1].At).Seconds()-s.Seconds) > 0.01 {
			t.Errorf("span %d: %.3f s long, but %v after the span before", i, s.Seconds, got[i].At-got[i-1].At)
		}
	}
	if at := got[0].At; at < 500*time.Millisecond || at > time.Second || got[0].Seconds != at.Seconds() {
		t.Errorf("the first checkpoint at %v, %.3f s after the start; want at 0.5 s", at, got[0].Seconds)
	}
	if len(got) == 3 && got[1].At < time.Second {
		t.Errorf("the second checkpoint at %v; want 1 s or later", got[1].At)
	}
	if all := out.Summary.Events + out.Summary.DrainEvents; events != all {
		t.Errorf("the spans count %d events, the run %d", events, all)
	}
}

// TestDrainCutsOffEventsUnderWay ends the drain after the time limit
// early (sysbench's --forced-shutdown): the event under way is cut off
// there, and the last span counts it as unfinished.
func TestDrainCutsOffEventsUnderWay(t *testing.T) {
	tg := counterTable(t, "")
	c := cfg()
	c.Duration, c.Drain = 300*time.Millisecond, 200*time.Millisecond
	var last runner.Span
	c.OnCheckpoint = func(s runner.Span) { last = s }
	start := time.Now()
	sqlclient.Run(context.Background(), c, tg, slowIncrement(time.Minute), nil, quiet)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the run took %v; want the limit and the 0.2 s drain", took)
	}
	if !last.Final || last.Unfinished != 1 || last.Events != 0 || last.Fairness.EventsMean != 1 || last.Fairness.BusyStdDevS < 0.45 {
		t.Errorf("last span %+v (fairness %+v); want 1 unfinished event, counted in the fairness with its 0.5 s", last, last.Fairness)
	}
}

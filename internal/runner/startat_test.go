package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

// TestStartAtStartsTheWindowOnTheInstant: the clients run as warm-up
// until Config.StartAt, and the measured window begins there, however
// short the --warmup asked.
func TestStartAtStartsTheWindowOnTheInstant(t *testing.T) {
	tg := counterTable(t, "")
	c := cfg()
	c.Threads, c.Duration, c.ReportInterval = 2, 500*time.Millisecond, 100*time.Millisecond
	c.Warmup = 50 * time.Millisecond
	c.StartAt = time.Now().Add(700 * time.Millisecond)
	var first result.Interval
	var warm int
	out := sqlclient.Run(context.Background(), c, tg, script(increment), func(p result.Interval, _ int) {
		if p.Warmup {
			warm++
		} else if first.DurationS == 0 {
			first = p
		}
	}, quiet)
	if out.Status != result.StatusOK || warm == 0 {
		t.Fatalf("status %s, %d warm-up intervals: %v", out.Status, warm, out.Err)
	}
	began := out.StartedAt.Add(time.Duration((first.T - first.DurationS) * float64(time.Second)))
	// The tick that ends the warm-up may come up to a tenth of the
	// interval early; a loaded machine may deliver it late. Without the
	// alignment it would come 0.65 s early.
	if d := began.Sub(c.StartAt); d < -15*time.Millisecond || d > 250*time.Millisecond {
		t.Fatalf("measuring began %v from StartAt", d)
	}
	if out.EndedAt.Before(c.StartAt.Add(c.Duration)) || out.StartedAt.After(c.StartAt) {
		t.Fatalf("run from %v to %v, StartAt %v", out.StartedAt, out.EndedAt, c.StartAt)
	}
	if d := out.Summary.DurationS; d < 0.45 || d > 0.7 {
		t.Fatalf("measured %.3fs, want the 0.5s after StartAt", d)
	}
}

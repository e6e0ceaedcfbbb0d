package runner_test

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

// burning is a load whose events hash a buffer rounds times while busy(t)
// holds for the time since the run began, then sleep a millisecond: CPU
// work of a fixed size, whatever the machine's load.
func burning(busy func(since time.Duration) bool) *workload.Load {
	began := time.Now()
	buf := make([]byte, 64<<10)
	return &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
			return workerFunc(func(ctx context.Context) error {
				if busy(time.Since(began)) {
					for range 20 {
						sha256.Sum256(buf)
					}
				}
				time.Sleep(time.Millisecond)
				return nil
			}), nil
		},
	}
}

// The client's CPU is recorded over the measured window: events that burn
// CPU cost several times what sleeping ones do per event, and CPU burnt
// in the warm-up alone is not counted.
func TestClientCPUIsTheWindows(t *testing.T) {
	tg := counterTable(t, "")
	run := func(busy func(time.Duration) bool) *result.ClientCPU {
		t.Helper()
		c := cfg()
		c.Warmup, c.Duration = 400*time.Millisecond, 600*time.Millisecond
		out := sqlclient.Run(context.Background(), c, tg, burning(busy), nil, quiet)
		if out.Status != result.StatusOK {
			t.Fatalf("run: %s %v", out.Status, out.Err)
		}
		cc := out.Summary.Client
		if cc == nil || cc.CPUs < 1 || cc.MachineShare <= 0 || cc.MachineShare > 1.05 || cc.PerEventUS <= 0 {
			t.Fatalf("client CPU %+v", cc)
		}
		want := (cc.UserS + cc.SystemS) / float64(out.Summary.Events) * 1e6
		if d := cc.PerEventUS - want; d > 0.01 || d < -0.01 {
			t.Fatalf("%.2f µs per event, but %.6f s over %d events", cc.PerEventUS, cc.UserS+cc.SystemS, out.Summary.Events)
		}
		return cc
	}
	idle := run(func(time.Duration) bool { return false })
	busy := run(func(time.Duration) bool { return true })
	warm := run(func(since time.Duration) bool { return since < 300*time.Millisecond })
	t.Logf("µs per event: idle %.1f, busy %.1f, busy in the warm-up only %.1f", idle.PerEventUS, busy.PerEventUS, warm.PerEventUS)
	if busy.PerEventUS < 3*idle.PerEventUS {
		t.Errorf("busy events cost %.1f µs of CPU each, idle ones %.1f: the work is not counted", busy.PerEventUS, idle.PerEventUS)
	}
	if warm.PerEventUS > busy.PerEventUS/2 {
		t.Errorf("events busy only in the warm-up cost %.1f µs each, busy ones %.1f: the warm-up is counted", warm.PerEventUS, busy.PerEventUS)
	}
}

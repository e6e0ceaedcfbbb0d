package targettest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/testsrv"
)

// Releasing is e with its targets released from their threads before
// the suite uses them: each target e opens (Open, OwnServer), on the
// blocking transport as auto chooses it, has its connections wait out
// short server-side sleeps, as a workload whose server holds each
// statement for milliseconds does, until the engine releases them to the
// poller (target.ThreadHolder). The suite then runs on the released
// connections, whose reads and writes wait in Go's network poller under
// the same deadlines and Close, until a window of its short waits holds
// them again: so it covers the move back to their threads too, in
// whatever a case is doing then.
func Releasing(e Engine) Engine {
	open, own := e.Open, e.OwnServer
	e.Open = func(t *testing.T) target.Target {
		tg := open(t)
		Release(t, tg, e)
		return tg
	}
	if own != nil {
		e.OwnServer = func(t *testing.T) (target.Target, *testsrv.Server) {
			tg, s := own(t)
			Release(t, tg, e)
			return tg, s
		}
	}
	return e
}

// Release waits for tg's release (Releasing); tg is not closed.
func Release(t *testing.T, tg target.Target, e Engine) {
	t.Helper()
	h, ok := tg.(target.ThreadHolder)
	if !ok || !h.HoldsThreads() {
		t.Fatalf("a %T does not hold threads: nothing to release", tg)
	}
	const clients = 4
	within(t, 20*time.Second, "clients waiting to be released", func(ctx context.Context) {
		conns, err := connectN(ctx, t, tg, clients)
		if err != nil {
			t.Error(err)
			return
		}
		sql := e.SleepSQL(0.004)
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Go(func() {
				for h.HoldsThreads() && ctx.Err() == nil {
					if err := c.Exec(ctx, sql); err != nil {
						t.Errorf("a sleep before the release: %v", err)
						return
					}
				}
			})
		}
		wg.Wait()
		if h.HoldsThreads() {
			t.Errorf("connections sleeping 4 ms on the server each statement still hold their threads after %v", 20*time.Second)
			return
		}
		// Connections opened after the release start on the poller.
		c, err := tg.Connect(ctx)
		if err != nil {
			t.Errorf("connect after the release: %v", err)
			return
		}
		defer c.Close()
		if err := c.Exec(ctx, sql); err != nil {
			t.Errorf("a sleep after the release: %v", err)
		}
	})
	if sw := h.HoldSwitches(); len(sw) == 0 || !sw[len(sw)-1].Released || 4*sw[len(sw)-1].Long < sw[len(sw)-1].Of {
		t.Fatalf("released by %+v; want a window of a quarter or more long waits last", sw)
	}
}

// SharedRelease checks that two targets e opens share their Hold, as the
// servers of one run do (target.Options.Hold): releasing the first's
// connections releases the second's, which then run on the poller, and
// both tell the same moves.
func SharedRelease(t *testing.T, e Engine) {
	t.Helper()
	first, second := e.Open(t), e.Open(t)
	defer first.Close()
	defer second.Close()
	h, ok := second.(target.ThreadHolder)
	if !ok || !h.HoldsThreads() {
		t.Fatalf("a %T does not hold threads: nothing to release", second)
	}
	Release(t, first, e)
	if h.HoldsThreads() {
		t.Fatal("the first target's connections were released, the second's still hold their threads")
	}
	within(t, 10*time.Second, "a statement on the second target after the release", func(ctx context.Context) {
		c, err := second.Connect(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		if err := c.Exec(ctx, e.SleepSQL(0.001)); err != nil {
			t.Errorf("a sleep on the second target: %v", err)
		}
	})
	if a, b := first.(target.ThreadHolder).HoldSwitches(), h.HoldSwitches(); len(a) != len(b) || len(a) == 0 || a[0] != b[0] {
		t.Errorf("the targets tell different moves: %+v and %+v", a, b)
	}
}

package target

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// watched is a Watch whose Interrupt and Restore count their calls.
func watched() (*Watch, *atomic.Int32, *atomic.Int32) {
	var interrupts, restores atomic.Int32
	w := &Watch{Interrupt: func() { interrupts.Add(1) }, Restore: func() { restores.Add(1) }}
	return w, &interrupts, &restores
}

// waitFor polls cond for up to 5 s (the callback runs on a goroutine of
// its own).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5 s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWatchInterruptsTheStatementInFlight(t *testing.T) {
	w, interrupts, restores := watched()
	ctx, cancel := context.WithCancel(context.Background())
	if err := w.Begin(ctx); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	cancel()
	waitFor(t, "Interrupt after the context ended mid-statement", func() bool { return interrupts.Load() == 1 })
	if !w.End() {
		t.Error("End = false after an interrupt; want true")
	}
	if restores.Load() != 1 {
		t.Errorf("Restore called %d times; want 1", restores.Load())
	}
	if err := w.Begin(ctx); err == nil {
		t.Error("Begin under the ended context = nil; want its error")
	}
}

func TestWatchLeavesAConnectionBetweenStatementsAlone(t *testing.T) {
	w, interrupts, _ := watched()
	first, cancel := context.WithCancel(context.Background())
	for range 3 {
		if err := w.Begin(first); err != nil {
			t.Fatalf("Begin: %v", err)
		}
		if w.End() {
			t.Fatal("End = true with no interrupt")
		}
	}
	cancel()
	time.Sleep(20 * time.Millisecond)
	if n := interrupts.Load(); n != 0 {
		t.Errorf("Interrupt called %d times for a context that ended between statements; want 0", n)
	}
	if err := w.Begin(first); err != context.Canceled {
		t.Errorf("Begin under the ended context = %v; want %v", err, context.Canceled)
	}
	second, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	if err := w.Begin(second); err != nil {
		t.Fatalf("Begin under a new context: %v", err)
	}
	cancel2()
	waitFor(t, "Interrupt under the second context", func() bool { return interrupts.Load() == 1 })
	w.End()
	w.Release()
}

func TestWatchRegistersOncePerContext(t *testing.T) {
	w, _, _ := watched()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	allocs := testing.AllocsPerRun(1000, func() {
		if err := w.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		w.End()
	})
	if allocs != 0 {
		t.Errorf("Begin and End under one context allocate %.1f times a statement; want 0 (one registration per context)", allocs)
	}
	w.Release()
	if w.Begin(context.Background()) != nil || w.End() {
		t.Error("a context that cannot end: Begin must succeed and End report no interrupt")
	}
}

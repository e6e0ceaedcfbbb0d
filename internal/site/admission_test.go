package site

import (
	"context"
	"testing"
	"time"
)

func TestAdmission(t *testing.T) {
	ctx := context.Background()
	a := newAdmission(1, 50*time.Millisecond)
	if !a.acquire(ctx) {
		t.Fatal("an idle admission refused")
	}
	start := time.Now()
	if a.acquire(ctx) {
		t.Fatal("a second request got the only slot")
	}
	if waited := time.Since(start); waited < 40*time.Millisecond {
		t.Errorf("refused after %v, before the queue wait of 50ms", waited)
	}

	// A slot freed during the wait goes to the waiter.
	a.wait = 10 * time.Second
	got := make(chan bool)
	go func() { got <- a.acquire(ctx) }()
	time.Sleep(20 * time.Millisecond)
	a.release()
	select {
	case ok := <-got:
		if !ok {
			t.Fatal("the waiter was refused a freed slot")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not get the freed slot")
	}

	// A client that goes away stops waiting.
	cctx, cancel := context.WithCancel(ctx)
	go func() { got <- a.acquire(cctx) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case ok := <-got:
		if ok {
			t.Fatal("a cancelled waiter got a slot that was never freed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled waiter kept waiting")
	}
	a.release()
	if !a.acquire(ctx) {
		t.Fatal("the released slot was not free again")
	}
}

package site

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestCacheRefreshesInTheBackground(t *testing.T) {
	c := newCache[int64](time.Hour, 2)
	var calls atomic.Int64
	fn := func() (int64, error) { return calls.Add(1), nil }
	now := time.Now()
	if v, _ := c.get("a", now, fn); v != 1 {
		t.Fatalf("first get = %d", v)
	}
	if v, _ := c.get("a", now, fn); v != 1 || calls.Load() != 1 {
		t.Errorf("within the period: %d after %d calls, want the kept 1", v, calls.Load())
	}
	// Past the period: the kept value at once, a new one soon after.
	if v, _ := c.get("a", now.Add(2*time.Hour), fn); v != 1 {
		t.Errorf("stale get = %d, want the kept 1 while it refreshes", v)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if v, _ := c.get("a", now, fn); v == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stale value was never replaced")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := c.get("b", now, func() (int64, error) { return 0, errors.New("no") }); err == nil {
		t.Error("error not passed on")
	}
	if v, _ := c.get("b", now, fn); v != 3 {
		t.Errorf("an error was kept: %d", v)
	}
	c.reset()
	if v, _ := c.get("a", now, fn); v != 4 {
		t.Errorf("after reset: %d, want a new value", v)
	}
}

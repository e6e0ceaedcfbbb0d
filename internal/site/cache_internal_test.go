package site

import (
	"errors"
	"testing"
	"time"
)

func TestCacheKeepsForItsPeriod(t *testing.T) {
	c := newCache[int](10*time.Second, 2)
	calls := 0
	fn := func() (int, error) { calls++; return calls, nil }
	now := time.Unix(1000, 0)
	if v, _ := c.get("a", now, fn); v != 1 {
		t.Fatalf("first get = %d", v)
	}
	if v, _ := c.get("a", now.Add(9*time.Second), fn); v != 1 || calls != 1 {
		t.Errorf("within the period: %d after %d calls, want the kept 1", v, calls)
	}
	if v, _ := c.get("a", now.Add(10*time.Second), fn); v != 2 {
		t.Errorf("after the period: %d, want a new value", v)
	}
	if _, err := c.get("b", now, func() (int, error) { return 0, errors.New("no") }); err == nil {
		t.Error("error not passed on")
	}
	if v, _ := c.get("b", now, fn); v != 3 {
		t.Errorf("an error was kept: %d", v)
	}
	c.get("c", now.Add(10*time.Second), fn) // full: drops what expired
	if len(c.vals) > 2 {
		t.Errorf("%d values kept, cap 2", len(c.vals))
	}
	c.reset()
	if v, _ := c.get("a", now.Add(11*time.Second), fn); v != 5 {
		t.Errorf("after reset: %d, want a new value", v)
	}
}

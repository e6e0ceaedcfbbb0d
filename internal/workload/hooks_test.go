package workload

import (
	"testing"
	"time"
)

func TestClockRead(t *testing.T) {
	c := NewClock()
	time.Sleep(2 * time.Millisecond)
	before := time.Now()
	a := c.Read()
	time.Sleep(time.Millisecond)
	b := c.Read()
	after := time.Now()

	// Monotonic readings subtract exactly, even against time.Now's.
	if d := b.Sub(a); d < time.Millisecond || d > after.Sub(before) {
		t.Errorf("two reads 1 ms apart differ by %v (outside [1ms, %v])", d, after.Sub(before))
	}
	if a.Before(before) || b.After(after) {
		t.Errorf("reads %v, %v fall outside the time.Now calls around them (%v, %v)", a, b, before, after)
	}
	// The wall time is NewClock's plus the monotonic time since: within
	// the wall clock's own steps of time.Now.
	if d := b.Round(0).Sub(after.Round(0)); d > time.Second || d < -time.Second {
		t.Errorf("wall time of a read is %v off time.Now's", d)
	}

	var zero Clock
	z := zero.Read()
	if time.Since(z) < 0 || time.Since(z) > time.Second {
		t.Errorf("a zero Clock read %v, not the time now", z)
	}
}

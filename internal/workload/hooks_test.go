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

	// Readings subtract exactly, even against time.Now's.
	if d := b - a; d < time.Millisecond || d > after.Sub(before) {
		t.Errorf("two reads 1 ms apart differ by %v (outside [1ms, %v])", d, after.Sub(before))
	}
	if c.Time(a).Before(before) || c.Time(b).After(after) {
		t.Errorf("reads %v, %v fall outside the time.Now calls around them (%v, %v)", c.Time(a), c.Time(b), before, after)
	}
	if got := c.Of(c.Time(a)); got != a {
		t.Errorf("Of(Time(%v)) = %v", a, got)
	}
	// The wall time is NewClock's plus the monotonic time since: within
	// the wall clock's own steps of time.Now.
	if d := c.Time(b).Round(0).Sub(after.Round(0)); d > time.Second || d < -time.Second {
		t.Errorf("wall time of a read is %v off time.Now's", d)
	}
	// Clocks from one base read on one scale.
	o := ClockFrom(before)
	x := c.Read() - c.Of(before)
	if d := o.Read() - x; d < 0 || d > time.Second {
		t.Errorf("a clock from another's reading is %v off its scale", d)
	}
}

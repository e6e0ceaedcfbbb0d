package transport

import "math"

// ReleasedHold is a Hold that has released its connections already, and
// keeps them released: its window of waits never fills.
func ReleasedHold() *Hold {
	h := new(Hold)
	h.released.Store(true)
	h.waits = math.MinInt32
	return h
}

// OnPoller says whether c's reads and writes have moved to Go's network
// poller (its socket registered there).
func OnPoller(c *Conn) bool { return c.polled.Load() != nil }

package transport

// ReleasedHold is a Hold that has released its connections already.
func ReleasedHold() *Hold {
	h := new(Hold)
	h.released.Store(true)
	return h
}

// OnPoller says whether c's reads and writes have moved to Go's network
// poller (its socket registered there).
func OnPoller(c *Conn) bool { return c.polled.Load() != nil }

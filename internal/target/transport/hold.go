package transport

import (
	"sync"
	"sync/atomic"
	"time"
)

// LongWait is a wait for the server long enough that the blocking
// transport costs more than the poller: its thread, blocked that long,
// has its processor taken by the runtime's monitor (sysmon), which then
// goes back to waking every 20 µs, and the runner's yields between
// events hand the processor over for nothing. bench/'s sweep of a
// server-side sleep at 8 clients on 2 processors: the two level at 1 ms
// waits, blocking 1.15x the poller's client CPU per transaction at 3 ms,
// 1.5-1.8x at 10 ms.
const LongWait = 2 * time.Millisecond

// holdWindow is how many waits a Hold judges at a time: enough that a
// stall of the server (a checkpoint, a lock) that all clients wait out
// together does not look like the workload's own waits.
const holdWindow = 256

// A Hold is what the blocking connections of one target share when the
// engine chose the blocking transport for them (auto): their waits for
// the server, and whether they have been released to Go's network
// poller. Once a quarter or more of the waits of a window of holdWindow
// took LongWait or longer, every connection waits in the poller from its
// next read on, for the rest of the Hold's life: such a workload's
// server holds each client long enough that the poller costs less, and
// a connection switching back and forth would make a run's cost depend
// on when it switched. The runner, told by the target (HoldsThreads),
// then hands back the processors it gave each client.
//
// The zero Hold holds; a nil one holds for ever (an explicit
// --transport blocking).
type Hold struct {
	released atomic.Bool

	mu         sync.Mutex
	waits      int // in the window
	long       int // of them, LongWait or longer
	windowLong int // the window that released, its long waits
}

// Holding says whether the connections still wait on threads of their
// own. It never turns true again.
func (h *Hold) Holding() bool { return h == nil || !h.released.Load() }

// Released says, once the connections were released, how many of the
// window's waits were long.
func (h *Hold) Released() (long, of int, ok bool) {
	if h.Holding() {
		return 0, 0, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.windowLong, holdWindow, true
}

// add counts a connection's waits: n in all, long of them LongWait or
// longer.
func (h *Hold) add(n, long int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released.Load() {
		return
	}
	h.waits += n
	h.long += long
	if h.waits < holdWindow {
		return
	}
	if 4*h.long >= h.waits {
		h.windowLong = h.long * holdWindow / h.waits
		h.released.Store(true)
	}
	h.waits, h.long = 0, 0
}

// waitTally is one connection's waits not yet added to its Hold, kept
// under its read lock: added every tallyEvery waits, the Hold's lock is
// taken once for many.
type waitTally struct {
	n, long int
}

const tallyEvery = 32

// count tallies one wait that took d, and adds the tally to h every
// tallyEvery waits.
func (t *waitTally) count(h *Hold, d time.Duration) {
	t.n++
	if d >= LongWait {
		t.long++
	}
	if t.n >= tallyEvery {
		h.add(t.n, t.long)
		t.n, t.long = 0, 0
	}
}

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
// poller. It judges the waits a window of holdWindow at a time. Once a
// quarter or more of a window's waits took LongWait or longer, every
// connection waits in the poller from its next read or write on: such a
// workload's server holds each client long enough that the poller costs
// less. Once fewer than a sixteenth of a window's waits took that long,
// as when a cache has warmed, they wait on their threads again. The gap
// between the two shares keeps a workload near either from switching at
// every window. The runner, told by the target (HoldsThreads), hands back
// the processors it gave each client at a release and asks for them again
// when they are held again.
//
// The zero Hold holds; a nil one holds for ever (an explicit
// --transport blocking).
type Hold struct {
	released atomic.Bool

	mu       sync.Mutex
	waits    int // in the window
	long     int // of them, LongWait or longer
	switches []Switch
}

// The shares of a window's waits that move a Hold: a quarter or more
// long releases it, less than a sixteenth holds it again.
const (
	releaseShare = 4
	holdShare    = 16
)

// A Switch is a Hold's move between the connections' threads and the
// poller, and the window of waits that made it.
type Switch struct {
	At       time.Time
	Released bool // to the poller; false: back to the threads
	Long, Of int  // the window's waits of LongWait or longer, of Of
}

// Holding says whether the connections wait on threads of their own.
func (h *Hold) Holding() bool { return h == nil || !h.released.Load() }

// Switches lists the Hold's moves, in order.
func (h *Hold) Switches() []Switch {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Switch(nil), h.switches...)
}

// add counts a connection's waits: n in all, long of them LongWait or
// longer.
func (h *Hold) add(n, long int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.waits += n
	h.long += long
	if h.waits < holdWindow {
		return
	}
	released := h.released.Load()
	if move := released && holdShare*h.long < h.waits || !released && releaseShare*h.long >= h.waits; move {
		h.switches = append(h.switches, Switch{At: time.Now(), Released: !released, Long: h.long * holdWindow / h.waits, Of: holdWindow})
		h.released.Store(!released)
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

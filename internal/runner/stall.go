package runner

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/workload"
)

// abandonAfter is how long the run waits for its clients once their
// context has ended. pgconn and go-sql-driver/mysql end a statement soon
// after its context does; a client still inside an event after this waits
// where no cancellation reaches, and the run ends without it, as failed.
const abandonAfter = 5 * time.Second

// client is what the ticker knows of one worker: whether it is inside an
// event, since when, and its session, to name the statement it waits
// for. The worker writes it at each event's start and end; the ticker
// reads it.
type client struct {
	// since is when the current event was due, as a reading of the
	// clients' clocks (run.base) plus one; 0 between events.
	since atomic.Int64
	done  atomic.Bool
	// events and busy are the events the client committed and the
	// nanoseconds it spent inside them (Fairness); written by its worker
	// alone, read once the run ended, even from a client that never returned.
	events atomic.Int64
	busy   atomic.Int64
	// flight is the nanoseconds the client spent inside events within the
	// measured window, committed or not (Little's law's sum), and
	// selfRecorded that its worker timed some events itself, which the
	// runner cannot sum; both written by its worker alone.
	flight       atomic.Int64
	selfRecorded atomic.Bool
	// lastEnd is when the client's last event ended, as a reading of the
	// clients' clocks (0: none), stored once its worker returned.
	lastEnd atomic.Int64
	mu      sync.Mutex
	sess    workload.Session
}

func (c *client) begin(since time.Duration) { c.since.Store(int64(since) + 1) }

// committed counts one committed event that took busy from its actual start.
func (c *client) committed(busy time.Duration) {
	c.events.Add(1)
	c.busy.Add(int64(busy))
}

// fairness is the clients' share of the events and of the time in them.
func fairness(clients []client) *result.Fairness {
	n := float64(len(clients))
	if n == 0 {
		return nil
	}
	var f result.Fairness
	var events, busy float64
	for i := range clients {
		events += float64(clients[i].events.Load())
		busy += time.Duration(clients[i].busy.Load()).Seconds()
	}
	f.EventsMean, f.BusyMeanS, f.BusyS = events/n, busy/n, busy
	var ev, bv float64
	for i := range clients {
		d := float64(clients[i].events.Load()) - f.EventsMean
		ev += d * d
		d = time.Duration(clients[i].busy.Load()).Seconds() - f.BusyMeanS
		bv += d * d
	}
	f.EventsStdDev, f.BusyStdDevS = math.Sqrt(ev/n), math.Sqrt(bv/n)
	return &f
}

// end marks the client between events; a non-nil sess is its session
// from now on.
func (c *client) end(sess workload.Session) {
	c.since.Store(0)
	if sess != nil {
		c.setSession(sess)
	}
}

func (c *client) setSession(sess workload.Session) {
	c.mu.Lock()
	c.sess = sess
	c.mu.Unlock()
}

func (c *client) finish() {
	c.since.Store(0)
	c.done.Store(true)
}

// statement is the text of what the client's connection runs, if it says.
func (c *client) statement() string {
	c.mu.Lock()
	sess := c.sess
	c.mu.Unlock()
	if sess == nil {
		return ""
	}
	return sess.Waiting()
}

// Stall is a client that finished nothing for too long.
type Stall struct {
	Client    int       `json:"client"`
	Statement string    `json:"statement,omitempty"` // the last statement it sent
	Since     time.Time `json:"since"`               // when the event it is in began (was due, under a rate)
}

// busy lists the clients inside an event that began at least timeout
// before now; with timeout 0, every client that has not returned, inside
// an event or not.
func (r *run) busy(now time.Time, timeout time.Duration) []Stall {
	var out []Stall
	for i := range r.clients {
		c := &r.clients[i]
		if c.done.Load() {
			continue
		}
		s := c.since.Load()
		if s == 0 && timeout > 0 {
			continue
		}
		since := now
		if s != 0 {
			since = r.base.Add(time.Duration(s - 1))
		}
		if now.Sub(since) < timeout {
			continue
		}
		out = append(out, Stall{Client: i, Statement: c.statement(), Since: since})
	}
	return out
}

// StallError ends a run in which a client finished nothing for
// StallTimeout, or did not return when the run ended.
type StallError struct {
	Stalls  []Stall
	Timeout time.Duration // 0: the run ended and they did not return
}

func (e *StallError) Error() string {
	var b strings.Builder
	st := e.Stalls[0]
	if e.Timeout > 0 {
		fmt.Fprintf(&b, "client %d finished nothing for %v (--stall-timeout)", st.Client, e.Timeout)
	} else {
		fmt.Fprintf(&b, "client %d did not return when the run ended", st.Client)
	}
	fmt.Fprintf(&b, ": inside an event since %s", st.Since.Format("15:04:05.000"))
	if st.Statement != "" {
		fmt.Fprintf(&b, ", last statement %q", abbreviate(st.Statement, 80))
	}
	if n := len(e.Stalls) - 1; n > 0 {
		fmt.Fprintf(&b, " (and %d more clients)", n)
	}
	return b.String()
}

func abbreviate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

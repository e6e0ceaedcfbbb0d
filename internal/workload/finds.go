package workload

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
)

// A read that finds nothing is fast: on a table that lost rows, a point
// select of a missing id returns at once, and the run looks faster than
// one on the whole table. ReadCheck counts, per client, the reads that
// must find rows (a workload knows which: a point select of an id its
// prepare loaded) and those that came back short, and says so in the
// result: the per-interval rate of misses while any occur, the summary's
// read_check, a warning for any miss and a failed run when most missed.

// MissedReadsPerS is the series figure (result.Interval.Extra) of the
// reads that missed per second; kept only in runs that had misses.
const MissedReadsPerS = "missed_reads_per_s"

// MostMissed is the share of the checked reads above which the run
// failed: its figures are mostly of reads that found nothing.
const MostMissed = 0.5

// ReadCheck counts the reads of a run's clients that must find rows. Its
// Tick and Finish are a Load's.
type ReadCheck struct {
	ops   []string
	pairs []findPair // client id x len(ops)
	hint  string
	// warnOnly: misses are expected (tables allowed to be empty), so
	// they are reported but never fail the run.
	warnOnly bool
	prev     int64        // reads missed at the previous tick
	base     []findCounts // per op, at the end of the warm-up
}

// findPair is one client's counters of one operation, on a cache line of
// its own: only that client writes them, the ticker reads them.
type findPair struct {
	checked, missed atomic.Int64
	_               [48]byte
}

type findCounts struct{ checked, missed int64 }

// NewReadCheck counts the reads of clients clients (ids 0 to clients-1)
// in the operations named ops. hint says what makes the data whole
// again; warnOnly reports misses without failing the run.
func NewReadCheck(clients int, ops []string, hint string, warnOnly bool) *ReadCheck {
	return &ReadCheck{ops: ops, pairs: make([]findPair, clients*len(ops)), hint: hint, warnOnly: warnOnly,
		base: make([]findCounts, len(ops))}
}

// Finder is one client's counters, used on its goroutine only.
type Finder struct{ p []findPair }

// Client returns client id's counters; a client that reconnects gets the
// same ones again.
func (c *ReadCheck) Client(id int) Finder {
	n := len(c.ops)
	return Finder{c.pairs[id*n : (id+1)*n : (id+1)*n]}
}

// Found counts one read of operation op (its index in the ops the check
// was made with) that must find rows, and whether it found them all. It
// costs one or two atomic adds on the client's own cache line.
func (f Finder) Found(op int, ok bool) {
	p := &f.p[op]
	p.checked.Add(1)
	if !ok {
		p.missed.Add(1)
	}
}

// counts sums the clients' counters by operation.
func (c *ReadCheck) counts() []findCounts {
	out := make([]findCounts, len(c.ops))
	for i := range c.pairs {
		o := &out[i%len(c.ops)]
		o.checked += c.pairs[i].checked.Load()
		o.missed += c.pairs[i].missed.Load()
	}
	return out
}

// Tick adds the interval's rate of missed reads to its point, and notes
// the counts at the end of the warm-up, which the summary leaves out.
func (c *ReadCheck) Tick(iv metrics.Interval, p *result.Interval) {
	now := c.counts()
	var missed int64
	for _, n := range now {
		missed += n.missed
	}
	if iv.Warmup {
		c.base = now
	}
	if secs := iv.Seconds(); secs > 0 {
		if p.Extra == nil {
			p.Extra = map[string]float64{}
		}
		p.Extra[MissedReadsPerS] = float64(missed-c.prev) / secs
	}
	c.prev = missed
}

// Finish puts the counts since the warm-up in res's summary: nothing more
// when no read missed; otherwise a warning, or a failed run when more
// than MostMissed of them missed.
func (c *ReadCheck) Finish(res *result.Result) {
	now := c.counts()
	rc := &result.ReadCheck{}
	for i, op := range c.ops {
		n := findCounts{now[i].checked - c.base[i].checked, now[i].missed - c.base[i].missed}
		if n.checked == 0 {
			continue
		}
		rc.Checked += n.checked
		rc.Missed += n.missed
		rc.Ops = append(rc.Ops, result.ReadCheckOp{Op: op, Checked: n.checked, Missed: n.missed})
	}
	if rc.Missed == 0 {
		// A whole table: no word, and no series of zeros to draw.
		for i := range res.Series {
			delete(res.Series[i].Extra, MissedReadsPerS)
			if len(res.Series[i].Extra) == 0 {
				res.Series[i].Extra = nil
			}
		}
	}
	if rc.Checked == 0 {
		return
	}
	res.Summary.ReadCheck = rc
	if rc.Missed == 0 {
		return
	}
	msg := MissedMessage(rc, c.hint)
	if !c.warnOnly && rc.MissedShare() > MostMissed && (res.Status == result.StatusOK || res.Status == result.StatusDegraded) {
		res.Status, res.Error = result.StatusFailed, msg
		return
	}
	res.Summary.Warnings = append(res.Summary.Warnings, msg)
}

// MissedMessage says how many of the checked reads missed, by operation,
// what it means and hint.
func MissedMessage(rc *result.ReadCheck, hint string) string {
	var ops []string
	for _, o := range rc.Ops {
		if o.Missed > 0 {
			ops = append(ops, fmt.Sprintf("%s %d of %d", o.Op, o.Missed, o.Checked))
		}
	}
	msg := fmt.Sprintf("%d of %d reads that must find rows found none or too few (%.3g%%: %s): the data lost rows since it was prepared, and a read that finds nothing is faster than one that finds its row",
		rc.Missed, rc.Checked, 100*rc.MissedShare(), strings.Join(ops, ", "))
	if hint != "" {
		msg += "; " + hint
	}
	return msg
}

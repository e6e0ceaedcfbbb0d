// Package metrics records what workers do: latency histograms per worker and
// operation, counters of queries, errors, retries and reconnects, merged into
// interval and cumulative views on each tick.
//
// Workers never share a lock: each owns a Handle whose mutex is taken only by
// that worker and, once per tick, by the ticker. Per-worker histograms are
// sparse (counts by bucket in a small table) and reset on every tick, so memory
// does not grow with the length of a run or with the spread of latencies;
// the dense merged histograms exist once per operation.
package metrics

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: nanoseconds from 1 ns to one hour, three significant
// digits (0.1% precision). Longer values are clamped to the top and counted.
const (
	lowestNS  = 1
	highestNS = int64(time.Hour)
	sigFigs   = 3
)

// Kind says how an operation counts toward throughput.
type Kind int

const (
	// Event is one unit of work (a transaction): it is what tps counts.
	Event Kind = iota
	// Read, Write and Other are statements, counted into qps like sysbench:
	// SELECT; INSERT, UPDATE, DELETE; BEGIN, COMMIT and the rest.
	Read
	Write
	Other
	// Meta is a step the client takes between statements (pgbench's
	// meta-commands), timed for per-command reports but not a query.
	Meta
)

func (k Kind) String() string {
	return [...]string{"event", "read", "write", "other", "meta"}[k]
}

// OpSpec names an operation and its kind.
type OpSpec struct {
	Name string
	Kind Kind
}

// Op is an operation's index in the registry, fixed before the run starts so
// the hot path does no map lookups.
type Op int

// SelfRecorded is what a worker's Event returns when it has recorded the
// event itself (queued I/O completes events in another order than it
// starts them, so only the worker knows their latencies).
const SelfRecorded Op = -1

// NewHistogram returns an empty dense histogram with the registry's bounds.
func NewHistogram() *hdr.Histogram { return hdr.New(lowestNS, highestNS, sigFigs) }

// opCounts is what one worker recorded for one operation since the last tick.
type opCounts struct {
	hist    sparse  // latency: from the intended start under a rate
	service *sparse // from the actual start; only under a rate
	count   int64
	sumNS   int64
}

// Handle is one worker's recorder. Its methods are safe to call from the
// owning worker while the ticker reads it.
type Handle struct {
	mu         sync.Mutex
	ops        []opCounts
	errs       map[ErrorKey]int64
	retries    int64
	reconnects int64
	lag        sparse
	clamped    int64
	// pending holds the latest Record calls (npending of them), folded
	// into ops when full and at each tick. Adding one is a store into a
	// line the worker wrote last time; a table lookup per call was a load
	// that missed the cache, the server having run on the processor in
	// between. Its index is a byte: no bounds check.
	pending  [pendingMax]recorded
	npending uint8
	// counts holds completions of operations that are not timed, by op,
	// for workers that skip the clock read and the histogram entry (as
	// pgbench times its statements only with -r). They are added and
	// taken atomically, without mu: one locked add an operation, where
	// the mutex was two locked instructions and a call a transaction.
	counts []atomic.Int64
	taken  []int64 // counts as a drain took them; the drain's alone
	// group is the group (the server its worker's client talks to) whose
	// totals the handle's data also goes to; fixed when it is made.
	group int
}

type recorded struct {
	op Op
	ns int64
}

// pendingMax bounds a worker's pending values (4 KiB): a byte's range.
const pendingMax = 256

// ErrorKey identifies a class of errors: its class name and code.
type ErrorKey struct {
	Class string `json:"class"`
	Code  string `json:"code"`
}

func clampNS(d time.Duration) (int64, bool) {
	v := int64(d)
	switch {
	case v < lowestNS:
		return lowestNS, false
	case v > highestNS:
		return highestNS, true
	}
	return v, false
}

func (o *opCounts) record(d time.Duration, h *Handle) {
	v, over := clampNS(d)
	if over {
		h.clamped++
	}
	o.hist.record(v)
	o.count++
	o.sumNS += v
}

// Record adds one completed operation with its latency.
func (h *Handle) Record(op Op, d time.Duration) {
	h.mu.Lock()
	n := h.npending
	h.pending[n] = recorded{op, int64(d)}
	if h.npending = n + 1; h.npending == 0 { // wrapped: pendingMax values
		h.foldAll()
	}
	h.mu.Unlock()
}

// AddCounts adds n[i] untimed completions of operation ops[i] (ops[i] < 0:
// none) and zeroes n. A worker batches a transaction's statements into one
// call.
func (h *Handle) AddCounts(ops []Op, n []int64) {
	for i, k := range n[:len(ops)] {
		if k != 0 {
			if op := ops[i]; op >= 0 {
				h.counts[op].Add(k)
			}
			n[i] = 0
		}
	}
}

// fold records the pending values; h.mu is held.
func (h *Handle) fold() {
	h.foldN(int(h.npending))
	h.npending = 0
}

// foldAll records a full pending list, which npending, having wrapped,
// does not count; h.mu is held.
func (h *Handle) foldAll() { h.foldN(pendingMax) }

func (h *Handle) foldN(n int) {
	ops := h.ops
	for _, r := range h.pending[:n] {
		o := &ops[r.op]
		v := r.ns
		if v < lowestNS {
			v = lowestNS
		} else if v > highestNS {
			v = highestNS
			h.clamped++
		}
		o.hist.record(v)
		o.count++
		o.sumNS += v
	}
}

// RecordScheduled adds one completed operation run under a rate schedule:
// latency counts from the intended start, service time from the actual
// start, and lag is how late the operation started.
func (h *Handle) RecordScheduled(op Op, latency, service, lag time.Duration) {
	h.mu.Lock()
	o := &h.ops[op]
	o.record(latency, h)
	if o.service == nil {
		o.service = &sparse{}
	}
	v, _ := clampNS(service)
	o.service.record(v)
	v, _ = clampNS(lag)
	h.lag.record(v)
	h.mu.Unlock()
}

// Error counts one failed attempt.
func (h *Handle) Error(class, code string) {
	h.mu.Lock()
	if h.errs == nil {
		h.errs = map[ErrorKey]int64{}
	}
	h.errs[ErrorKey{class, code}]++
	h.mu.Unlock()
}

// AddRetries counts n retried attempts of one transaction.
func (h *Handle) AddRetries(n int) {
	h.mu.Lock()
	h.retries += int64(n)
	h.mu.Unlock()
}

// Reconnect counts one reconnection after a lost connection.
func (h *Handle) Reconnect() {
	h.mu.Lock()
	h.reconnects++
	h.mu.Unlock()
}

// Registry owns the handles and merges them on each tick.
type Registry struct {
	specs   []OpSpec
	mu      sync.Mutex // guards handles and the merged state; never taken by workers
	handles []*Handle

	start      time.Time
	last       time.Time
	cumStart   time.Time
	warm       bool
	cumulative *Totals
	interval   *Totals
	prev       *Totals    // the interval before, kept for Recent
	mark       *sinceMark // nil unless TrackSince
	// groups keep each group's data apart (SetGroups): nil with one.
	groups *groupTotals
}

// groupTotals are the totals of each group of handles (the clients of
// one server): what was drained since the last tick, the last interval
// and the cumulative totals, by group.
type groupTotals struct {
	pending, interval, cumulative []*Totals
}

// StartAt moves the registry's start to t, before anything was recorded:
// the run's clock starts when its clients are ready.
func (r *Registry) StartAt(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.start, r.last, r.cumStart = t, t, t
	if r.mark != nil {
		r.mark.at = t
	}
}

// NewRegistry prepares a registry for the given operations.
func NewRegistry(specs []OpSpec, start time.Time) *Registry {
	r := &Registry{specs: specs, start: start, last: start, cumStart: start}
	r.cumulative = newTotals(specs)
	r.interval = newTotals(specs)
	r.prev = newTotals(specs)
	return r
}

// Specs lists the registry's operations.
func (r *Registry) Specs() []OpSpec { return r.specs }

// OpByName finds an operation's index.
func (r *Registry) OpByName(name string) (Op, bool) {
	for i, s := range r.specs {
		if s.Name == name {
			return Op(i), true
		}
	}
	return 0, false
}

// SetGroups keeps the data of n groups of handles apart as well as
// together (the clients of each of n servers), for GroupCumulative and
// each Interval's Groups. Call it before the first handle is made. A
// handle's data joins its group's totals when the ticker drains it:
// nothing is added to what a worker does.
func (r *Registry) SetGroups(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n < 2 {
		r.groups = nil
		return
	}
	g := &groupTotals{}
	for range n {
		g.pending = append(g.pending, newTotals(r.specs))
		g.interval = append(g.interval, newTotals(r.specs))
		g.cumulative = append(g.cumulative, newTotals(r.specs))
	}
	r.groups = g
}

// NewHandle returns a fresh handle for one worker.
func (r *Registry) NewHandle() *Handle { return r.NewHandleIn(0) }

// NewHandleIn returns a fresh handle for one worker of group g (with
// SetGroups; 0 otherwise).
func (r *Registry) NewHandleIn(g int) *Handle {
	h := &Handle{ops: make([]opCounts, len(r.specs)), counts: make([]atomic.Int64, len(r.specs)), group: g}
	r.mu.Lock()
	r.handles = append(r.handles, h)
	r.mu.Unlock()
	return h
}

// Totals is merged data over a span of time.
type Totals struct {
	Ops        []OpTotals
	Errors     map[ErrorKey]int64
	Retries    int64
	Reconnects int64
	Lag        *hdr.Histogram // nil unless a rate schedule is in force
	Clamped    int64
}

// OpTotals is one operation's merged data.
type OpTotals struct {
	Spec    OpSpec
	Count   int64 // completions, timed or not (Handle.AddCounts)
	SumNS   int64
	Hist    *hdr.Histogram // the timed ones
	Service *hdr.Histogram // nil unless a rate schedule is in force
}

func newTotals(specs []OpSpec) *Totals {
	t := &Totals{Ops: make([]OpTotals, len(specs)), Errors: map[ErrorKey]int64{}}
	for i, s := range specs {
		t.Ops[i] = OpTotals{Spec: s, Hist: NewHistogram()}
	}
	return t
}

func (t *Totals) reset() {
	for i := range t.Ops {
		o := &t.Ops[i]
		o.Count, o.SumNS = 0, 0
		o.Hist.Reset()
		if o.Service != nil {
			o.Service.Reset()
		}
	}
	clear(t.Errors)
	t.Retries, t.Reconnects, t.Clamped = 0, 0, 0
	if t.Lag != nil {
		t.Lag.Reset()
	}
}

// add merges u into t.
func (t *Totals) add(u *Totals) {
	for i := range t.Ops {
		o, p := &t.Ops[i], &u.Ops[i]
		o.Count += p.Count
		o.SumNS += p.SumNS
		o.Hist.Merge(p.Hist)
		if p.Service != nil {
			if o.Service == nil {
				o.Service = NewHistogram()
			}
			o.Service.Merge(p.Service)
		}
	}
	t.addTallies(u.Errors, u.Retries, u.Reconnects, u.Clamped)
	if u.Lag != nil {
		t.lagHist().Merge(u.Lag)
	}
}

// addTallies adds errors by key and the counts of retries, reconnects and
// clamped values to t.
func (t *Totals) addTallies(errs map[ErrorKey]int64, retries, reconnects, clamped int64) {
	for k, v := range errs {
		t.Errors[k] += v
	}
	t.Retries += retries
	t.Reconnects += reconnects
	t.Clamped += clamped
}

// lagHist is t's schedule lag histogram, made when first needed.
func (t *Totals) lagHist() *hdr.Histogram {
	if t.Lag == nil {
		t.Lag = NewHistogram()
	}
	return t.Lag
}

// drain moves a handle's data into t and, when g is not nil, into g as
// well (its group's totals), and resets the handle.
func (t *Totals) drain(h *Handle, g *Totals) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fold()
	if cap(h.taken) < len(h.counts) {
		h.taken = make([]int64, len(h.counts))
	}
	taken := h.taken[:len(h.counts)]
	for i := range taken {
		taken[i] = h.counts[i].Swap(0)
	}
	for _, to := range []*Totals{g, t} { // t last: its merge empties the handle's tables
		if to == nil {
			continue
		}
		last := to == t
		for i := range h.ops {
			src, dst := &h.ops[i], &to.Ops[i]
			dst.Count += taken[i]
			if src.count == 0 {
				continue
			}
			dst.Count += src.count
			dst.SumNS += src.sumNS
			if src.service != nil && dst.Service == nil {
				dst.Service = NewHistogram()
			}
			if !last {
				src.hist.addTo(dst.Hist)
				if src.service != nil {
					src.service.addTo(dst.Service)
				}
				continue
			}
			src.hist.mergeInto(dst.Hist)
			if src.service != nil {
				src.service.mergeInto(dst.Service)
			}
		}
		to.addTallies(h.errs, h.retries, h.reconnects, h.clamped)
		if h.lag.total > 0 {
			if last {
				h.lag.mergeInto(to.lagHist())
			} else {
				h.lag.addTo(to.lagHist())
			}
		}
	}
	for i := range h.ops {
		h.ops[i].count, h.ops[i].sumNS = 0, 0
	}
	clear(h.errs)
	h.retries, h.reconnects, h.clamped = 0, 0, 0
}

// groupOf is the totals of h's group that a drain fills, nil without
// groups; the caller holds r.mu.
func (r *Registry) groupOf(h *Handle) *Totals {
	if r.groups == nil {
		return nil
	}
	return r.groups.pending[h.group]
}

// Interval is what happened between two ticks.
type Interval struct {
	Start   time.Duration // since the run started
	End     time.Duration
	Warmup  bool // recorded during warm-up: shown, not counted
	*Totals      // valid only until the next Tick
	// Groups are each group's part of Totals (SetGroups), valid as long;
	// nil without groups.
	Groups []*Totals
}

// Seconds is the interval's length.
func (iv Interval) Seconds() float64 { return (iv.End - iv.Start).Seconds() }

// Tick merges every handle's data since the last tick into an interval and,
// once the warm-up is over, into the cumulative totals. The returned
// interval's Totals are reused by the Tick after next.
func (r *Registry) Tick(now time.Time, warmup bool) Interval {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prev, r.interval = r.interval, r.prev
	r.interval.reset()
	r.tickInto(r.interval)
	iv := Interval{Start: r.last.Sub(r.start), End: now.Sub(r.start), Warmup: warmup, Totals: r.interval}
	if g := r.groups; g != nil {
		g.pending, g.interval = g.interval, g.pending
		for i, t := range g.interval {
			g.pending[i].reset()
			if !warmup {
				g.cumulative[i].add(t)
			}
		}
		iv.Groups = g.interval
	}
	if warmup {
		r.cumStart = now
	} else {
		r.cumulative.add(r.interval)
	}
	r.last = now
	return iv
}

// Recent returns the last two intervals' totals together, in totals of
// its own: a short last interval that joins the one before it takes its
// percentiles from all their events.
func (r *Registry) Recent() *Totals {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := newTotals(r.specs)
	t.add(r.prev)
	t.add(r.interval)
	return t
}

// Cumulative returns the totals since the warm-up ended and how long that span is.
func (r *Registry) Cumulative() (*Totals, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cumulative, r.last.Sub(r.cumStart)
}

// GroupCumulative returns each group's totals since the warm-up ended
// (SetGroups; nil without groups), over the span Cumulative gives.
func (r *Registry) GroupCumulative() []*Totals {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groups == nil {
		return nil
	}
	return r.groups.cumulative
}

// ErrorKeys returns the error keys of t in a stable order.
func (t *Totals) ErrorKeys() []ErrorKey {
	keys := make([]ErrorKey, 0, len(t.Errors))
	for k := range t.Errors {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Class != keys[j].Class {
			return keys[i].Class < keys[j].Class
		}
		return keys[i].Code < keys[j].Code
	})
	return keys
}

// ErrorCount is the number of errors in t, optionally of one class.
func (t *Totals) ErrorCount(class string) int64 {
	var n int64
	for k, v := range t.Errors {
		if class == "" || k.Class == class {
			n += v
		}
	}
	return n
}

// KindCount adds up the counts of the operations of one kind.
func (t *Totals) KindCount(k Kind) int64 {
	var n int64
	for _, o := range t.Ops {
		if o.Spec.Kind == k {
			n += o.Count
		}
	}
	return n
}

// EventHist merges the histograms of every Event operation.
func (t *Totals) EventHist() *hdr.Histogram {
	var h *hdr.Histogram
	n := 0
	for _, o := range t.Ops {
		if o.Spec.Kind != Event || o.Count == 0 {
			continue
		}
		n++
		if h == nil {
			h = o.Hist
			continue
		}
		if n == 2 {
			m := NewHistogram()
			m.Merge(h)
			h = m
		}
		h.Merge(o.Hist)
	}
	if h == nil {
		return NewHistogram()
	}
	return h
}

// ParsePercentiles reads a list like "50,95,99,99.9".
func ParsePercentiles(list []string) ([]float64, error) {
	out := make([]float64, 0, len(list))
	for _, s := range list {
		var p float64
		if _, err := fmt.Sscanf(s, "%g", &p); err != nil || p <= 0 || p > 100 {
			return nil, fmt.Errorf("percentile %q: must be a number above 0 and at most 100", s)
		}
		out = append(out, p)
	}
	sort.Float64s(out)
	return out, nil
}

// Snapshot is the cumulative totals as a reader apart from the ticker (a
// live exporter) takes them: copies, made under the lock the ticker takes
// to merge, so the reader never holds it while it works and never touches
// a worker's handle.
type Snapshot struct {
	Ops        []OpSnapshot
	Errors     map[ErrorKey]int64
	Retries    int64
	Reconnects int64
	// Since is when the measured span began (it moves with each tick of
	// the warm-up) and Measured how long it is, up to the last tick.
	Since    time.Time
	Measured time.Duration
}

// OpSnapshot is one operation's cumulative totals: its completions, timed
// or not, and the timed ones' latency sum and histogram counts (Bins reads
// them; nil when none was timed).
type OpSnapshot struct {
	Spec   OpSpec
	Count  int64
	SumNS  int64
	Timed  int64
	Counts []int64
}

// Snapshot copies the cumulative totals as the last tick left them. It
// holds the registry's lock for a copy of each timed operation's counts,
// never a worker's.
func (r *Registry) Snapshot() Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.cumulative
	s := Snapshot{Ops: make([]OpSnapshot, len(t.Ops)), Errors: make(map[ErrorKey]int64, len(t.Errors)),
		Retries: t.Retries, Reconnects: t.Reconnects, Since: r.cumStart, Measured: r.last.Sub(r.cumStart)}
	for i, o := range t.Ops {
		s.Ops[i] = OpSnapshot{Spec: o.Spec, Count: o.Count, SumNS: o.SumNS, Timed: o.Hist.TotalCount()}
		if s.Ops[i].Timed > 0 {
			s.Ops[i].Counts = o.Hist.Export().Counts
		}
	}
	for k, v := range t.Errors {
		s.Errors[k] = v
	}
	return s
}

// Bins calls f for each non-empty bucket of counts, the counts of a
// histogram of this package's bounds (NewHistogram, exported): the
// bucket's lowest value in nanoseconds, its width and its count. The
// first 2048 buckets hold one value each; above, each run of 1024 buckets
// is twice as wide as the one before (three significant digits from 1 ns).
func Bins(counts []int64, f func(low, width, n int64)) {
	const half = 1 << (subBucketBits - 1)
	for i, n := range counts {
		if n == 0 {
			continue
		}
		if i < 2*half {
			f(int64(i), 1, n)
			continue
		}
		shift := uint(i/half - 1)
		f(int64(i%half+half)<<shift, 1<<shift, n)
	}
}

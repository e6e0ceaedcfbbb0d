// Package sampler reads OS and database counters while a run goes on, each
// source on its own goroutine (and the database on its own connection), so
// a slow read delays only the next sample, never a worker.
package sampler

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/dbmark/dbmark/internal/probe"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/series"
	"github.com/dbmark/dbmark/internal/target"
)

// Config is what to sample and how often.
type Config struct {
	Interval time.Duration
	// Root is the filesystem root of /proc ("/" when empty).
	Root string
	// DB is the engine's counters; nil when the target has none, and then
	// NoDB says why.
	DB     target.CounterSource
	NoDB   string
	Logger *slog.Logger
	// MaxPoints bounds each series: past it, neighbouring samples are
	// averaged in pairs, so a long run's memory stays flat. 0:
	// series.DefaultLimit.
	MaxPoints int
	// Driven takes a sample when Kick is called (each live line's tick)
	// instead of every Interval, so the counters a line shows cover that
	// line's own interval. Interval is then only recorded.
	Driven bool
	// Servers, when the run's clients are spread over several servers,
	// are their counters in place of DB: each sampled on its own
	// connection, its series named with its label as a prefix
	// ("server2/db.xact_commit") and its source "LABEL/db".
	Servers []Server
}

// Server is one server of several whose counters are sampled: its label
// and its counters (nil when it has none, and then NoDB says why).
type Server struct {
	Label string
	DB    target.CounterSource
	NoDB  string
}

// dbSource is one database whose counters a loop samples: its source
// name and the prefix of its series' names.
type dbSource struct {
	source, prefix string
	db             target.CounterSource
}

// point is a sample, or the mean of n neighbouring samples ending at at,
// in seconds since the sampler started. It takes 16 bytes where a
// time.Time and two float64 took 40: a series keeps up to MaxPoints of
// them for each of 40 to 70 counters, which is part of what a long run's
// live heap grows by until the series are full. A float32 keeps the
// millisecond for two hours (8 ms a day in, where a point spans many
// seconds), and n counts samples exactly up to 2^24.
type point struct {
	v  float64
	at float32
	n  float32
}

// secondsSince is at on the sampler's axis.
func secondsSince(base, at time.Time) float32 { return float32(at.Sub(base).Seconds()) }

// onAxis is p's time on an axis shifted by shift seconds from the
// sampler's, rounded to the millisecond; false before the axis starts.
func (p point) onAxis(shift float64) (float64, bool) {
	t := float64(p.at) + shift
	return math.Round(t*1000) / 1000, t >= 0
}

// mergePoints averages two neighbouring points: a rate over their span, a
// gauge's mean level.
func mergePoints(a, b point) (point, bool) {
	n := a.n + b.n
	return point{at: b.at, v: (a.v*float64(a.n) + b.v*float64(b.n)) / float64(n), n: n}, true
}

type counterSeries struct {
	name, unit, kind, source string
	points                   *series.Bounded[point]
	// recent are the newest samples (at least holdBack of them), kept
	// apart from points until they are older: the run's end is known
	// only at Stop, and a point averaged over samples from both sides of
	// it could only be kept whole (the clients gone) or dropped whole
	// (the run's last samples lost).
	recent []point
}

// holdBack is how many of a series' newest samples stay apart from its
// points: a Stop up to that many intervals after the run's end (the
// drain, the run's conclusion) drops exactly the samples taken after it.
const holdBack = 64

// add appends a sample; the oldest of those held back are averaged into
// points holdBack at a time, so each sample is moved once.
func (sr *counterSeries) add(p point) {
	if len(sr.recent) == 2*holdBack {
		for _, q := range sr.recent[:holdBack] {
			sr.points.Add(q)
		}
		sr.recent = append(sr.recent[:0], sr.recent[holdBack:]...)
	}
	sr.recent = append(sr.recent, p)
}

// Sampler collects the series. Latest, Kick and Wait are safe to call from
// any goroutine.
type Sampler struct {
	cfg     Config
	base    time.Time // the points' times count from here
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	series  map[string]*counterSeries
	latest  map[string]float64
	unknown map[string]string
	// gaps[source] are the spans its connection was lost, on the
	// sampler's axis; the last one is open (to < 0) until it is back.
	gaps map[string][][2]float32

	// Driven mode: kicks[source] wakes that source's loop; done[source]
	// is the last kick it has answered (all kicks once it has stopped);
	// updated is closed and replaced whenever done moves.
	kicks   map[string]chan struct{}
	kicked  uint64
	done    map[string]uint64
	updated chan struct{}
}

// allKicks marks a source that has stopped: no waiter waits for it.
const allKicks = math.MaxUint64

// Start begins sampling; Stop ends it.
func Start(ctx context.Context, cfg Config) *Sampler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Sampler{cfg: cfg, base: time.Now(), cancel: cancel, series: map[string]*counterSeries{}, latest: map[string]float64{}, unknown: map[string]string{}, gaps: map[string][][2]float32{},
		kicks: map[string]chan struct{}{}, done: map[string]uint64{}, updated: make(chan struct{})}
	sources := []string{"os"}
	var dbs []dbSource
	switch {
	case len(cfg.Servers) > 0:
		for _, sv := range cfg.Servers {
			src := sv.Label + "/db"
			if sv.DB == nil {
				s.unknown[src] = sv.NoDB
				continue
			}
			dbs = append(dbs, dbSource{source: src, prefix: sv.Label + "/", db: sv.DB})
		}
	case cfg.DB != nil:
		dbs = append(dbs, dbSource{source: "db", db: cfg.DB})
	case cfg.NoDB != "":
		s.unknown["db"] = cfg.NoDB
	}
	for _, d := range dbs {
		sources = append(sources, d.source)
	}
	// Sources are known before any loop runs, so a Wait never misses one.
	for _, src := range sources {
		s.kicks[src] = make(chan struct{}, 1)
		s.done[src] = 0
	}
	s.wg.Add(1 + len(dbs))
	go s.osLoop(ctx)
	for _, d := range dbs {
		go s.dbLoop(ctx, d)
	}
	return s
}

// Kick asks every source for a sample now (Driven mode) and returns the
// kick's number for Wait. It never blocks: a source still busy with an
// earlier kick answers this one with its next sample.
func (s *Sampler) Kick() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kicked++
	for _, k := range s.kicks {
		select {
		case k <- struct{}{}:
		default:
		}
	}
	return s.kicked
}

// Wait waits up to wait for every source to answer kick n, then returns
// the latest values and, as stale, the names whose source had not.
func (s *Sampler) Wait(n uint64, wait time.Duration) (latest map[string]float64, stale map[string]bool) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.answered(n) {
		ch := s.updated
		s.mu.Unlock()
		select {
		case <-ch:
			s.mu.Lock()
			continue
		case <-timer.C:
		}
		s.mu.Lock()
		break
	}
	latest = make(map[string]float64, len(s.latest))
	for k, v := range s.latest {
		latest[k] = v
		if sr := s.series[k]; sr != nil && s.done[sr.source] < n {
			if stale == nil {
				stale = map[string]bool{}
			}
			stale[k] = true
		}
	}
	return latest, stale
}

func (s *Sampler) answered(n uint64) bool {
	for _, d := range s.done {
		if d < n {
			return false
		}
	}
	return true
}

// answer records that source has answered every kick up to n.
func (s *Sampler) answer(source string, n uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done[source] = n
	close(s.updated)
	s.updated = make(chan struct{})
}

func (s *Sampler) add(at time.Time, source string, rs []probe.Reading) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rs {
		sr := s.series[r.Name]
		if sr == nil {
			sr = &counterSeries{name: r.Name, unit: r.Unit, kind: r.Kind, source: source, points: series.New(s.cfg.MaxPoints, mergePoints)}
			s.series[r.Name] = sr
		}
		sr.add(point{v: r.Value, at: secondsSince(s.base, at), n: 1})
		s.latest[r.Name] = r.Value
	}
}

func (s *Sampler) fail(source string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.unknown[source]; !ok {
		s.unknown[source] = err.Error()
		s.cfg.Logger.Debug("sampling stopped", "source", source, "err", err)
	}
}

// Latest returns the last value of every series, for the live line.
func (s *Sampler) Latest() map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]float64, len(s.latest))
	for k, v := range s.latest {
		out[k] = v
	}
	return out
}

// Units returns each series' unit.
func (s *Sampler) Units() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.series))
	for k, v := range s.series {
		out[k] = v.unit
	}
	return out
}

// Stop ends sampling and returns the series on the run's time axis:
// seconds since start. Samples from before start are dropped, and so are
// those a timer took after end (the clients gone: a collapse that did not
// happen during the run); a driven sampler's are all kicked at the run's
// ticks. The samples after end are dropped one by one while they are
// among the holdBack newest, so the samples before end stay.
func (s *Sampler) Stop(start, end time.Time) *result.Counters {
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second): // a hung database read must not hold the result
		s.cfg.Logger.Warn("a counter sampler did not stop in time; its last sample is lost")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &result.Counters{IntervalS: s.cfg.Interval.Seconds()}
	shift := s.base.Sub(start).Seconds()
	last := end.Sub(start).Seconds()
	// A sample is after the end when its time is, both on the sampler's
	// float32 axis: the axis in milliseconds would round a sample taken
	// an instant before the end to after it.
	endAt := secondsSince(s.base, end)
	kept := func(p point) bool { return p.at <= endAt || s.cfg.Driven }
	// A sample kept as taken before the end may round past it on the
	// run's millisecond axis: it is put on the end's millisecond.
	lastMs := math.Floor(last*1000) / 1000
	names := make([]string, 0, len(s.series))
	for n := range s.series {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sr := s.series[n]
		cs := result.CounterSeries{Name: sr.name, Unit: sr.unit, Kind: sr.kind, Source: sr.source}
		for _, p := range sr.recent {
			if kept(p) {
				sr.points.Add(p)
			}
		}
		sr.recent = nil
		for _, p := range sr.points.Points() {
			if t, ok := p.onAxis(shift); ok && kept(p) {
				if !s.cfg.Driven {
					t = min(t, lastMs)
				}
				cs.Points = append(cs.Points, [2]float64{t, p.v})
			}
		}
		for _, g := range s.gaps[sr.source] {
			from, _ := point{at: g[0]}.onAxis(shift)
			to := last
			if g[1] >= 0 {
				to, _ = point{at: g[1]}.onAxis(shift)
			}
			if to > 0 && from < last {
				cs.Gaps = append(cs.Gaps, [2]float64{max(from, 0), to})
			}
		}
		if len(cs.Points) > 0 {
			c.Series = append(c.Series, cs)
		}
	}
	if len(s.unknown) > 0 {
		c.Unknown = make(map[string]string, len(s.unknown))
		for k, v := range s.unknown {
			c.Unknown[k] = v
		}
	}
	return c
}

func (s *Sampler) osLoop(ctx context.Context) {
	defer s.wg.Done()
	defer s.answer("os", allKicks)
	r, err := probe.NewOSReader(s.cfg.Root)
	if err != nil {
		s.fail("os", err)
		return
	}
	prev, err := r.Snapshot()
	if err != nil {
		s.fail("os", err) // partial: keep sampling what can be read
	}
	sampled := false // prev is the base, not yet a sample
	s.every(ctx, "os", func() (bool, bool) {
		cur, err := r.Snapshot()
		if err != nil {
			s.fail("os", err)
		}
		if sampled && cur.At.Sub(prev.At) < s.cfg.Interval/4 {
			// A tick or kick an instant after the last sample (ticks
			// the runner emits at once after a stall): that sample is
			// as new as it, and rates over the instant since would be
			// noise, at the same time on the millisecond axis.
			return true, true
		}
		s.add(cur.At, "os", probe.OSRates(prev, cur))
		prev, sampled = cur, true
		return true, true
	})
}

// every calls read at each interval (each kick when Driven) until ctx
// ends or read says to stop. A read that takes longer than the interval
// skips ticks rather than queueing them. A read that took no sample
// leaves its kick unanswered: the line waiting for it shows the last
// values as stale.
func (s *Sampler) every(ctx context.Context, source string, read func() (more, sampled bool)) {
	var tick <-chan time.Time
	if !s.cfg.Driven {
		t := time.NewTicker(s.cfg.Interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case <-s.kicks[source]:
		}
		s.mu.Lock()
		n := s.kicked
		s.mu.Unlock()
		more, sampled := read()
		if !more {
			return
		}
		if s.cfg.Driven && sampled {
			s.answer(source, n)
		}
	}
}

// openDB opens the engine's counters and reads them once, the base of
// the first rates.
func (s *Sampler) openDB(ctx context.Context, db target.CounterSource) (target.CounterReader, []target.Counter, error) {
	rd, err := db.OpenCounters(ctx)
	if err != nil {
		return nil, nil, err
	}
	prev, err := rd.ReadCounters(ctx)
	for errors.Is(err, target.ErrCountersBusy) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
		prev, err = rd.ReadCounters(ctx)
	}
	if err != nil {
		rd.Close()
		return nil, nil, err
	}
	return rd, prev, nil
}

// dbLoop samples the engine's counters. A read that fails once sampling
// has begun is a lost connection (the server restarted): the loop
// connects again at each interval, the samples it could not take are
// marked as a gap, and the rates start again from a new base.
func (s *Sampler) dbLoop(ctx context.Context, d dbSource) {
	defer s.wg.Done()
	defer s.answer(d.source, allKicks)
	rd, prev, err := s.openDB(ctx, d.db)
	if err != nil {
		s.fail(d.source, err)
		return
	}
	defer func() {
		if rd != nil {
			rd.Close()
		}
	}()
	prevAt := time.Now()
	s.every(ctx, d.source, func() (bool, bool) {
		if rd == nil {
			r, p, err := s.openDB(ctx, d.db)
			if err != nil {
				return ctx.Err() == nil, false
			}
			s.cfg.Logger.Debug("counters: connected again", "source", d.source)
			rd, prev, prevAt = r, p, time.Now()
			return true, false // the first sample after the gap is the next
		}
		asked := time.Now()
		cur, err := rd.ReadCounters(ctx)
		if errors.Is(err, target.ErrCountersBusy) {
			return true, false // the next sample covers this interval too
		}
		if err != nil {
			if ctx.Err() != nil {
				return false, false
			}
			s.cfg.Logger.Debug("counters: connection lost; connecting again", "source", d.source, "err", err)
			rd.Close()
			rd = nil
			s.lose(d.source, prevAt)
			return true, false
		}
		at := time.Now()
		if at.Sub(prevAt) < s.cfg.Interval/4 {
			// The read queued behind one the server answered late (it
			// was stopped, or stalled): rates over a few milliseconds
			// would be noise, so the next sample covers this one.
			return true, false
		}
		rs := DBRates(prev, cur, at.Sub(prevAt).Seconds())
		// How long the server took to answer: a server that stalls
		// (stopped, swapping, stuck in a flush) answers late, which no
		// counter of its own can say.
		rs = append(rs, probe.Reading{Name: "db.status_read_ms", Unit: "ms", Kind: result.CounterGauge,
			Value: float64(at.Sub(asked).Microseconds()) / 1000})
		for i := range rs {
			rs[i].Name = d.prefix + rs[i].Name
		}
		s.add(at, d.source, rs)
		s.resume(d.source, at)
		prev, prevAt = cur, at
		return true, true
	})
}

// lose opens a gap in source's series after its last sample, at last.
func (s *Sampler) lose(source string, last time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gaps[source]
	if n := len(g); n > 0 && g[n-1][1] < 0 {
		return // still open
	}
	s.gaps[source] = append(g, [2]float32{secondsSince(s.base, last), -1})
}

// resume closes source's open gap, if any, at its first sample after.
func (s *Sampler) resume(source string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.gaps[source]; len(g) > 0 && g[len(g)-1][1] < 0 {
		g[len(g)-1][1] = secondsSince(s.base, at)
	}
}

// DBRates turns two reads of the engine's counters into readings: rates per
// second for cumulative counters, values for gauges, and the cache hit
// ratio where the engine's counters give it.
func DBRates(a, b []target.Counter, secs float64) []probe.Reading {
	if secs <= 0 {
		return nil
	}
	before := make(map[string]float64, len(a))
	for _, c := range a {
		before[c.Name] = c.Value
	}
	delta := map[string]float64{}
	var out []probe.Reading
	for _, c := range b {
		if c.Gauge {
			out = append(out, probe.Reading{Name: "db." + c.Name, Unit: c.Unit, Kind: result.CounterGauge, Value: c.Value})
			continue
		}
		old, ok := before[c.Name]
		if !ok || c.Value < old { // new, or reset by the server
			continue
		}
		d := c.Value - old
		delta[c.Name] = d
		unit := "/s"
		if c.Unit != "" {
			unit = c.Unit + "/s"
		}
		out = append(out, probe.Reading{Name: "db." + c.Name, Unit: unit, Kind: result.CounterRate, Value: d / secs})
	}
	// InnoDB counts logical reads and the ones that went to disk;
	// PostgreSQL counts hits and misses.
	hit := -1.0
	if req := delta["buffer_pool_read_requests"]; req > 0 {
		hit = 100 * (1 - delta["buffer_pool_reads"]/req)
	} else if all := delta["blocks_hit"] + delta["blocks_read"]; all > 0 {
		hit = 100 * delta["blocks_hit"] / all
	}
	if hit >= 0 {
		out = append(out, probe.Reading{Name: "db.cache_hit", Unit: "%", Kind: result.CounterGauge, Value: hit})
	}
	return out
}

package htmlreport

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/sweep"
)

// Run is one result as the report shows it.
type Run struct {
	ID     int64 // the store's short ID; 0 when the run is not stored
	Result *result.Result
	// Label names the run in legends and tables instead of its ID (the
	// results site's own id for the result).
	Label string
}

func (r Run) ref() string {
	if r.Label != "" {
		return r.Label
	}
	if r.ID > 0 {
		return "#" + strconv.FormatInt(r.ID, 10)
	}
	id := r.Result.ID
	if len(id) > 8 {
		id = id[:8]
	}
	return id
}

// chart is what the page's script turns into one chart. Kinds: "line" (x,y
// points on a value axis, or values per category), "bar" (values per
// category), "box" (five numbers per category) and "percentile" (x is
// 1/(1-q), drawn on a log axis labelled with percentiles).
type chart struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Kind        string   `json:"kind"`
	XName       string   `json:"xName"`
	YName       string   `json:"yName"`
	XCategories []string `json:"xCategories,omitempty"`
	XMax        float64  `json:"xMax,omitempty"`
	// Group links charts on one time axis: their tooltips move together.
	Group  string   `json:"group,omitempty"`
	Shade  []band   `json:"shade,omitempty"`
	Series []series `json:"series"`
	YLog   float64  `json:"yLog,omitempty"` // > 0: a log scale from here, for values spanning orders of magnitude
	// Overlays are the counters the reader can draw over this chart, on
	// a second y axis.
	Overlays []overlay `json:"overlays,omitempty"`
	// Choices are metrics the reader can switch the chart to (sweepmetrics.go).
	Choices []choice `json:"choices,omitempty"`
}

type series struct {
	Name   string       `json:"name"`
	Color  string       `json:"color,omitempty"` // the palette's when empty
	Points [][2]float64 `json:"points,omitempty"`
	// Breaks are the indexes of Points before which the line is broken:
	// the samples between them are missing (a counter source that lost
	// its connection).
	Breaks []int         `json:"breaks,omitempty"`
	Values []*float64    `json:"values,omitempty"` // per category; nil where the cell has no run
	Boxes  []*[5]float64 `json:"boxes,omitempty"`  // per category; nil where the cell has no box
	// Marks are x ranges to shade in the series' own colour: one run's
	// dips among several.
	Marks []band `json:"marks,omitempty"`
}

// band is an x range to shade, such as a warm-up.
type band struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Label string  `json:"label"`
}

// timeSeries is one named value per interval, on the run's time axis.
type timeSeries struct {
	Name string
	// Key is the counter's own name (Name holds its unit too) and Unit its
	// unit, where the source has them.
	Key, Unit string
	T, V      []float64
	Gaps      [][2]float64 // where samples are missing (result.CounterSeries.Gaps)
}

// xySeries is a value against something other than time.
type xySeries struct {
	Name   string
	X, Y   []float64
	XLabel string
	YLabel string
}

// counterSources lists where a result keeps counters sampled on its time
// axis; each source is one line here. Workload-specific per-interval values
// (Interval.Extra) are drawn as counters unless a rows chart takes them.
func counterSources() []func(*result.Result) []timeSeries {
	return []func(*result.Result) []timeSeries{
		intervalExtras,
		sampledCounters,
	}
}

// sampledCounters are the OS and database counters sampled during the run
// (result.Counters), named with their unit.
func sampledCounters(r *result.Result) []timeSeries {
	if r.Counters == nil {
		return nil
	}
	out := make([]timeSeries, 0, len(r.Counters.Series))
	for _, c := range r.Counters.Series {
		ts := timeSeries{Name: c.Name, Key: c.Name, Unit: c.Unit, Gaps: c.Gaps}
		if c.Unit != "" {
			ts.Name += " (" + c.Unit + ")"
		}
		for _, p := range c.Points {
			ts.T = append(ts.T, p[0])
			ts.V = append(ts.V, p[1])
		}
		out = append(out, ts)
	}
	return out
}

// rowsSources lists the series keyed by a row count (the insert benchmark's
// insert rate against the table's size).
func rowsSources() []func(*result.Result) []xySeries {
	return []func(*result.Result) []xySeries{
		intervalRows,
		rowMarks,
	}
}

// rowMarks is the series a growing table's workload keeps every
// --report-rows rows (result.Rows): the insert rate since the previous mark
// and since the start, and the table's size as the engine reports it.
func rowMarks(r *result.Result) []xySeries {
	if r.Rows == nil || len(r.Rows.Series) == 0 {
		return nil
	}
	rate := xySeries{Name: "insert rate at each row mark", XLabel: "rows", YLabel: "rows/s"}
	cum := xySeries{Name: "cumulative insert rate", XLabel: "rows", YLabel: "rows/s"}
	size := xySeries{Name: "data and index size", XLabel: "rows", YLabel: "MiB"}
	// The query threads' rate, as iiBench's slides drew it ("QPS rate from
	// 4 threads concurrent with inserts"): beside the insert rate.
	qps := xySeries{Name: "query rate at each row mark", XLabel: "rows", YLabel: "queries/s"}
	queried := false
	for _, p := range r.Rows.Series {
		x := float64(p.Rows)
		rate.X, rate.Y = append(rate.X, x), append(rate.Y, p.InsertsPerS)
		qps.X, qps.Y = append(qps.X, x), append(qps.Y, p.QueriesPerS)
		queried = queried || p.QueriesPerS > 0
		cum.X, cum.Y = append(cum.X, x), append(cum.Y, p.CumInsertsPerS)
		if p.DataBytes >= 0 && p.IndexBytes >= 0 {
			size.X, size.Y = append(size.X, x), append(size.Y, float64(p.DataBytes+p.IndexBytes)/(1<<20))
		}
	}
	out := []xySeries{rate}
	if queried {
		out = append(out, qps)
	}
	out = append(out, cum)
	if len(size.X) > 0 {
		out = append(out, size)
	}
	return out
}

// Interval.Extra keys that make a rows chart: "rows" is the table's row
// count at the end of the interval and "rows_per_s" the insert rate (events
// per second when absent).
const (
	extraRows     = "rows"
	extraRowsPerS = "rows_per_s"
)

func intervalExtras(r *result.Result) []timeSeries {
	by := map[string]*timeSeries{}
	for _, iv := range r.Series {
		for k, v := range iv.Extra {
			if k == extraRows || k == extraRowsPerS || !finite(v) {
				continue
			}
			ts := by[k]
			if ts == nil {
				ts = &timeSeries{Name: k}
				by[k] = ts
			}
			ts.T = append(ts.T, iv.T)
			ts.V = append(ts.V, v)
		}
	}
	out := make([]timeSeries, 0, len(by))
	for _, k := range slices.Sorted(maps.Keys(by)) {
		out = append(out, *by[k])
	}
	return out
}

func intervalRows(r *result.Result) []xySeries {
	s := xySeries{Name: "insert rate", XLabel: "rows", YLabel: "rows/s"}
	for _, iv := range r.Series {
		rows, ok := iv.Extra[extraRows]
		if !ok || !finite(rows) {
			continue
		}
		rate, ok := iv.Extra[extraRowsPerS]
		if !ok {
			rate = iv.EventsPerS
		}
		if finite(rate) {
			s.X = append(s.X, rows)
			s.Y = append(s.Y, rate)
		}
	}
	if len(s.X) == 0 {
		return nil
	}
	return []xySeries{s}
}

// group is the runs of one workload: they share a headline and can be drawn
// on the same axes.
type group struct {
	Workload string
	Anchor   string
	Runs     []Run
	// Findings come first: those several runs share, each run's own,
	// and the runs that found nothing.
	Shared   []sharedFinding
	Findings []runFindings
	Quiet    string
	Sections []section
}

type section struct {
	ID     string
	Title  string
	Note   string
	Table  *gridTable // a sweep's cells as a table, before the charts
	Charts []chart
	Small  bool // small multiples: two charts a row

	Queries *queryTable // query suite runs' figures (queries.go)
}

// maxOverlay caps the runs drawn on one time axis; more is unreadable.
const maxOverlay = 12

// groups splits runs by workload, in the order given, and lays out each
// group's charts.
func groups(runs []Run) []group {
	var out []group
	idx := map[string]int{}
	for _, r := range runs {
		name := r.Result.Workload.Name
		i, ok := idx[name]
		if !ok {
			i = len(out)
			idx[name] = i
			out = append(out, group{Workload: name, Anchor: fmt.Sprintf("g%d", i+1)})
		}
		out[i].Runs = append(out[i].Runs, r)
	}
	for i := range out {
		g := &out[i]
		lb := newLabeler(g.Runs)
		g.Shared, g.Findings, g.Quiet = groupFindings(g.Runs, lb)
		for _, sw := range sweeps(g.Runs) {
			g.Sections = append(g.Sections, sweepSections(g.Anchor, sw)...)
		}
		g.Sections = append(g.Sections, querySections(g.Anchor, g.Runs, lb)...)
		g.Sections = append(g.Sections, runSections(g.Anchor, g.Runs, lb)...)
	}
	if g, ok := togetherGroup(runs); ok {
		out = append([]group{g}, out...)
	}
	return out
}

// sweepRuns is the runs of one sweep within a group.
type sweepRuns struct {
	ID   string
	Runs []Run
}

func sweeps(runs []Run) []sweepRuns {
	var out []sweepRuns
	idx := map[string]int{}
	for _, r := range runs {
		if r.Result.Sweep == nil || r.Result.Sweep.ID == "" {
			continue
		}
		id := r.Result.Sweep.ID
		i, ok := idx[id]
		if !ok {
			i = len(out)
			idx[id] = i
			out = append(out, sweepRuns{ID: id})
		}
		out[i].Runs = append(out[i].Runs, r)
	}
	return out
}

// varyingAxes are the cell keys whose values differ between runs: the
// sweep's axes as far as these runs show them. Threads come first, as the
// x axis people expect; the rest in name order.
func varyingAxes(runs []Run) []string {
	vals := map[string]map[string]bool{}
	for _, r := range runs {
		if r.Result.Sweep == nil {
			continue
		}
		for k, v := range r.Result.Sweep.Cell {
			if vals[k] == nil {
				vals[k] = map[string]bool{}
			}
			vals[k][v] = true
		}
	}
	var axes []string
	for k, vs := range vals {
		if len(vs) > 1 {
			axes = append(axes, k)
		}
	}
	slices.SortFunc(axes, threadsFirst)
	return axes
}

func cellLabel(s *result.SweepRef, axes []string) string {
	if s == nil {
		return ""
	}
	parts := make([]string, 0, len(axes))
	for _, k := range axes {
		if v, ok := s.Cell[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// sortValues orders axis values by what they mean when they all are
// numbers, sizes (256M, 2G) or durations (10s, 1m); other values keep the
// order they were given in.
func sortValues(vs []string) {
	nums, ok := sweep.Numeric(vs)
	if !ok {
		return
	}
	by := make(map[string]float64, len(vs))
	for i, v := range vs {
		by[v] = nums[i]
	}
	slices.SortStableFunc(vs, func(a, b string) int { return cmp.Compare(by[a], by[b]) })
}

// sweepSections draws a sweep: the headline against its first axis (a line
// per value of the others), the same as grouped bars, and box plots of the
// iterations of each cell.
func sweepSections(anchor string, sw sweepRuns) []section {
	axes := varyingAxes(sw.Runs)
	first := sw.Runs[0].Result
	unit := first.Summary.HeadlineUnit
	if unit == "" {
		unit = first.Workload.Headline
	}
	// headline values by cell, cells in order of their axis values
	type cell = sweepCell
	cells := map[string]*cell{}
	byX := map[string][]float64{}
	var xs, rests []string
	for _, r := range sw.Runs {
		if r.Result.Status != result.StatusOK || !finite(r.Result.Summary.Headline) {
			continue // a failed or interrupted run's rate is not a sample of the cell
		}
		label := cellLabel(r.Result.Sweep, axes)
		c := cells[label]
		if c == nil {
			c = &cell{label: label}
			if len(axes) > 0 {
				c.x = r.Result.Sweep.Cell[axes[0]]
				c.rest = cellLabel(r.Result.Sweep, axes[1:])
			}
			cells[label] = c
			xs, rests = appendNew(xs, c.x), appendNew(rests, c.rest)
		}
		c.ys = append(c.ys, r.Result.Summary.Headline)
		c.rates = append(c.rates, measuredRates(r.Result)...)
		byX[c.x] = append(byX[c.x], r.Result.Summary.Headline)
	}
	if len(cells) == 0 {
		return nil
	}
	sortValues(xs)
	maxIter := 0
	for _, c := range cells {
		maxIter = max(maxIter, len(c.ys))
	}

	id := anchor + "-sweep-" + shortID(sw.ID)
	sec := section{ID: id, Title: "Sweep " + shortID(sw.ID), Note: fmt.Sprintf("%d runs in %d cells; the mean of each cell's iterations", len(sw.Runs), len(cells))}
	sec.Table = sweepTable(axes, xs, rests, func(x, rest string) (float64, bool) {
		for _, c := range cells {
			if c.x == x && c.rest == rest {
				return mean(c.ys), true
			}
		}
		return 0, false
	})
	if c, ok := firstAxisBoxes(id+"-xbox", unit, axes, xs, byX); ok {
		sec.Charts = append(sec.Charts, c)
	}
	if len(axes) > 0 {
		var ser []series
		for _, rest := range rests {
			s := series{Name: cmp.Or(rest, unit), Values: make([]*float64, len(xs))}
			for _, c := range cells {
				if c.rest == rest {
					m := mean(c.ys)
					s.Values[slices.Index(xs, c.x)] = &m
				}
			}
			ser = append(ser, s)
		}
		sec.Charts = append(sec.Charts, chart{ID: id + "-line", Title: unit + " by " + axes[0], Kind: "line",
			XName: axes[0], YName: unit, XCategories: xs, Series: ser})
		if len(axes) > 1 {
			sec.Charts = append(sec.Charts, chart{ID: id + "-bars", Title: unit + " by " + strings.Join(axes, " and "), Kind: "bar",
				XName: axes[0], YName: unit, XCategories: xs, Series: ser})
		}
	}
	if c, ok := sweepMetricChart(id, sw.Runs, axes); ok {
		sec.Charts = append(sec.Charts, c)
	}
	if c, ok := cellBoxes(id+"-box", unit, axes, xs, rests, cells, maxIter); ok {
		sec.Charts = append(sec.Charts, c)
	}
	if len(sec.Charts) == 0 && sec.Table == nil {
		return nil
	}
	return []section{sec}
}

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// overlaid picks the runs drawn on shared axes: each sweep cell's first
// iteration (a line per cell) and every run outside a sweep, at most
// maxOverlay.
func overlaid(runs []Run) (shown []Run, note string) {
	seen := map[string]bool{}
	for _, r := range runs {
		if s := r.Result.Sweep; s != nil && s.ID != "" {
			key := s.ID + "\x00" + cellLabel(s, slices.Sorted(maps.Keys(s.Cell)))
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		shown = append(shown, r)
	}
	if len(shown) < len(runs) {
		note = fmt.Sprintf("the first iteration of each sweep cell: %d of %d runs", len(shown), len(runs))
	}
	if len(shown) > maxOverlay {
		note = fmt.Sprintf("the first %d of %d runs", maxOverlay, len(runs))
		shown = shown[:maxOverlay]
	}
	return shown, note
}

// runSections draws the runs over time, their latency distributions,
// counters and rows series.
func runSections(anchor string, runs []Run, lb labeler) []section {
	shown, note := overlaid(runs)
	var maxT float64
	var shade []band
	for _, r := range shown {
		if n := len(r.Result.Series); n > 0 {
			maxT = max(maxT, r.Result.Series[n-1].T)
		}
		if w := warmupEnd(r.Result); w > 0 && !slices.ContainsFunc(shade, func(b band) bool { return b.To == w }) {
			shade = append(shade, band{From: 0, To: w, Label: "warm-up"})
		}
	}
	// Warm-ups all start at 0: name only the longest, so labels do not overlap.
	slices.SortFunc(shade, func(a, b band) int { return cmp.Compare(b.To, a.To) })
	for i := 1; i < len(shade); i++ {
		shade[i].Label = ""
	}
	// A lone run's dips are marked where they are.
	if len(shown) == 1 {
		shade = append(shade, dipBands(shown[0])...)
	}
	// What the machine was busy with meanwhile (a RAID sync), for every run.
	for _, r := range shown {
		shade = append(shade, machineBands(r)...)
	}
	maxT = math.Ceil(maxT) // a round end for the shared time axis
	timeGroup := anchor + "-time"
	unit := runs[0].Result.Summary.HeadlineUnit
	if unit == "" || runs[0].Result.Queries != nil { // a query suite's headline is its time, not a rate
		unit = "events/s"
	}

	var thr, lat []series
	for _, r := range shown {
		if s := headlineSeries(r.Result, lb.label(r), 0); len(s.Points) > 0 {
			if len(shown) > 1 { // each run's dips on its own line; a lone run's shade every chart
				s.Marks = dipBands(r)
			}
			thr = append(thr, s)
			thr = append(thr, serverSeries(r.Result, lb.label(r))...)
		}
		for _, p := range tailPercentiles(r.Result) {
			s := series{Name: lb.label(r) + " p" + strconv.FormatFloat(p, 'f', -1, 64)}
			for _, iv := range r.Result.Series {
				for _, q := range iv.Latency {
					if q.P == p && finite(q.MS) {
						s.Points = append(s.Points, [2]float64{iv.T, q.MS})
					}
				}
			}
			if len(s.Points) > 0 {
				lat = append(lat, s)
			}
		}
	}
	var out []section
	counters, overlays := counterSections(anchor, shown, lb, maxT, timeGroup, shade)
	over := section{ID: anchor + "-time", Title: "Over time", Note: note}
	if len(thr) > 0 {
		over.Charts = append(over.Charts, chart{ID: anchor + "-tput", Title: "Throughput", Kind: "line",
			XName: "seconds", YName: unit, XMax: maxT, Group: timeGroup, Shade: shade, Series: thr, Overlays: overlays})
	}
	if len(lat) > 0 {
		over.Charts = append(over.Charts, chart{ID: anchor + "-lat", Title: "Latency percentiles per interval", Kind: "line",
			XName: "seconds", YName: "ms", XMax: maxT, Group: timeGroup, Shade: shade, Series: lat})
	}
	if len(over.Charts) > 0 {
		out = append(out, over)
	}
	out = append(out, counters...)
	if c := rowsCharts(anchor, shown, lb); len(c) > 0 {
		out = append(out, section{ID: anchor + "-rows", Title: "Against rows", Charts: c})
	}
	if c := latencyCharts(anchor, shown, lb); len(c) > 0 {
		out = append(out, section{ID: anchor + "-latency", Title: "Latency distribution",
			Note: "from the HDR histograms of the measured part; the x axis is 1/(1-percentile)", Charts: c})
	}
	return out
}

// headlineSeries is r's headline per interval (events/s, or the series
// the workload names), its times shifted by dt seconds.
func headlineSeries(r *result.Result, name string, dt float64) series {
	s := series{Name: name}
	key := r.Summary.HeadlineSeries
	for _, iv := range r.Series {
		v := iv.EventsPerS
		if key != "" {
			var ok bool
			if v, ok = iv.Extra[key]; !ok {
				continue
			}
		}
		if finite(v) {
			s.Points = append(s.Points, [2]float64{iv.T + dt, v})
		}
	}
	return s
}

// serverSeries are the events/s of each server of a run on several (a
// cluster's nodes), drawn beside the run's total and named after it; none
// when its headline is a series of the workload's own.
func serverSeries(r *result.Result, name string) []series {
	if len(r.Servers) == 0 || r.Summary.HeadlineSeries != "" {
		return nil
	}
	out := make([]series, len(r.Servers))
	for i, sv := range r.Servers {
		out[i].Name = name + " " + sv.Label
		for _, iv := range r.Series {
			if i < len(iv.ServersEventsPerS) && finite(iv.ServersEventsPerS[i]) {
				out[i].Points = append(out[i].Points, [2]float64{iv.T, iv.ServersEventsPerS[i]})
			}
		}
	}
	return out
}

// together finds the runs that ran at the same time, whatever their
// workloads (queries timed while iibench inserts into the same server):
// clusters of two or more runs whose spans from start to end overlap, in
// order of start.
func together(runs []Run) [][]Run {
	var timed []Run
	for _, r := range runs {
		if !r.Result.StartedAt.IsZero() && r.Result.EndedAt.After(r.Result.StartedAt) {
			timed = append(timed, r)
		}
	}
	slices.SortStableFunc(timed, func(a, b Run) int { return a.Result.StartedAt.Compare(b.Result.StartedAt) })
	var out [][]Run
	var cur []Run
	var end time.Time
	for _, r := range timed {
		if len(cur) > 0 && r.Result.StartedAt.Before(end) {
			cur = append(cur, r)
		} else {
			if len(cur) > 1 {
				out = append(out, cur)
			}
			cur = []Run{r}
			end = time.Time{}
		}
		if r.Result.EndedAt.After(end) {
			end = r.Result.EndedAt
		}
	}
	if len(cur) > 1 {
		out = append(out, cur)
	}
	return out
}

// togetherGroup draws each cluster of runs that ran at the same time on
// one clock, a chart per run (their headlines differ in kind) on linked
// axes: seconds since the first of them started.
func togetherGroup(runs []Run) (group, bool) {
	clusters := together(runs)
	if len(clusters) == 0 {
		return group{}, false
	}
	g := group{Workload: "Runs at the same time", Anchor: "together"}
	lb := newLabeler(runs)
	for i, c := range clusters {
		anchor := fmt.Sprintf("together%d", i+1)
		start := c[0].Result.StartedAt
		var maxT float64
		for _, r := range c {
			maxT = max(maxT, r.Result.EndedAt.Sub(start).Seconds())
		}
		maxT = math.Ceil(maxT)
		sec := section{ID: anchor, Title: fmt.Sprintf("%d runs on one clock", len(c)),
			Note: "their times overlapped: seconds since " + start.Local().Format("15:04:05") + ", when the first started"}
		for j, r := range c {
			dt := r.Result.StartedAt.Sub(start).Seconds()
			name := r.Result.Workload.Name + " " + lb.label(r)
			s := headlineSeries(r.Result, name, dt)
			if len(s.Points) == 0 {
				continue
			}
			unit := r.Result.Summary.HeadlineUnit
			if unit == "" {
				unit = "events/s"
			}
			span := band{From: dt, To: r.Result.EndedAt.Sub(start).Seconds(), Label: "this run"}
			sec.Charts = append(sec.Charts, chart{ID: fmt.Sprintf("%s-%d", anchor, j+1), Title: name, Kind: "line",
				XName: "seconds", YName: unit, XMax: maxT, Group: anchor + "-time", Shade: []band{span}, Series: []series{s}})
		}
		if len(sec.Charts) > 1 {
			g.Sections = append(g.Sections, sec)
		}
	}
	return g, len(g.Sections) > 0
}

// warmupEnd is the time the last warm-up interval ended, 0 without one.
func warmupEnd(r *result.Result) float64 {
	var end float64
	for _, iv := range r.Series {
		if iv.Warmup {
			end = iv.T
		}
	}
	return end
}

// tailPercentiles picks p95 and p99 from the interval percentiles, or all
// of them when the run recorded neither.
func tailPercentiles(r *result.Result) []float64 {
	have := map[float64]bool{}
	for _, iv := range r.Series {
		for _, q := range iv.Latency {
			have[q.P] = true
		}
	}
	var out []float64
	for _, p := range []float64{95, 99} {
		if have[p] {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		out = slices.Sorted(maps.Keys(have))
	}
	return out
}

func rowsCharts(anchor string, runs []Run, lb labeler) []chart {
	type key struct{ name, x, y string }
	by := map[key][]series{}
	var keys []key
	for _, r := range runs {
		for _, src := range rowsSources() {
			for _, xy := range src(r.Result) {
				k := key{xy.Name, xy.XLabel, xy.YLabel}
				if _, ok := by[k]; !ok {
					keys = append(keys, k)
				}
				s := series{Name: lb.label(r)}
				for i := range xy.X {
					s.Points = append(s.Points, [2]float64{xy.X[i], xy.Y[i]})
				}
				by[k] = append(by[k], s)
			}
		}
	}
	var out []chart
	for i, k := range keys {
		out = append(out, chart{ID: fmt.Sprintf("%s-rows%d", anchor, i+1), Title: k.name + " against " + k.x, Kind: "line",
			XName: k.x, YName: k.y, Series: by[k]})
	}
	return out
}

// latencyCharts draws percentile plots from the decoded histograms: every
// operation of a lone run, the events of several.
func latencyCharts(anchor string, runs []Run, lb labeler) []chart {
	var ser []series
	for _, r := range runs {
		events := map[string]bool{}
		for _, op := range r.Result.Summary.Ops {
			if op.Kind == "event" {
				events[op.Name] = true
			}
		}
		for _, h := range r.Result.Histograms {
			if h.Kind == "lag" || (len(runs) > 1 && (!events[h.Op] || h.Kind != "latency")) {
				continue
			}
			pts, err := percentilePoints(h)
			if err != nil || len(pts) == 0 {
				continue
			}
			name := lb.label(r)
			if len(runs) == 1 {
				name = h.Op
			}
			if h.Kind != "latency" {
				name += " (" + h.Kind + ")"
			}
			ser = append(ser, series{Name: name, Points: pts})
		}
	}
	if len(ser) == 0 {
		return nil
	}
	return []chart{{ID: anchor + "-pct", Title: "Latency by percentile", Kind: "percentile", XName: "percentile", YName: "ms", Series: ser}}
}

// percentilePoints samples a histogram at 20 points a decade of 1/(1-q),
// as HdrHistogram's percentile plots do, up to its maximum.
func percentilePoints(enc result.Histogram) ([][2]float64, error) {
	h, err := enc.Decode()
	if err != nil {
		return nil, err
	}
	n := h.TotalCount()
	if n == 0 {
		return nil, nil
	}
	var xs, qs []float64
	for k := 0; ; k++ {
		x := math.Pow(10, float64(k)/20)
		if x >= float64(n) {
			break
		}
		xs = append(xs, x)
		qs = append(qs, (1-1/x)*100)
	}
	// In one pass over the counts: a scan per point cost the results
	// site's page of a long run milliseconds. The 100th percentile is the
	// maximum (Max walks the histogram again, slowly).
	vals := h.ValueAtPercentilesSlice(append(qs, 100))
	var pts [][2]float64
	for i, x := range xs {
		if v := float64(vals[i]) / 1e6; v > 0 { // the y axis is logarithmic
			pts = append(pts, [2]float64{x, v})
		}
	}
	return append(pts, [2]float64{max(float64(n), 1), float64(vals[len(xs)]) / 1e6}), nil
}

// breaks are the indexes of ts's points that follow a gap: the first
// sample after it, where the line must not join the one before.
func breaks(ts timeSeries) []int {
	var out []int
	for i := 1; i < len(ts.T); i++ {
		for _, g := range ts.Gaps {
			if mid := (g[0] + g[1]) / 2; ts.T[i-1] < mid && mid <= ts.T[i] {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// counterKind is one kind of resource the counters measure; a report
// draws each kind's counters together.
type counterKind struct {
	Key, Title string
	// match says whether a counter's name (result.CounterSeries.Name, or
	// an Interval.Extra key) is of this kind.
	match func(name string) bool
}

// counterKinds are the kinds in the order a report draws them: the
// machine's resources, then the engine's, then what the workload
// records. The last one takes every name.
func counterKinds() []counterKind {
	prefix := func(ps ...string) func(string) bool {
		return func(n string) bool {
			return slices.ContainsFunc(ps, func(p string) bool { return strings.HasPrefix(n, p) })
		}
	}
	return []counterKind{
		{"cpu", "CPU", prefix("os.cpu.", "os.context_switches", "os.resched_interrupts", "os.load", "os.procs")},
		{"disks", "disks", prefix("os.disk.")},
		{"memory", "memory", prefix("os.mem.", "os.swap", "os.vm.")},
		{"network", "network", prefix("os.net.")},
		{"engine", "engine", prefix("db.")},
		{"os", "other OS counters", prefix("os.")},
		{"workload", "workload", func(string) bool { return true }},
	}
}

// kindOf is the index in kinds of the kind name belongs to. A merged
// result's counters are each host's, named "HOST/os.cpu.user" (package
// merge): their kind is the counter's after the host.
func kindOf(kinds []counterKind, name string) int {
	if host, counter, ok := strings.Cut(name, "/"); ok && !strings.Contains(host, ".") {
		name = counter
	}
	return slices.IndexFunc(kinds, func(k counterKind) bool { return k.match(name) })
}

// Flatness: a counter moved when its values over the measured part spread
// over more than this share of their size; a percentage, when they spread
// over more than flatPoints points as well. Interval noise of a few
// percent is not a move.
const (
	flatShare  = 0.20
	flatPoints = 2.0
)

// moved says whether ts moved after from (the warm-up's end): a warm-up
// starts cold, so its climb says nothing. With fewer than 3 measured
// samples the whole series counts.
func moved(ts timeSeries, from float64) bool {
	vs := measuredValues(ts, from)
	if len(vs) < 2 {
		return false
	}
	lo, hi := slices.Min(vs), slices.Max(vs)
	spread := hi - lo
	if spread > flatShare*max(math.Abs(lo), math.Abs(hi)) {
		return ts.Unit != "%" || spread > flatPoints
	}
	return false
}

func measuredValues(ts timeSeries, from float64) []float64 {
	var vs []float64
	for i, t := range ts.T {
		if t > from {
			vs = append(vs, ts.V[i])
		}
	}
	if len(vs) < 3 {
		vs = slices.Clone(ts.V)
	}
	return vs
}

// counterLine is one counter of the runs drawn on shared axes: a series per
// run, and whether any of them moved.
type counterLine struct {
	Key, Name, Unit string
	Kind            int
	Series          []series
	Moved           bool
	// Levels are each run's median over its measured part, for the flat
	// line.
	Levels []float64
}

// counterLines collects the counters of runs by name, in the order of
// their kind and then of first appearance. A counter that moved during a
// dip (a dip's mover) counts as moved.
func counterLines(runs []Run, lb labeler) []*counterLine {
	kinds := counterKinds()
	movers := map[string]bool{}
	for _, r := range runs {
		for _, d := range r.Result.Summary.Dips {
			for _, m := range d.Movers {
				movers[m.Name] = true
			}
		}
	}
	by := map[string]*counterLine{}
	var lines []*counterLine
	for _, r := range runs {
		from := warmupEnd(r.Result)
		for _, src := range counterSources() {
			for _, ts := range src(r.Result) {
				if len(ts.T) == 0 {
					continue
				}
				l := by[ts.Name]
				if l == nil {
					key := counterKey(ts)
					l = &counterLine{Key: key, Name: ts.Name, Unit: ts.Unit, Kind: kindOf(kinds, key), Moved: movers[key]}
					by[ts.Name] = l
					lines = append(lines, l)
				}
				s := series{Name: lb.label(r), Breaks: breaks(ts)}
				for i := range ts.T {
					s.Points = append(s.Points, [2]float64{ts.T[i], ts.V[i]})
				}
				l.Series = append(l.Series, s)
				l.Moved = l.Moved || moved(ts, from)
				l.Levels = append(l.Levels, median(measuredValues(ts, from)))
			}
		}
	}
	slices.SortStableFunc(lines, func(a, b *counterLine) int { return a.Kind - b.Kind })
	return lines
}

// counterKey is the name a counter is grouped and matched by: its own, without
// the unit the chart title adds.
func counterKey(ts timeSeries) string {
	if ts.Key != "" {
		return ts.Key
	}
	return ts.Name
}

// counterSections draws the counters that moved, a section per kind, and
// names the flat ones in one line after them. It also returns the
// counters a reader can lay over the throughput chart: each drawn one by
// its chart, each flat one with its points.
func counterSections(anchor string, runs []Run, lb labeler, maxT float64, timeGroup string, shade []band) ([]section, []overlay) {
	lines := counterLines(runs, lb)
	if len(lines) == 0 {
		return nil, nil
	}
	kinds := counterKinds()
	var out []section
	var overlays, flatOverlays []overlay
	flat := map[int][]string{}
	n := 0
	for _, l := range lines {
		if !l.Moved {
			flat[l.Kind] = append(flat[l.Kind], l.Key+" "+levels(l.Levels, l.Unit))
			flatOverlays = append(flatOverlays, overlay{Name: l.Name, Series: l.Series})
			continue
		}
		k := kinds[l.Kind]
		id := anchor + "-counters-" + k.Key
		if len(out) == 0 || out[len(out)-1].ID != id {
			out = append(out, section{ID: id, Title: "Counters: " + k.Title, Small: true})
		}
		n++
		c := chart{ID: fmt.Sprintf("%s-ctr%d", anchor, n), Title: l.Name, Kind: "line",
			XName: "seconds", YName: l.Name, XMax: maxT, Group: timeGroup, Shade: shade, Series: l.Series}
		out[len(out)-1].Charts = append(out[len(out)-1].Charts, c)
		overlays = append(overlays, overlay{Name: l.Name, Chart: c.ID})
	}
	var missing []string
	for _, r := range runs {
		for _, m := range r.Result.Counters.Missing() {
			if len(runs) > 1 {
				m = lb.label(r) + ": " + m
			}
			missing = append(missing, m)
		}
	}
	if len(out) > 0 {
		out[0].Note = strings.Join(append([]string{"the counters that moved, on the throughput's time axis"}, missing...), "; ")
	}
	if len(flat) > 0 {
		var parts []string
		for i, k := range kinds {
			if f := flat[i]; len(f) > 0 {
				parts = append(parts, k.Title+": "+strings.Join(f, ", "))
			}
		}
		note := "flat, so not drawn (the throughput chart can show any of them): " + strings.Join(parts, "; ")
		if len(out) == 0 {
			note = strings.Join(append([]string{note}, missing...), "; ")
		}
		out = append(out, section{ID: anchor + "-counters-flat", Title: "Counters that did not move", Note: note})
	}
	return out, append(overlays, flatOverlays...)
}

// levels is a flat counter's level: one value for one run, the range of
// the runs' levels for several.
func levels(vs []float64, unit string) string {
	lo, hi := withUnit(slices.Min(vs), unit), withUnit(slices.Max(vs), unit)
	if lo == hi {
		return lo
	}
	return lo + " to " + hi
}

func median(vs []float64) float64 {
	b, ok := quartiles(vs)
	if !ok {
		return math.NaN()
	}
	return b.Median
}

// overlay is a counter the throughput chart can draw on a second y axis,
// chosen by the reader: the series of a counter chart (Chart, its id) or
// its own (a flat counter has no chart).
type overlay struct {
	Name   string   `json:"name"`
	Chart  string   `json:"chart,omitempty"`
	Series []series `json:"series,omitempty"`
}

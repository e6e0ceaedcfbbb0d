package htmlreport

import (
	_ "embed"
	"slices"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/sweep"
)

//go:embed sweepmetrics.js
var sweepMetricsScript string

// The metric picker's script runs after the page's own has drawn the
// charts; it is a file of its own so that the picker is one piece, and it
// rides on the page's script, so every page that draws the charts (the
// report, the site's pages) has it.
func init() { pageScript += "\n" + sweepMetricsScript }

// choice is one metric a chart can be switched to: the series to draw in
// place of the chart's own, and the y axis' name.
type choice struct {
	Name   string   `json:"name"` // "p95 (ms)"
	YName  string   `json:"yName"`
	Series []series `json:"series"`
}

// firstChoice is the metric a sweep's metric chart opens on: the p95
// against the sweep's axis, as the posts dbmark follows drew it.
const firstChoice = "p95"

// sweepMetricChart draws any metric of a sweep's finished runs
// (sweep.Measures: latency percentiles, per-operation rates and latencies,
// MiB/s, errors...) against the sweep's first axis, a line per combination
// of the other axes, each point the mean of the cell's runs; a list above
// the chart picks the metric. No chart when the sweep has no axis, or its
// runs measured nothing but the headline.
func sweepMetricChart(id string, runs []Run, axes []string) (chart, bool) {
	if len(axes) == 0 {
		return chart{}, false
	}
	type key struct{ x, rest, metric string }
	vals := map[key][]float64{}
	var xs, rests []string
	var all [][]sweep.Measure
	for _, r := range runs {
		if r.Result.Status != result.StatusOK || r.Result.Sweep == nil {
			continue
		}
		x, rest := r.Result.Sweep.Cell[axes[0]], cellLabel(r.Result.Sweep, axes[1:])
		xs, rests = appendNew(xs, x), appendNew(rests, rest)
		ms := sweep.Measures(r.Result)
		all = append(all, ms)
		for _, m := range ms {
			if finite(m.Value) {
				k := key{x, rest, m.Name}
				vals[k] = append(vals[k], m.Value)
			}
		}
	}
	known := sweep.Known(all)
	if len(known) < 2 {
		return chart{}, false
	}
	sortValues(xs)
	// The first choice first, the others in the order runs measure them.
	slices.SortStableFunc(known, func(a, b sweep.Metric) int {
		switch {
		case a.Name == firstChoice:
			return -1
		case b.Name == firstChoice:
			return 1
		}
		return 0
	})
	var choices []choice
	for _, m := range known {
		name := m.Name
		if m.Unit != "" {
			name += " (" + m.Unit + ")"
		}
		ch := choice{Name: name, YName: name}
		for _, rest := range rests {
			s := series{Name: rest, Values: make([]*float64, len(xs))}
			for i, x := range xs {
				if v := vals[key{x, rest, m.Name}]; len(v) > 0 {
					mv := mean(v)
					s.Values[i] = &mv
				}
			}
			if s.Name == "" {
				s.Name = name
			}
			ch.Series = append(ch.Series, s)
		}
		choices = append(choices, ch)
	}
	first := choices[0]
	return chart{ID: id + "-metric", Title: "Any metric by " + axes[0] + " (pick it above the chart)", Kind: "line",
		XName: axes[0], YName: first.YName, XCategories: xs, Series: first.Series, Choices: choices}, true
}

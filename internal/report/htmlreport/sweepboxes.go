package htmlreport

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
)

// sweepCell is one cell of a sweep as drawn: where it sits on the axes,
// its runs' headlines and their measured per-interval rates.
type sweepCell struct {
	x, rest, label string
	ys             []float64
	rates          []float64
}

// minRepeats is how many runs a cell needs for its box to be of its
// repeats; with fewer, the box is of its runs' per-interval rates.
const minRepeats = 3

// measuredRates are a run's per-interval event rates after its warm-up.
func measuredRates(r *result.Result) []float64 {
	var out []float64
	for _, iv := range r.Series {
		if !iv.Warmup && finite(iv.EventsPerS) {
			out = append(out, iv.EventsPerS)
		}
	}
	return out
}

// cellBoxes is a box per cell of a sweep, as the pgbench post draws them:
// grouped by the first axis (the x categories) and coloured by the others
// (a series each), on one y scale. A cell of at least minRepeats runs is
// boxed over its repeats' headlines; a cell of fewer over its runs'
// per-interval rates, so a sweep of one run per cell still shows each
// cell's spread. The title says which.
func cellBoxes(id, unit string, axes, xs, rests []string, cells map[string]*sweepCell, maxIter int) (chart, bool) {
	byRepeats := maxIter >= minRepeats
	var out []series
	drawn := 0
	for _, rest := range rests {
		s := series{Name: cmp.Or(rest, unit), Boxes: make([]*[5]float64, len(xs))}
		for _, c := range cells {
			if c.rest != rest {
				continue
			}
			vals := c.rates
			if byRepeats {
				vals = c.ys
			}
			b, ok := quartiles(vals)
			if !ok {
				continue
			}
			for i, x := range xs {
				if x == c.x {
					s.Boxes[i] = &[5]float64{b.Min, b.Q1, b.Median, b.Q3, b.Max}
					drawn++
				}
			}
		}
		out = append(out, s)
	}
	if drawn == 0 {
		return chart{}, false
	}
	title := unit + " per interval of each cell's runs"
	if byRepeats {
		title = fmt.Sprintf("%s across each cell's runs (%d or more a cell)", unit, minRepeats)
	}
	xName := ""
	if len(axes) > 0 {
		xName = axes[0]
		if len(axes) > 1 {
			title += ", coloured by " + strings.Join(axes[1:], " and ")
		}
	}
	cats := xs
	if len(axes) == 0 {
		cats = []string{"all"}
	}
	return chart{ID: id, Title: title, Kind: "box", XName: xName, YName: unit, XCategories: cats, Series: out}, true
}

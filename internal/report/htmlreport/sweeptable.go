package htmlreport

import (
	"slices"
	"strings"
)

// gridTable is a sweep's headline as a table: the first axis down, the
// others across (pgbench's clients against transactions per client).
type gridTable struct {
	Corner string // "clients \ transactions"
	Cols   []string
	Rows   []gridRow
}

type gridRow struct {
	Name   string
	Values []string
}

// sweepTable lays out the mean headline of each cell, a row per value of
// the first axis and a column per combination of the others; "-" where a
// cell has no run that counts. It needs two axes or more.
func sweepTable(axes, xs, rests []string, at func(x, rest string) (float64, bool)) *gridTable {
	if len(axes) < 2 {
		return nil
	}
	rests = slices.Clone(rests)
	if len(axes) == 2 { // order the columns by their values, as the rows are
		by := map[string]string{}
		vals := make([]string, len(rests))
		for i, rest := range rests {
			vals[i] = strings.TrimPrefix(rest, axes[1]+"=")
			by[vals[i]] = rest
		}
		sortValues(vals)
		for i, v := range vals {
			rests[i] = by[v]
		}
	}
	t := &gridTable{Corner: axes[0] + ` \ ` + strings.Join(axes[1:], " "), Cols: make([]string, len(rests))}
	for i, rest := range rests {
		if len(axes) == 2 {
			rest = strings.TrimPrefix(rest, axes[1]+"=") // the corner names the axis
		}
		t.Cols[i] = rest
	}
	for _, x := range xs {
		row := gridRow{Name: x, Values: make([]string, len(rests))}
		for i, rest := range rests {
			row.Values[i] = "-"
			if v, ok := at(x, rest); ok {
				row.Values[i] = num(v)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// firstAxisBoxes is a box of the headline per value of the first axis,
// over every run with that value whatever the other axes (the spread of
// tps per client count, as pgbench's sweeps are shown). It needs two axes
// or more: with one, the boxes of each cell's iterations are the same.
func firstAxisBoxes(id, unit string, axes, xs []string, byX map[string][]float64) (chart, bool) {
	if len(axes) < 2 {
		return chart{}, false
	}
	s := series{Name: unit}
	for _, x := range xs {
		b, _ := quartiles(byX[x])
		s.Boxes = append(s.Boxes, &[5]float64{b.Min, b.Q1, b.Median, b.Q3, b.Max})
	}
	return chart{ID: id, Title: unit + " by " + axes[0] + ", every run", Kind: "box",
		XName: axes[0], YName: unit, XCategories: xs, Series: []series{s}}, true
}

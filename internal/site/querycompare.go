package site

import (
	"math"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site/sitestore"
)

// queryCompare sets query suites side by side, query by query: each
// result's median time and its ratio to the first's (above 1: faster than
// the first), and the geometric mean of each result's ratios over the
// queries both ran. It reads the results' queries sections directly.
type queryCompare struct {
	IDs     []string
	Rows    []queryCompareRow
	Geomean []string // per result: the geometric mean of its ratios
}

type queryCompareRow struct {
	Label string
	Cells []queryCompareCell
}

type queryCompareCell struct{ Median, Ratio string }

// queriesCompared is nil unless every run is a query suite's.
func queriesCompared(ids []string, runs []*result.Result) *queryCompare {
	medians := make([]map[string]float64, len(runs))
	var labels []string
	for i, r := range runs {
		if r.Queries == nil {
			return nil
		}
		medians[i] = map[string]float64{}
		for _, q := range r.Queries.List {
			if i == 0 {
				labels = append(labels, q.Label)
			}
			if q.MedianS > 0 {
				medians[i][q.Label] = q.MedianS
			}
		}
	}
	// The other results' queries the first did not run come last.
	seen := map[string]bool{}
	for _, l := range labels {
		seen[l] = true
	}
	for _, r := range runs[1:] {
		for _, q := range r.Queries.List {
			if !seen[q.Label] {
				seen[q.Label] = true
				labels = append(labels, q.Label)
			}
		}
	}
	c := &queryCompare{IDs: ids}
	logSum := make([]float64, len(runs))
	n := make([]int, len(runs))
	for _, l := range labels {
		row := queryCompareRow{Label: l}
		base, hasBase := medians[0][l]
		for i := range runs {
			m, ok := medians[i][l]
			cell := queryCompareCell{Median: "-", Ratio: "-"}
			if ok {
				cell.Median = ms(m)
			}
			if ok && hasBase {
				ratio := base / m
				cell.Ratio = num(ratio)
				logSum[i] += math.Log(ratio)
				n[i]++
			}
			row.Cells = append(row.Cells, cell)
		}
		c.Rows = append(c.Rows, row)
	}
	for i := range runs {
		g := "-"
		if n[i] > 0 {
			g = num(math.Exp(logSum[i] / float64(n[i])))
		}
		c.Geomean = append(c.Geomean, g)
	}
	return c
}

func entryIDs(es []*sitestore.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

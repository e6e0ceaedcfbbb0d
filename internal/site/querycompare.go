package site

import (
	"github.com/dbmark/dbmark/internal/compare"
	"github.com/dbmark/dbmark/internal/site/sitestore"
)

// queryCompare lays out compare.Diff's per-query comparisons (each result
// after the first against the first, as dbmark compare makes them) as one
// table: a row per query, the first result's median time, then each
// other's median, its ratio B/A of the geometric mean times (below 1:
// faster) and the verdict; and the geometric mean of the ratios.
type queryCompare struct {
	Base    string
	Others  []string
	Rows    []queryCompareRow
	Geomean []string // per other result
	Method  string
}

type queryCompareRow struct {
	Label, Base string
	Cells       []queryCompareCell
}

type queryCompareCell struct{ Median, Ratio, Verdict string }

// queriesCompared is nil unless the results are query suites (qcs, one per
// result after the first).
func queriesCompared(ids []string, qcs []compare.QueryComparison) *queryCompare {
	if len(qcs) == 0 || len(qcs) != len(ids)-1 {
		return nil
	}
	c := &queryCompare{Base: ids[0], Others: ids[1:], Method: qcs[0].Method}
	var labels []string
	seen := map[string]bool{}
	by := make([]map[string]compare.QueryRow, len(qcs))
	for i, qc := range qcs {
		by[i] = map[string]compare.QueryRow{}
		for _, r := range qc.Rows {
			by[i][r.Label] = r
			if !seen[r.Label] {
				seen[r.Label] = true
				labels = append(labels, r.Label)
			}
		}
		g := "-"
		if qc.Geomean > 0 {
			g = num(qc.Geomean)
		}
		c.Geomean = append(c.Geomean, g)
	}
	for _, l := range labels {
		row := queryCompareRow{Label: l, Base: "-"}
		for i := range qcs {
			r, ok := by[i][l]
			cell := queryCompareCell{Median: "-", Ratio: "-"}
			if ok {
				if r.A != nil && row.Base == "-" && r.A.Failed == 0 {
					row.Base = ms(r.A.MedianS)
				}
				if r.B != nil && r.B.Failed == 0 {
					cell.Median = ms(r.B.MedianS)
				}
				if r.Ratio > 0 {
					cell.Ratio = num(r.Ratio)
				}
				cell.Verdict = r.Verdict
			}
			row.Cells = append(row.Cells, cell)
		}
		c.Rows = append(c.Rows, row)
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

package htmlreport

import (
	_ "embed"
	"fmt"
	"math"
	"slices"

	"github.com/dbmark/dbmark/internal/result"
)

//go:embed queries.html.tmpl
var queriesTemplate string

// queryTable is the figures of query suite runs side by side: a row per
// query, a column group (cold, hot, median) per run, and each run's
// geometric mean and total.
type queryTable struct {
	Runs    []string // the runs' legend labels
	Rows    []queryTableRow
	Geomean []string // each run's geometric mean of its queries' medians (result.Queries.GeomeanS)
	Total   []string // each run's suite time
}

type queryTableRow struct {
	Label string
	Cells []queryCell // one per run
}

type queryCell struct {
	Cold, Hot, Median string
	// Failed says how many of the query's runs failed and the first one's
	// error, for a run in which it did.
	Failed string
}

// maxQueryRuns caps the runs drawn in one per-query chart: each has two
// bars in every query's group.
const maxQueryRuns = 6

// queryColors are the bars' colours: a run's hot bar in a strong colour
// and its cold bar in a pale one of the same hue, so the pair reads as one
// run.
var queryColors = [maxQueryRuns][2]string{
	{"#9db5dd", "#2456a6"}, {"#eab39d", "#d1603d"}, {"#a9d1b1", "#3f8f4f"},
	{"#cdb2dd", "#8a4fb0"}, {"#e6cf8a", "#c49a1a"}, {"#9fd3d1", "#2a9d9a"},
}

// querySections draws the runs of a query suite (dbmark run query,
// wisconsin) query by query: grouped bars, a group per query label and in
// each a bar per run for its cold time (the first iteration) beside its
// hot time (the fastest of the others), the last group the geometric mean
// of each; and the figures as a table with each run's geometric mean of
// its medians. Nothing when no run has queries.
func querySections(anchor string, runs []Run, lb labeler) []section {
	var shown []Run
	for _, r := range runs {
		if r.Result.Queries != nil && len(r.Result.Queries.List) > 0 {
			shown = append(shown, r)
		}
	}
	if len(shown) == 0 {
		return nil
	}
	note := "ms; cold: each query's first iteration, hot: the fastest of the others; the last group is the geometric mean of the queries' cold and hot times"
	if len(shown) > maxQueryRuns {
		note += fmt.Sprintf("; the first %d of %d runs", maxQueryRuns, len(shown))
		shown = shown[:maxQueryRuns]
	}
	var labels []string
	seen := map[string]bool{}
	for _, r := range shown {
		for _, q := range r.Result.Queries.List {
			if !seen[q.Label] {
				seen[q.Label] = true
				labels = append(labels, q.Label)
			}
		}
	}
	const geomeanLabel = "geometric mean"
	cats := append(append([]string(nil), labels...), geomeanLabel)
	tab := &queryTable{}
	var ser []series
	lo, hi := math.Inf(1), 0.0
	for i, r := range shown {
		name := lb.label(r)
		tab.Runs = append(tab.Runs, name)
		qs := r.Result.Queries
		tab.Geomean = append(tab.Geomean, ms(qs.GeomeanS))
		tab.Total = append(tab.Total, ms(qs.TotalS))
		cold := series{Name: name + " cold", Color: queryColors[i][0], Values: make([]*float64, len(cats))}
		hot := series{Name: name + " hot", Color: queryColors[i][1], Values: make([]*float64, len(cats))}
		var coldLogs, hotLogs []float64
		for j, l := range labels {
			q, ok := queryNamed(qs, l)
			if !ok {
				continue
			}
			if q.ColdS > 0 {
				cold.Values[j] = msValue(q.ColdS)
				coldLogs = append(coldLogs, math.Log(q.ColdS))
			}
			if q.HotS > 0 {
				hot.Values[j] = msValue(q.HotS)
				hotLogs = append(hotLogs, math.Log(q.HotS))
			}
		}
		cold.Values[len(labels)] = geomeanMS(coldLogs)
		hot.Values[len(labels)] = geomeanMS(hotLogs)
		for _, s := range []series{cold, hot} {
			for _, v := range s.Values {
				if v != nil {
					lo, hi = min(lo, *v), max(hi, *v)
				}
			}
		}
		ser = append(ser, cold)
		if slices.ContainsFunc(hot.Values, func(v *float64) bool { return v != nil }) {
			ser = append(ser, hot)
		}
	}
	for _, l := range labels {
		row := queryTableRow{Label: l}
		for _, r := range shown {
			q, ok := queryNamed(r.Result.Queries, l)
			if !ok {
				row.Cells = append(row.Cells, queryCell{Cold: "-", Hot: "-", Median: "-", Failed: "not in this run"})
				continue
			}
			c := queryCell{Cold: ms(q.ColdS), Hot: ms(q.HotS), Median: ms(q.MedianS)}
			if q.Errors > 0 {
				c.Failed = fmt.Sprintf("%d failed: %s", q.Errors, q.Error)
			}
			row.Cells = append(row.Cells, c)
		}
		tab.Rows = append(tab.Rows, row)
	}
	c := chart{ID: anchor + "-queries-bars", Title: "Each query, cold and hot", Kind: "bar",
		XName: "query", YName: "ms", XCategories: cats, Series: ser}
	// Queries of a suite span microseconds to minutes: past a hundredfold
	// the short ones would be invisible on a linear axis.
	if lo > 0 && hi/lo > 100 {
		c.YLog = math.Pow(10, math.Floor(math.Log10(lo))) // the power of ten below the shortest
		note += "; a log scale"
	}
	return []section{{ID: anchor + "-queries", Title: "Queries", Note: note, Charts: []chart{c}, Queries: tab}}
}

func queryNamed(qs *result.Queries, label string) (result.QueryResult, bool) {
	for _, q := range qs.List {
		if q.Label == label {
			return q, true
		}
	}
	return result.QueryResult{}, false
}

// geomeanMS is the geometric mean, in ms, of times in seconds given by
// their logarithms; nil for none.
func geomeanMS(logs []float64) *float64 {
	if len(logs) == 0 {
		return nil
	}
	var s float64
	for _, l := range logs {
		s += l
	}
	return msValue(math.Exp(s / float64(len(logs))))
}

func msValue(s float64) *float64 {
	v := s * 1000
	return &v
}

// ms prints seconds as milliseconds, "-" for none.
func ms(s float64) string {
	if s <= 0 {
		return "-"
	}
	v := s * 1000
	switch {
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

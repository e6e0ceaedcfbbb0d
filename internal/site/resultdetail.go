package site

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
)

// resultDetail is what a result page shows beyond the run's own tables:
// what the headline and the tables are of (a sweep's cell), the sweep's
// cells, durability, a query suite's queries, the reads that found
// nothing, and the script that reproduces it.
type resultDetail struct {
	// HeadlineOf names a sweep's cell and its repeats; TablesOf says which
	// run the latency and operation tables are of.
	HeadlineOf, TablesOf string
	Cells                []cellRow
	// NotDurable describes the standing run's unsafe settings;
	// NotDurableRuns says how many of a sweep's runs had some.
	NotDurable, NotDurableRuns string
	Queries                    *queryTable
	ReadCheck                  *readCheckView
	Reproduce                  reproduceView
	ReproduceText              string
}

type cellRow struct {
	Label, Runs, Median, Mean, CI, CV, Min, Max string
	Headline                                    bool
}

type readCheckView struct {
	Checked, Missed, Share string
	Failed                 bool
	Ops                    [][3]string
}

func (s *Server) detail(sub *Submission, base, id string) resultDetail {
	h := sub.Headline()
	p := h.Run
	info := WorkloadInfo{Prepares: true}
	if s.cfg.Workload != nil {
		if i, ok := s.cfg.Workload(p.Workload.Name); ok {
			info = i
		}
	}
	d := resultDetail{HeadlineOf: h.Of, Reproduce: reproduce(sub, base, id, info)}
	d.ReproduceText = d.Reproduce.Text()
	if h.Cell != nil {
		iter := ""
		if p.Sweep != nil {
			iter = fmt.Sprintf(", iteration %d", p.Sweep.Iteration)
		}
		d.TablesOf = fmt.Sprintf("Of one run: cell %s%s, the cell's run nearest its median.", h.Cell.Label, iter)
	}
	for _, c := range sub.Cells() {
		st := c.Stats
		row := cellRow{Label: c.Label, Runs: fmt.Sprintf("%d of %d ok", c.OK, c.Runs), Median: num(st.Median), Mean: num(st.Mean),
			CI: "-", CV: "-", Min: num(c.Min), Max: num(c.Max), Headline: h.Cell != nil && c.Label == h.Cell.Label}
		if !math.IsNaN(st.HalfWidth) {
			row.CI = "± " + num(st.HalfWidth)
			row.CV = strconv.FormatFloat(100*st.CV, 'f', 1, 64) + "%"
		}
		d.Cells = append(d.Cells, row)
	}
	if us := s.unsafe(p); len(us) > 0 {
		d.NotDurable = target.DescribeUnsafe(us)
	}
	if len(sub.Runs) > 1 {
		n := 0
		for _, r := range sub.Runs {
			if len(s.unsafe(r)) > 0 {
				n++
			}
		}
		if n > 0 {
			d.NotDurableRuns = fmt.Sprintf("%d of the %d runs had durability off.", n, len(sub.Runs))
		}
	}
	d.Queries = queriesOf(p.Queries)
	if rc := p.Summary.ReadCheck; rc != nil && rc.Checked > 0 {
		v := &readCheckView{Checked: strconv.FormatInt(rc.Checked, 10), Missed: strconv.FormatInt(rc.Missed, 10),
			Share: strconv.FormatFloat(100*rc.MissedShare(), 'f', 2, 64) + "%", Failed: rc.MissedShare() > 0.5}
		for _, op := range rc.Ops {
			v.Ops = append(v.Ops, [3]string{op.Op, strconv.FormatInt(op.Checked, 10), strconv.FormatInt(op.Missed, 10)})
		}
		d.ReadCheck = v
	}
	return d
}

// queryTable is a query suite's result: a row per query, and the suite's
// figures. Times are in milliseconds.
type queryTable struct {
	Total, Geomean, Iterations, Streams string
	Failed, NotRun                      int
	Cold                                bool
	Rows                                []queryRow
}

type queryRow struct {
	Label, SQL, Cold, Hot, Median, Rows, Errors, Error string
}

func ms(s float64) string { return num(s * 1000) }

func queriesOf(q *result.Queries) *queryTable {
	if q == nil {
		return nil
	}
	t := &queryTable{Total: ms(q.TotalS), Geomean: ms(q.GeomeanS), Iterations: strconv.Itoa(q.Iterations),
		Streams: strconv.Itoa(q.Streams), Failed: q.Failed, NotRun: q.NotRun, Cold: q.Cold}
	for _, x := range q.List {
		r := queryRow{Label: x.Label, SQL: x.SQL, Cold: ms(x.ColdS), Hot: "-", Median: ms(x.MedianS),
			Rows: strconv.FormatInt(x.Rows, 10), Errors: strconv.Itoa(x.Errors), Error: x.Error}
		if x.HotS > 0 {
			r.Hot = ms(x.HotS)
		}
		// A query none of whose runs succeeded has no times and no rows.
		ok := false
		for _, run := range x.Runs {
			ok = ok || run.OK()
		}
		if !ok {
			r.Cold, r.Median, r.Rows = "-", "-", "-"
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

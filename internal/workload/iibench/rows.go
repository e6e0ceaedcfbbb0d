package iibench

import (
	"context"
	"fmt"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/report"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
)

// defaultPercentiles are used for the rows series until the run's own
// (read from the interval points) are known.
var defaultPercentiles = []float64{50, 95, 99, 99.9}

// rowsAcc turns the ticks into rows: the count in each interval point and
// the series keyed by rows. It runs on the ticker, then once in finish.
type rowsAcc struct {
	mu sync.Mutex
	s  *shared
	ps []float64

	lastIns int64   // inserted at the previous tick
	warmIns int64   // inserted when the warm-up ended
	lastT   float64 // time of the previous tick
	qTotal  int64   // queries since the start

	// Since the previous row point.
	insHist, qHist *hdr.Histogram
	qCount         int64
	pointT         float64
	pointRows      int64
	next           int64 // the row count of the next point
	points         []result.RowPoint
}

func (a *rowsAcc) init(s *shared) {
	a.s, a.ps = s, defaultPercentiles
	a.insHist, a.qHist = metrics.NewHistogram(), metrics.NewHistogram()
	a.pointRows = s.startMax
	if n := int64(s.o.ReportRows); n > 0 {
		a.next = (s.startMax/n + 1) * n
	}
}

// tick adds the rows to the interval's point and, when the table passed
// the next --report-rows mark, a point to the rows series.
func (a *rowsAcc) tick(iv metrics.Interval, p *result.Interval) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(p.Latency) > 0 && len(a.ps) != len(p.Latency) {
		a.ps = make([]float64, len(p.Latency))
		for i, q := range p.Latency {
			a.ps[i] = q.P
		}
	}
	ins, del := a.s.totals()
	total := a.s.startMax + ins
	if p.Extra == nil {
		p.Extra = map[string]float64{}
	}
	p.Extra["rows"] = float64(total)
	p.Extra["table_rows"] = float64(a.s.startRows + ins - del)
	if p.DurationS > 0 {
		p.Extra["rows_per_s"] = float64(ins-a.lastIns) / p.DurationS
	}
	if d := a.s.dataBytes.Load(); d >= 0 {
		p.Extra["data_bytes"] = float64(d)
	}
	if i := a.s.indexBytes.Load(); i >= 0 {
		p.Extra["index_bytes"] = float64(i)
	}
	a.lastIns, a.lastT = ins, iv.End.Seconds()
	if iv.Warmup {
		a.warmIns = ins
	}
	ops := iv.Totals.Ops
	a.insHist.Merge(ops[opInsertTrx].Hist)
	a.qHist.Merge(ops[opQuery].Hist)
	a.qCount += ops[opQuery].Count
	a.qTotal += ops[opQuery].Count
	if a.next > 0 && total >= a.next {
		a.point(total, ins-del)
		if w := a.s.env.Progress; w != nil {
			fmt.Fprintln(w, report.RowLine(a.points[len(a.points)-1], a.ps))
		}
		n := int64(a.s.o.ReportRows)
		a.next = (total/n + 1) * n
	}
}

// point closes the current rows interval.
func (a *rowsAcc) point(total, net int64) {
	t := a.lastT
	dt := t - a.pointT
	p := result.RowPoint{Rows: total, T: t, TableRows: a.s.startRows + net,
		DataBytes: a.s.dataBytes.Load(), IndexBytes: a.s.indexBytes.Load()}
	if dt > 0 {
		p.InsertsPerS = float64(total-a.pointRows) / dt
		p.QueriesPerS = float64(a.qCount) / dt
	}
	if t > 0 {
		p.CumInsertsPerS = float64(total-a.s.startMax) / t
		p.CumQueriesPerS = float64(a.qTotal) / t
	}
	p.InsertLatency = percentiles(a.insHist, a.ps)
	p.QueryLatency = percentiles(a.qHist, a.ps)
	a.points = append(a.points, p)
	a.insHist.Reset()
	a.qHist.Reset()
	a.qCount, a.pointT, a.pointRows = 0, t, total
}

func percentiles(h *hdr.Histogram, ps []float64) []result.Percentile {
	if h.TotalCount() == 0 {
		return nil
	}
	out := make([]result.Percentile, len(ps))
	for i, p := range ps {
		out[i] = result.Percentile{P: p, MS: float64(h.ValueAtQuantile(p)) / 1e6}
	}
	return out
}

// finish builds the indexes left for the end, reads the final size and
// fills the result's rows section and headline.
func (s *shared) finish(ctx context.Context, res *result.Result) {
	if s.check != nil {
		s.check.Finish(res) // before the index builds, which follow a run that ended well
	}
	o := s.o
	ins, del := s.totals()
	rows := &result.Rows{Table: o.Table, Inserted: ins, Deleted: del, TableRows: s.startRows + ins - del,
		Resumed: s.resumed, DataBytes: -1, IndexBytes: -1}
	if s.resumed {
		rows.ResumedFrom = s.startMax
	}
	c, err := s.env.Target.Connect(context.WithoutCancel(ctx))
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("iibench: could not connect after the run: %v", err))
	} else {
		defer c.Close()
		if o.SecondaryAtEnd && res.Status == result.StatusOK {
			rows.IndexBuilds = s.buildIndexes(ctx, c)
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		if d, i, err := s.d.TableBytes(sctx, c, o.Table); err == nil || d >= 0 {
			rows.DataBytes, rows.IndexBytes = d, i
		}
		cancel()
	}

	a := &s.acc
	a.mu.Lock()
	if a.next > 0 && s.startMax+ins > a.pointRows {
		a.point(s.startMax+ins, ins-del)
	}
	rows.Series = a.points
	measured := ins - a.warmIns
	a.mu.Unlock()
	if res.Summary.DurationS > 0 {
		rows.PerS = float64(measured) / res.Summary.DurationS
	}
	res.Rows = rows
	res.Summary.Headline = rows.PerS
	res.Summary.HeadlineUnit = "rows/s"
	res.Summary.HeadlineSeries = "rows_per_s"
}

// buildIndexes creates the secondary indexes one by one, timing each.
func (s *shared) buildIndexes(ctx context.Context, c target.Conn) []result.IndexBuild {
	var out []result.IndexBuild
	for _, ix := range s.idx {
		t0 := time.Now()
		err := c.Exec(ctx, s.o.createIndex(ix))
		b := result.IndexBuild{Name: s.o.indexName(ix), Seconds: time.Since(t0).Seconds()}
		if err != nil {
			b.Error = err.Error()
			out = append(out, b)
			break
		}
		s.env.Logger.Info("built index", "index", b.Name, "seconds", b.Seconds)
		out = append(out, b)
	}
	return out
}

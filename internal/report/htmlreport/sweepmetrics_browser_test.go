package htmlreport_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dbmark/dbmark/internal/report/htmlreport"
)

// TestSweepMetricPicker opens a report of a real sweep in Chromium: the
// sweep's metric chart opens on the p95 against threads, lists every
// metric the runs measured, and picking queries per second draws each
// cell's mean of its runs' figure.
func TestSweepMetricPicker(t *testing.T) {
	lib := library(t)
	runs := sharedSample(t)
	ctx, problems, _ := openReport(t, runs, htmlreport.Options{Title: "sweep metrics", Library: lib, Generated: time.Now()})
	const id = "g1-sweep-5f0c2d9e-metric"
	type state struct {
		Metric  string      `json:"metric"`
		Points  int         `json:"points"`
		Options []string    `json:"options"`
		Caption string      `json:"caption"`
		Series  []string    `json:"series"`
		Data    [][]float64 `json:"data"`
	}
	read := `(() => { const e = document.getElementById('` + id + `'); const p = e.previousElementSibling;
		const o = echarts.getInstanceByDom(e).getOption();
		return {metric: e.dataset.metric, points: Number(e.dataset.points),
			options: p && p.tagName === 'SELECT' ? Array.from(p.options).map(x => x.textContent) : [],
			caption: e.parentNode.querySelector('figcaption').textContent,
			series: o.series.map(s => s.name), data: o.series.map(s => s.data.map(v => v === null ? -1 : v))}; })()`
	st, err := chromedp.Run(ctx, chromedp.Evaluate[state](read))
	if err != nil {
		t.Fatalf("read the metric chart: %v", err)
	}
	if st.Metric != "p95 (ms)" || st.Points != 4 || st.Caption != "p95 (ms) by threads" {
		t.Errorf("the chart opens on %q (%d points, caption %q), want the p95 of 4 cells", st.Metric, st.Points, st.Caption)
	}
	for _, want := range []string{"p95 (ms)", "headline (tps)", "p99 (ms)", "mean (ms)", "qps (queries/s)", "errors (errors)", "op:point_select (/s)", "op:point_select:p95 (ms)"} {
		if !slices.Contains(st.Options, want) {
			t.Errorf("the list lacks %q: %v", want, st.Options)
		}
	}
	if *screenshots != "" { // the p95 against threads, as it opens
		png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("figure:has(#"+id+")")))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(*screenshots, "report-sweep-metric.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	qps := slices.Index(st.Options, "qps (queries/s)")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const p = document.getElementById('`+id+`').previousElementSibling;
		p.value = '`+strconv.Itoa(qps)+`'; p.dispatchEvent(new Event('change')); return true; })()`)); err != nil {
		t.Fatal(err)
	}
	if st, err = chromedp.Run(ctx, chromedp.Evaluate[state](read)); err != nil {
		t.Fatal(err)
	}
	if st.Metric != "qps (queries/s)" || st.Caption != "qps (queries/s) by threads" {
		t.Fatalf("after picking qps the chart shows %q (%q)", st.Metric, st.Caption)
	}
	// Each line is a rand-type, each point a threads value: the mean of
	// that cell's runs' queries per second.
	want := map[string][]float64{}
	for _, r := range runs {
		s := r.Result.Sweep
		if s == nil {
			continue
		}
		k := s.Cell["rand-type"] + "/" + s.Cell["threads"]
		want[k] = append(want[k], r.Result.Summary.QueriesPerS)
	}
	for i, name := range st.Series {
		for j, threads := range []string{"1", "2"} {
			vs := want[name[len("rand-type="):]+"/"+threads]
			m := 0.0
			for _, v := range vs {
				m += v / float64(len(vs))
			}
			if len(vs) == 0 || j >= len(st.Data[i]) || math.Abs(st.Data[i][j]-m) > 1e-6*m {
				t.Errorf("%s threads=%s: drawn %v, the runs' mean %v", name, threads, st.Data[i], m)
			}
		}
	}
	for _, p := range problems.Take() {
		t.Error(p)
	}
}

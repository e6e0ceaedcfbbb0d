package htmlreport_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/report/htmlreport"
)

// queryRuns runs a query file twice on a SQLite database, the second time
// without the index its first query uses.
func queryRuns(t *testing.T) []htmlreport.Run {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("DBMARK_HOME", dir)
	t.Setenv("DBMARK_TARGET", "")
	t.Setenv("DBMARK_STORE", "")
	db := "sqlite://" + filepath.Join(dir, "q.db")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	setup := write("setup.sql", `CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i < 50000) INSERT INTO t SELECT i, i % 500, 'x' || i FROM s;
CREATE INDEX t_k ON t (k);
`)
	queries := write("q.sql", `-- bykey
SELECT sum(id) FROM t WHERE k = 7;
-- max
SELECT max(id) FROM t;
-- scan
SELECT count(*) FROM t WHERE v LIKE 'x1%';
-- group
SELECT k, count(*) FROM t GROUP BY k;
`)
	drop := write("drop.sql", "DROP INDEX t_k;\n")
	dbmark := func(args ...string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := cli.Main(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("dbmark %v: exit %d: %s", args, code, errb.String())
		}
	}
	dbmark("prepare", "query", "--target", db, "--setup", setup)
	var runs []htmlreport.Run
	for i := range 2 {
		if i == 1 {
			dbmark("run", "query", "--target", db, "--file", drop, "--iterations", "1", "--no-store")
		}
		doc := filepath.Join(dir, "r.json")
		dbmark("run", "query", "--target", db, "--file", queries, "--iterations", "4", "--no-store", "--json", doc)
		runs = append(runs, htmlreport.Run{ID: int64(i + 1), Result: readDoc(t, doc)})
	}
	return runs
}

// A report of two query runs draws each query's cold and hot times as
// grouped bars in a real browser, a group per query and the geometric
// mean last, on a log scale (the queries span orders of magnitude), and
// tables the figures with each run's geometric mean.
func TestQueryBarsInChromium(t *testing.T) {
	lib := library(t)
	runs := queryRuns(t)
	ctx, problems, _ := openReport(t, runs, htmlreport.Options{Title: "query runs", Library: lib, Generated: time.Now()})
	type bars struct {
		Points int      `json:"points"`
		Error  string   `json:"error"`
		Axis   string   `json:"axis"`
		Cats   []string `json:"cats"`
		Names  []string `json:"names"`
		Rects  int      `json:"rects"`
		// Heights are the bars' drawn heights in pixels, upward positive.
		Heights [][]float64 `json:"heights"`
		Foot    float64     `json:"foot"`
		Table   string      `json:"table"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[bars](`(() => {
		const el = document.getElementById('g1-queries-bars');
		const o = echarts.getInstanceByDom(el).getOption();
		return {points: Number(el.dataset.points), error: el.dataset.error || '', axis: o.yAxis[0].type,
			cats: o.xAxis[0].data, names: o.series.map(s => s.name),
			rects: el.querySelectorAll('svg path').length,
			heights: o.series.map((s, i) => s.data.map((_, j) => {
				const l = echarts.getInstanceByDom(el).getModel().getSeriesByIndex(i).getData().getItemLayout(j);
				return l ? -l.height : 0;
			})),
			foot: o.yAxis[0].min,
			table: document.querySelector('#g1-queries table.queries').innerText};
	})()`))
	if err != nil {
		t.Fatalf("read the chart: %v", err)
	}
	for _, p := range problems.Take() {
		t.Error(p)
	}
	// Two runs, a cold and a hot bar each, in 4 query groups and the
	// geometric mean's.
	wantNames := []string{"#1 cold", "#1 hot", "#2 cold", "#2 hot"}
	wantCats := []string{"bykey", "max", "scan", "group", "geometric mean"}
	if got.Error != "" || got.Points != 4*5 || strings.Join(got.Names, ",") != strings.Join(wantNames, ",") ||
		strings.Join(got.Cats, ",") != strings.Join(wantCats, ",") || got.Rects < 4*5 {
		t.Errorf("bars: %+v; want %d points in series %q over %q", got, 4*5, wantNames, wantCats)
	}
	if got.Axis != "log" {
		t.Errorf("the y axis is %q, want log for queries from microseconds to milliseconds", got.Axis)
	}
	// Every bar rises from the axis' foot, below the shortest time: none
	// hangs down from 1 ms, as bars on a log axis do by default.
	t.Logf("foot %g, heights %v", got.Foot, got.Heights)
	for i, hs := range got.Heights {
		for j, h := range hs {
			if h <= 0 {
				t.Errorf("bar %s of %s is %g px high", got.Names[i], got.Cats[j], h)
			}
		}
	}
	for _, want := range []string{"bykey", "geometric mean of the medians", "suite time", "cold\thot\tmedian"} {
		if !strings.Contains(got.Table, want) {
			t.Errorf("the table lacks %q:\n%s", want, got.Table)
		}
	}
	if *screenshots != "" {
		png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#g1-queries")))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.MkdirAll(*screenshots, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(*screenshots, "report-queries.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

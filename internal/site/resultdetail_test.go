package site_test

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site"
	"github.com/dbmark/dbmark/internal/site/sitestore"
)

// sweepOf makes a sweep of threads from real runs: for each cell (its
// thread count) the headlines of its repeats, in the order they ran.
func sweepOf(t *testing.T, base *result.Result, cells [][2]any) *site.Submission {
	t.Helper()
	sw := &result.Sweep{SchemaVersion: 1, ID: uuid.NewString(), Workload: base.Workload.Name, Headline: "tps", Better: "higher",
		Axes: []result.SweepAxis{{Name: "threads"}}, Args: []string{"--threads=1,4", "--time=2s"}, Command: []string{"dbmark", "sweep", base.Workload.Name, "--threads", "1,4"}, Iterations: 3,
		StartedAt: base.StartedAt, Status: result.SweepDone}
	var runs []*result.Result
	for _, c := range cells {
		threads, values := c[0].(int), c[1].([]float64)
		sw.Axes[0].Values = append(sw.Axes[0].Values, itoa(threads))
		for i, v := range values {
			runs = append(runs, variant(t, base, func(r *result.Result) {
				r.Run.Threads = threads
				r.Summary.Headline = v
				r.Sweep = &result.SweepRef{ID: sw.ID, Cell: map[string]string{"threads": itoa(threads)}, Iteration: i + 1}
			}))
		}
	}
	return &site.Submission{Format: site.SubmissionFormat, Sweep: sw, Runs: runs}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestSweepHeadline: a sweep is published with its best cell's median of
// repeats, named by its cell, never its best single run; the list, the
// feed and the API say so, and the page shows every cell and says which
// run its latency and operation tables are of.
func TestSweepHeadline(t *testing.T) {
	ts := newServer(t, t.TempDir()+"/site.db", nil)
	base := realRun(t, "oltp_point_select")
	sub := sweepOf(t, base, [][2]any{{1, []float64{100000, 120000, 110000}}, {4, []float64{300000, 374562, 342995}}})
	id := ts.mustSubmit(sub)

	var d site.ResultDetail
	ts.do("GET", "/api/v1/results/"+id, nil).json(t, &d)
	if d.Headline != 342995 || d.HeadlineOf != "threads=4, median of 3 runs" {
		t.Errorf("API headline %v of %q, want 342995 of threads=4, median of 3 runs", d.Headline, d.HeadlineOf)
	}
	for _, path := range []string{"/results", "/", "/feed.atom"} {
		_, body := ts.page(path)
		if !strings.Contains(body, "342995") || !strings.Contains(body, "threads=4, median of 3 runs") || strings.Contains(body, "374562") {
			t.Errorf("%s does not show the cell's median, named", path)
		}
	}
	other := ts.mustSubmit(sweepOf(t, base, [][2]any{{4, []float64{200000, 210000, 190000}}}))
	if _, cmp := ts.page("/compare?ids=" + id + "," + other); !strings.Contains(cmp, "342995 tps (threads=4, median of 3 runs)") ||
		!strings.Contains(cmp, "200000 tps (threads=4, median of 3 runs)") {
		t.Errorf("the compare page does not name the cells of the headlines")
	}
	_, page := ts.page("/r/" + id)
	if strings.Contains(page, "374562 ") || !strings.Contains(page, `id="headline">342995<`) {
		t.Errorf("the page's headline is not the median")
	}
	cells := regexp.MustCompile(`(?s)<table class="summary cells">.*?</table>`).FindString(page)
	for _, want := range []string{"threads=1", "110000", "threads=4", "342995", "3 of 3 ok", `class="headline-cell"><td>threads=4`} {
		if !strings.Contains(cells, want) {
			t.Errorf("the cells table lacks %q:\n%s", want, cells)
		}
	}
	if !strings.Contains(page, "Of one run: cell threads=4, iteration 3, the cell&#39;s run nearest its median.") {
		t.Errorf("the page does not say which run its tables are of")
	}
}

// TestNotDurableKeptApart: a released result whose engine ran with
// synchronous=OFF is flagged on its page, marked in lists and listed
// apart from the leaderboard's ranking, however fast.
func TestNotDurableKeptApart(t *testing.T) {
	ts := newServer(t, t.TempDir()+"/site.db", nil)
	base := realRun(t, "oltp_point_select")
	if base.Target.Settings["synchronous"] == "" {
		t.Fatal("the real run recorded no synchronous setting")
	}
	durable := ts.mustSubmit(submission(variant(t, base, func(r *result.Result) { released(r); r.Summary.Headline = 1000 })))
	fast := ts.mustSubmit(submission(variant(t, base, func(r *result.Result) {
		released(r)
		r.Summary.Headline = 5000
		r.Target.Settings["synchronous"] = "0"
	})))
	_, page := ts.page("/r/" + fast)
	if !strings.Contains(page, `id="not-durable"`) || !strings.Contains(page, "synchronous=OFF") {
		t.Errorf("the page of a result without durability does not say so")
	}
	if _, page := ts.page("/r/" + durable); strings.Contains(page, `id="not-durable"`) {
		t.Errorf("a durable result is flagged")
	}
	_, board := ts.page("/leaderboard/oltp_point_select")
	ranking := regexp.MustCompile(`(?s)<table class="summary ranking">.*?</table>`).FindString(board)
	apart := board[strings.Index(board, `id="not-durable"`)+1:]
	if !strings.Contains(ranking, durable) || strings.Contains(ranking, fast) || !strings.Contains(apart, fast) {
		t.Errorf("the leaderboard ranks a result that is not durable:\n%s", board)
	}
	if _, boards := ts.page("/leaderboard"); !strings.Contains(boards, `oltp_point_select</a> <span class="count">1</span>`) {
		t.Errorf("the leaderboards count a result that is not durable")
	}
	_, list := ts.page("/results?durability=not+durable")
	if !strings.Contains(list, fast) || strings.Contains(list, durable) || !strings.Contains(list, "badge not-durable") {
		t.Errorf("the list filtered on durability is wrong")
	}
}

// TestQueryResultPages: a real query suite's result shows its queries
// (cold, hot, median, rows, errors; the geometric mean), two are compared
// query by query, and a run whose reads found nothing says how many.
func TestQueryResultPages(t *testing.T) {
	ts := newServer(t, t.TempDir()+"/site.db", nil)
	q := realRun(t, "query")
	if q.Counters != nil && q.Counters.Series == nil {
		// The real run recorded "counters": {"series": null}, which the
		// OpenAPI document does not allow.
		q.Counters.Series = []result.CounterSeries{}
	}
	a := ts.mustSubmit(submission(q))
	b := ts.mustSubmit(submission(variant(t, q, func(r *result.Result) {
		for i := range r.Queries.List {
			if q := &r.Queries.List[i]; q.Label == "range" { // four times slower
				q.ColdS, q.HotS, q.MedianS = 4*q.ColdS, 4*q.HotS, 4*q.MedianS
				for j := range q.Runs {
					q.Runs[j].S *= 4
				}
			}
		}
	})))
	_, page := ts.page("/r/" + a)
	table := regexp.MustCompile(`(?s)<table class="summary queries">.*?</table>`).FindString(page)
	for _, want := range []string{">count<", ">range<", ">broken<", "<td class=\"n\">51</td>", "(error: no such table: no_such_table)", `<td class="n">-</td><td class="n">-</td><td class="n">-</td><td class="n">-</td><td class="n">3`, "cold ms", "hot ms", "median ms"} {
		if !strings.Contains(table, want) {
			t.Errorf("the queries table lacks %q:\n%s", want, table)
		}
	}
	if !strings.Contains(page, "geometric mean of the queries' medians") || !strings.Contains(page, "1 query(ies) failed") {
		t.Errorf("the page lacks the suite's figures: %s", regexp.MustCompile(`(?s)<h2 id="queries">.{0,600}`).FindString(page))
	}
	_, cmp := ts.page("/compare?ids=" + a + "," + b)
	rows := regexp.MustCompile(`(?s)<table class="summary compare-queries">.*?</table>`).FindString(cmp)
	if !regexp.MustCompile(`<td>range</td><td class="n">[0-9.]+</td><td class="n">[0-9.]+</td><td class="n ratio">4\.00</td><td>[a-z ]+</td>`).MatchString(rows) ||
		!regexp.MustCompile(`<td>count</td><td class="n">[0-9.]+</td><td class="n">[0-9.]+</td><td class="n ratio">1\.00</td>`).MatchString(rows) ||
		!strings.Contains(rows, "<td>broken</td>") {
		t.Errorf("the compare page's per-query rows are wrong:\n%s", rows)
	}
	// Two queries ran in both: the geometric mean of 1 and 4 is 2.
	if !strings.Contains(rows, `<td class="n ratio">2.00</td>`) {
		t.Errorf("the geometric mean of the ratios is not 2:\n%s", rows)
	}
	// The API's comparison is the same, from the same code.
	var c site.Comparison
	ts.do("GET", "/api/v1/compare?ids="+a+","+b, nil).json(t, &c)
	if len(c.Queries) != 1 || c.Queries[0].GeomeanOf != 2 || c.Queries[0].Geomean < 1.99 || c.Queries[0].Geomean > 2.01 {
		t.Errorf("the API's per-query comparison: %+v", c.Queries)
	}

	ps := realRun(t, "oltp_point_select")
	missed := ts.mustSubmit(submission(variant(t, ps, func(r *result.Result) {
		r.Summary.ReadCheck = &result.ReadCheck{Checked: 1000, Missed: 900, Ops: []result.ReadCheckOp{{Op: "point_select", Checked: 1000, Missed: 900}}}
	})))
	_, page = ts.page("/r/" + missed)
	if !strings.Contains(page, `id="read-check">900 of the 1000 reads that must find rows found none (90.00%): most did`) ||
		!strings.Contains(page, "<td>point_select</td><td class=\"n\">1000</td><td class=\"n\">900</td>") {
		t.Errorf("the page does not show the reads that found nothing")
	}
}

// TestReproduceScriptHoldsHostileText runs a result page's script in a
// shell with dbmark standing in as a function that records its arguments:
// an option's value and a query's text that try to run commands reach
// dbmark as they were, and run nothing; the query file is written as
// recorded.
func TestReproduceScriptHoldsHostileText(t *testing.T) {
	ts := newServer(t, t.TempDir()+"/site.db", nil)
	q := realRun(t, "query")
	if q.Counters != nil && q.Counters.Series == nil {
		q.Counters.Series = []result.CounterSeries{}
	}
	evil := "$(touch pwned)`touch pwned`';touch pwned;'"
	id := ts.mustSubmit(submission(variant(t, q, func(r *result.Result) {
		r.Command = append(r.Command, "--only", "count,range")
		r.Workload.Options["only"] = evil
		r.Queries.List[0].SQL = "SELECT 1\nDBMARK_QUERIES\ntouch pwned"
	})))
	_, page := ts.page("/r/" + id)
	m := regexp.MustCompile(`(?s)<pre class="cmd" id="reproduce-script">(.*?)</pre>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no script on the page")
	}
	dir := t.TempDir()
	script := "dbmark() { printf '%s\\n' \"$@\" >> args.txt; }\n" + html.UnescapeString(m[1])
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s\n%s", err, out, script)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Fatalf("the script ran a command from the result:\n%s", script)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "args.txt"))
	if !strings.Contains(string(args), "--only="+evil+"\n") || !strings.Contains(string(args), "--file=dbmark-queries.sql\n") {
		t.Errorf("dbmark was not given the values as recorded:\n%s", args)
	}
	sql, _ := os.ReadFile(filepath.Join(dir, "dbmark-queries.sql"))
	if !strings.HasPrefix(string(sql), "-- count\nSELECT 1\nDBMARK_QUERIES\ntouch pwned;\n-- range\n") {
		t.Errorf("the query file is not the recorded queries:\n%s", sql)
	}
}

// TestReproduceFrontEndRun: a run made by a front end (its short options
// not recorded by name) is reproduced with the options whose value is not
// the serving dbmark's default, and prepared with those the workload says
// change what prepare builds.
func TestReproduceFrontEndRun(t *testing.T) {
	ts := newServer(t, t.TempDir()+"/site.db", func(c *site.Config) {
		c.Workload = func(name string) (site.WorkloadInfo, bool) {
			return site.WorkloadInfo{Prepares: true, PrepareOptions: []string{"table-size"},
				Defaults: map[string]string{"point-selects": "10", "table-size": "10000", "range-size": "100"}}, true
		}
	})
	id := ts.mustSubmit(submission(variant(t, realRun(t, "oltp_point_select"), func(r *result.Result) {
		r.Command = []string{"dbmark", "sysbench", "oltp_point_select", "--table-size=500", "-q", "run"}
		r.Workload.Options["table-size"] = "500"
		r.Workload.Options["range-size"] = "100"
		r.Workload.Options["point-selects"] = "3"
	})))
	_, page := ts.page("/r/" + id)
	m := regexp.MustCompile(`(?s)<pre class="cmd" id="reproduce-script">(.*?)</pre>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no script on the page")
	}
	script := html.UnescapeString(m[1])
	if !regexp.MustCompile(`(?m)^dbmark prepare oltp_point_select --target "\$TARGET" --table-size=500$`).MatchString(script) ||
		!regexp.MustCompile(`(?m)^dbmark run oltp_point_select --target "\$TARGET" --threads=1 --point-selects=3 --table-size=500 --time=\S+ --warmup=\S+$`).MatchString(script) {
		t.Errorf("the front end's run is not reproduced with its options that are not defaults:\n%s", script)
	}
}

// TestRederiveOldEntries: entries stored under the old rules (a sweep's
// headline its best run, no durability facet) are derived again from
// their documents when a server starts, once.
func TestRederiveOldEntries(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		st, err := sitestore.Open(ctx, dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		sub := sweepOf(t, variant(t, realRun(t, "oltp_point_select"), func(r *result.Result) { r.Target.Settings["synchronous"] = "0" }),
			[][2]any{{1, []float64{100000, 120000, 110000}}, {4, []float64{300000, 374562, 342995}}})
		b, _ := json.Marshal(sub)
		if sub, err = site.Decode(b); err != nil {
			t.Fatal(err)
		}
		e, err := sub.Entry(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		// As the old rules stored it.
		e.Headline, e.HeadlineOf, e.Facets["durability"] = 374562, "", ""
		if _, _, _, err := st.Put(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
		st.Close()

		ts := newServer(t, dsn, nil)
		// The server derives them in the background, serving meanwhile.
		var d site.ResultDetail
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			ts.do("GET", "/api/v1/results/"+e.ID, nil).json(t, &d)
			if d.Facets["durability"] != "" || time.Now().After(deadline) {
				break
			}
		}
		if d.Headline != 342995 || d.HeadlineOf != "threads=4, median of 3 runs" || d.Facets["durability"] != "not durable" {
			t.Errorf("not derived again: %v of %q, durability %q", d.Headline, d.HeadlineOf, d.Facets["durability"])
		}
		if _, list := ts.page("/results?durability=not+durable"); !strings.Contains(list, e.ID) {
			t.Errorf("the facet index does not hold the derived durability")
		}
	})
}

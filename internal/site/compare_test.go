package site_test

import (
	"bytes"
	"html"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site"
)

// The API and the compare page show the same differences, from the one
// comparison dbmark compare prints: a 20 s run with a 5 s warm-up against
// a 10 s run with none at twice the threads differs in time, warm-up and
// threads; against an open-loop run it is not comparable, and the reason
// is given on both.
func TestCompareShowsWhatDiffered(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ts := newServer(t, dsn, nil)
		ps := realRun(t, "oltp_point_select")
		long := variant(t, ps, func(r *result.Result) {
			r.Run.DurationS, r.Run.WarmupS = 20, 5
			r.Workload.Options["time"], r.Workload.Options["warmup"] = "20s", "5s"
		})
		short := variant(t, ps, func(r *result.Result) {
			r.Run.DurationS, r.Run.WarmupS, r.Run.Threads = 10, 0, 2
			r.Workload.Options["time"], r.Workload.Options["warmup"], r.Workload.Options["threads"] = "10s", "0s", "2"
			r.Workload.Options["format"] = "csv" // where the output went: no difference
		})
		open := variant(t, ps, func(r *result.Result) {
			r.Run.DurationS, r.Run.WarmupS, r.Run.Rate = 20, 5, 20000
			r.Workload.Options["time"], r.Workload.Options["warmup"], r.Workload.Options["rate"] = "20s", "5s", "20000"
		})
		a, b, c := ts.mustSubmit(submission(long)), ts.mustSubmit(submission(short)), ts.mustSubmit(submission(open))

		var cmp site.Comparison
		ts.do("GET", "/api/v1/compare?ids="+a+","+b, nil).json(t, &cmp)
		var names []string
		for _, d := range cmp.Differing {
			names = append(names, d.Name)
		}
		for _, want := range []string{"duration", "warmup", "threads"} {
			if !strings.Contains(strings.Join(names, " "), want) {
				t.Errorf("API: %s is not among what differed: %q", want, names)
			}
		}
		if strings.Contains(strings.Join(names, " "), "format") {
			t.Errorf("API: an output option counts as a difference: %q", names)
		}
		_, page := ts.page("/compare?ids=" + a + "," + b)
		page = html.UnescapeString(page)
		for _, name := range names {
			if !strings.Contains(page, ">"+name+"<") {
				t.Errorf("page lacks the API's difference %q", name)
			}
		}
		if strings.Contains(page, "everything else was the same") || strings.Contains(page, "Not comparable") {
			t.Errorf("page of comparable results:\n%s", page)
		}

		body := ts.do("GET", "/api/v1/compare?ids="+a+","+c, nil).Body
		if !strings.Contains(string(body), "open-loop") {
			t.Errorf("API: closed against open loop is not said to be not comparable: %s", body)
		}
		_, page = ts.page("/compare?ids=" + a + "," + c)
		if !strings.Contains(page, "Not comparable") || !strings.Contains(page, "open-loop") {
			t.Errorf("page: closed against open loop is not said to be not comparable:\n%s", page)
		}
	})
}

// sampled sets r's headline and its sampled counters: each counter at
// the rate given (by name, with its unit) for 12 one-second samples, with
// noise of 4% either way, so that their median is the rate.
func sampled(headline float64, rates map[string]float64) func(*result.Result) {
	return func(r *result.Result) {
		r.Summary.Headline = headline
		r.Counters = &result.Counters{IntervalS: 1}
		for _, name := range slices.Sorted(maps.Keys(rates)) {
			unit := "/s"
			if strings.HasPrefix(name, "db.blocks") {
				unit = "pages/s"
			}
			s := result.CounterSeries{Name: name, Unit: unit, Kind: result.CounterRate}
			for i := range 12 {
				s.Points = append(s.Points, [2]float64{float64(i + 1), rates[name] * (1 + 0.04*float64(1-2*(i%2)))})
			}
			r.Counters.Series = append(r.Counters.Series, s)
		}
	}
}

// movedCounters submits three results: the first with a disk writing
// 1,395 times a second, the second at twice the throughput writing 20
// times a second (its page cache hits doubled with the throughput), the
// third without counters. It returns their ids.
func movedCounters(t *testing.T, ts *testServer) (a, b, c string) {
	t.Helper()
	ps := realRun(t, "oltp_point_select")
	a = ts.mustSubmit(submission(variant(t, ps, sampled(1000, map[string]float64{
		"os.disk.vda.writes": 1395, "db.blocks_hit": 40000, "os.cpu.user": 50, "db.blocks_read": 0}))))
	b = ts.mustSubmit(submission(variant(t, ps, sampled(2000, map[string]float64{
		"os.disk.vda.writes": 20, "db.blocks_hit": 80000, "os.cpu.user": 51, "db.blocks_read": 12}))))
	c = ts.mustSubmit(submission(variant(t, ps, func(r *result.Result) { r.Counters = nil })))
	return a, b, c
}

// The compare API and page list the counters that moved, as dbmark
// compare does: the disk's writes falling 1,395/s -> 20/s and the reads
// rising from 0 among the top, ranked by effect; the page cache hits,
// which doubled with the throughput, on a line of their own; a CPU
// within its noise nowhere; and a result without counters said to have
// none to compare.
func TestCompareShowsTheCountersThatMoved(t *testing.T) {
	ts := newServer(t, t.TempDir()+"/site.db", nil)
	a, b, c := movedCounters(t, ts)

	ans := ts.do("GET", "/api/v1/compare?ids="+a+","+b+","+c, nil)
	var cmp site.Comparison
	ans.json(t, &cmp)
	if len(cmp.Counters) != 1 || cmp.Counters[0].ID != b {
		t.Fatalf("API: counters compared for %+v, want one for %s alone", cmp.Counters, b)
	}
	m := cmp.Counters[0].Moves
	var top []string
	for i, mv := range m.Top {
		top = append(top, mv.Name)
		if i > 0 && mv.Effect > m.Top[i-1].Effect {
			t.Errorf("API: top not ranked by effect: %+v", m.Top)
		}
	}
	if strings.Join(slices.Sorted(slices.Values(top)), " ") != "db.blocks_read os.disk.vda.writes" || m.Compared != 4 || m.Throughput != 2 {
		t.Errorf("API: top %q of %d compared, throughput x%v; want the disk's writes and the reads, of 4, x2", top, m.Compared, m.Throughput)
	}
	if len(m.WithThroughput) != 1 || m.WithThroughput[0].Name != "db.blocks_hit" {
		t.Errorf("API: with the throughput %+v, want db.blocks_hit", m.WithThroughput)
	}
	if bytes.Contains(ans.Body, []byte("/home/")) || bytes.Contains(ans.Body, []byte("/root/")) {
		t.Errorf("API: a home path in the comparison")
	}

	_, page := ts.page("/compare?ids=" + a + "," + b + "," + c)
	page = html.UnescapeString(page)
	sec := page[strings.Index(page, `id="counters"`):]
	sec = sec[:strings.Index(sec, "Charts, overlaid")]
	for _, want := range []string{
		"<td>os.disk.vda.writes</td><td class=\"n\">1,395 /s</td><td class=\"arrow\">→</td><td class=\"n\">20 /s</td><td class=\"n ratio\">x0.01</td>",
		"<td>db.blocks_read</td><td class=\"n\">0 pages/s</td><td class=\"arrow\">→</td><td class=\"n\">12 pages/s</td><td class=\"n ratio\">from 0</td>",
		"Moved with the throughput (the same work per event, left out above): db.blocks_hit x2.00",
		"of the 4 counters both runs sampled (throughput B/A x2.00)",
		"No counters to compare for " + c + ": it or the first result sampled none.",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("page lacks %q:\n%s", want, sec)
		}
	}
	if strings.Contains(sec, "os.cpu.user") {
		t.Errorf("page: a CPU within its noise is listed:\n%s", sec)
	}

	// Counters are named by device; one named by a home directory never
	// reaches a comparison: the site refuses the result.
	leaky := variant(t, realRun(t, "oltp_point_select"), sampled(1000, map[string]float64{"os.disk./home/alice/disk.img.writes": 5}))
	if a := ts.submit(submission(leaky)); a.Status != http.StatusBadRequest || !strings.Contains(a.apiError(t).Field, "counters") {
		t.Errorf("a counter named by a home path: %d %s, want 400 naming the counter", a.Status, a.Body)
	}
}

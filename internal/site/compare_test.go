package site_test

import (
	"html"
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

package site_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site"
	"github.com/dbmark/dbmark/internal/site/sitestore"
)

func TestSubmitGetListCompare(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ts := newServer(t, dsn, nil)
		run := realRun(t, "oltp_point_select")

		a := ts.submit(submission(run))
		if a.Status != http.StatusCreated {
			t.Fatalf("first submission: %d %s", a.Status, a.Body)
		}
		var first site.SubmitAnswer
		a.json(t, &first)
		if !first.Created || first.URL != ts.URL+"/r/"+first.ID || a.Header.Get("Location") != first.URL {
			t.Errorf("answer %+v, Location %q", first, a.Header.Get("Location"))
		}

		// The same result again, with a note and tags, gzip-compressed:
		// the same permalink, nothing new stored.
		again := submission(run)
		again.Note, again.Tags = "second try", map[string]string{"env": "ci"}
		b, _ := json.Marshal(again)
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(b)
		zw.Close()
		a = ts.do("POST", "/api/v1/results", z.Bytes(), "Content-Encoding", "gzip")
		var second site.SubmitAnswer
		a.json(t, &second)
		if a.Status != http.StatusOK || second.ID != first.ID || second.Created {
			t.Errorf("duplicate: %d %+v, want 200 and id %s", a.Status, second, first.ID)
		}

		a = ts.do("GET", "/api/v1/results/"+first.ID, nil)
		var d site.ResultDetail
		a.json(t, &d)
		if a.Status != 200 || len(d.Submission.Runs) != 1 || d.Submission.Runs[0].ID != run.ID ||
			d.Facets["workload"] != "oltp_point_select" || d.Facets["engine"] != "SQLite" || d.Released || d.Status != "ok" {
			t.Errorf("get: %d %+v", a.Status, d.ResultSummary)
		}
		if d.Headline != run.Summary.Headline {
			t.Errorf("headline %v, want %v", d.Headline, run.Summary.Headline)
		}
		if a := ts.do("GET", "/api/v1/results/aaaaaaaaaaaa", nil); a.Status != 404 {
			t.Errorf("missing result: %d", a.Status)
		}

		ro := realRun(t, "oltp_read_only")
		roID := ts.mustSubmit(submission(ro))

		a = ts.do("GET", "/api/v1/results?facets=true", nil)
		var l site.ResultList
		a.json(t, &l)
		if len(l.Results) != 2 || l.Results[0].ID != roID || l.Results[1].ID != first.ID {
			t.Fatalf("list: %+v", l.Results)
		}
		if got := l.Facets["workload"]; len(got) != 2 || got[0].Count != 1 {
			t.Errorf("workload facet: %+v", got)
		}
		a = ts.do("GET", "/api/v1/results?facets=true&workload=oltp_read_only", nil)
		l = site.ResultList{}
		a.json(t, &l)
		if len(l.Results) != 1 || l.Results[0].ID != roID {
			t.Errorf("filtered list: %+v", l.Results)
		}
		// A facet's counts leave out its own filter: both workloads remain.
		if len(l.Facets["workload"]) != 2 || len(l.Facets["engine"]) != 1 || l.Facets["engine"][0].Count != 1 {
			t.Errorf("facets under a filter: %+v", l.Facets)
		}
		if a := ts.do("GET", "/api/v1/results?colour=red", nil, invalidRequest, "1"); a.Status != 400 || !strings.Contains(a.apiError(t).Error, "colour") {
			t.Errorf("unknown filter: %d %s", a.Status, a.Body)
		}

		a = ts.do("GET", "/api/v1/compare?ids="+first.ID+","+roID, nil)
		var c site.Comparison
		a.json(t, &c)
		want := ro.Summary.Headline / run.Summary.Headline
		if a.Status != 200 || len(c.Ratios) != 2 || c.Ratios[0] != 1 || c.Ratios[1] != want {
			t.Errorf("compare: %d ratios %v, want [1 %v]", a.Status, c.Ratios, want)
		}
		found := false
		for _, d := range c.Differing {
			found = found || d.Group == "work" && d.Name == "workload.name" && d.Values[0] == "oltp_point_select"
		}
		if !found {
			t.Errorf("compare: the workloads are not among what differed: %+v", c.Differing)
		}
		if a := ts.do("GET", "/api/v1/compare?ids="+first.ID, nil); a.Status != 400 || a.apiError(t).Field != "ids" {
			t.Errorf("compare one: %d %s", a.Status, a.Body)
		}
		if a := ts.do("GET", "/api/v1/compare?ids="+first.ID+",zzzzzzzzzzzz", nil); a.Status != 404 {
			t.Errorf("compare unknown: %d %s", a.Status, a.Body)
		}
		if a := ts.do("GET", "/api/v1/openapi.json", nil); a.Status != 200 || !bytes.Contains(a.Body, []byte(`"openapi":"3.0.3"`)) {
			t.Errorf("openapi.json: %d %.200s", a.Status, a.Body)
		}
	})
}

// TestSubmitRefused sends real bad submissions: each is refused with the
// right status and names the field at fault.
func TestSubmitRefused(t *testing.T) {
	ts := newServer(t, t.TempDir()+"/site.db", func(c *site.Config) { c.MaxBody = 1 << 20 })
	base := realRun(t, "oltp_point_select")
	cases := []struct {
		name   string
		sub    func() *site.Submission
		raw    string
		status int
		field  string
	}{
		{name: "unknown schema", sub: func() *site.Submission {
			return submission(variant(t, base, func(r *result.Result) { r.SchemaVersion = 99 }))
		}, status: 400, field: "runs[0].schema_version"},
		{name: "no workload", sub: func() *site.Submission {
			return submission(variant(t, base, func(r *result.Result) { r.Workload.Name = "" }))
		}, status: 400, field: "runs[0].workload.name"},
		{name: "negative headline", sub: func() *site.Submission {
			return submission(variant(t, base, func(r *result.Result) { r.Summary.Headline = -5 }))
		}, status: 400, field: "runs[0].summary.headline"},
		{name: "bad status", sub: func() *site.Submission {
			return submission(variant(t, base, func(r *result.Result) { r.Status = "great" }))
		}, status: 400, field: "runs[0].status"},
		{name: "unknown format", sub: func() *site.Submission {
			s := submission(base)
			s.Format = 7
			return s
		}, status: 400, field: "format"},
		{name: "no runs", sub: func() *site.Submission { return submission() }, status: 400, field: "runs"},
		{name: "host name", sub: func() *site.Submission {
			return submission(variant(t, base, func(r *result.Result) { r.Environment.Hostname = "db7.corp.example.com" }))
		}, status: 400, field: "runs[0].environment.hostname"},
		{name: "address in a warning", sub: func() *site.Submission {
			return submission(variant(t, base, func(r *result.Result) { r.Warnings = []string{"replica at 10.20.30.40 lags"} }))
		}, status: 400, field: "runs[0].warnings[0]"},
		{name: "home path", sub: func() *site.Submission {
			return submission(variant(t, base, func(r *result.Result) { r.Command = append(r.Command, "/home/alice/x.json") }))
		}, status: 400, field: fmt.Sprintf("runs[0].command[%d]", len(base.Command))},
		{name: "data directory", sub: func() *site.Submission {
			return submission(variant(t, base, func(r *result.Result) { r.Target.DataDir = "/srv/pg/17/main" }))
		}, status: 400, field: "runs[0].target.data_dir"},
		{name: "socket in a setting", sub: func() *site.Submission {
			return submission(variant(t, base, func(r *result.Result) { r.Target.Settings["socket"] = "/run/mysqld/mysqld.sock" }))
		}, status: 400, field: "runs[0].target.settings.socket"},
		{name: "credentials in the URL", sub: func() *site.Submission {
			return submission(variant(t, base, func(r *result.Result) { r.Target.URL = "postgres://bob:hunter2@127.0.0.1/db" }))
		}, status: 400, field: "runs[0].target.url"},
		{name: "email in the note", sub: func() *site.Submission {
			s := submission(base)
			s.Note = "ask alice@example.com"
			return s
		}, status: 400, field: "note"},
		{name: "bad tag", sub: func() *site.Submission {
			s := submission(base)
			s.Tags = map[string]string{"Bad Key": "x"}
			return s
		}, status: 400, field: "tags.Bad Key"},
		{name: "number out of range", raw: `{"format":1,"runs":[{"schema_version":1,"summary":{"headline":1e400}}]}`, status: 400, field: "runs.summary.headline"},
		{name: "wrong type", raw: `{"format":1,"runs":[{"schema_version":"one"}]}`, status: 400, field: "runs.schema_version"},
		{name: "not JSON", raw: `{"format":1,`, status: 400},
		{name: "too large", raw: `{"format":1,"note":"` + strings.Repeat("a", 1<<20) + `"}`, status: 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := []byte(c.raw)
			if c.sub != nil {
				body, _ = json.Marshal(c.sub())
			}
			a := ts.do("POST", "/api/v1/results", body, invalidRequest, "1")
			e := a.apiError(t)
			if a.Status != c.status || e.Field != c.field {
				t.Errorf("got %d field %q (%s), want %d field %q", a.Status, e.Field, e.Error, c.status, c.field)
			}
		})
	}
	t.Run("encoding", func(t *testing.T) {
		b, _ := json.Marshal(submission(base))
		if a := ts.do("POST", "/api/v1/results", b, "Content-Encoding", "br", invalidRequest, "1"); a.Status != 415 {
			t.Errorf("brotli: %d %s", a.Status, a.Body)
		}
	})
	t.Run("gzip bomb", func(t *testing.T) {
		// 64 MiB of zeros, 64 KiB compressed, against a cap of 1 MiB.
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		zw.Write([]byte(`{"format":1,"note":"`))
		zeros := make([]byte, 1<<20)
		for range 64 {
			zw.Write(zeros)
		}
		zw.Close()
		a := ts.do("POST", "/api/v1/results", z.Bytes(), "Content-Encoding", "gzip", invalidRequest, "1")
		if a.Status != 413 {
			t.Errorf("gzip bomb: %d %s", a.Status, a.Body)
		}
	})
	// Nothing refused was stored.
	if l, _, err := ts.store.List(t.Context(), sitestore.Query{}); err != nil || len(l) != 0 {
		t.Errorf("stored after refusals: %d, %v", len(l), err)
	}
}

// TestReadBodyStopsInflating checks that a gzip bomb is refused after
// inflating little more than the cap: the compressed stream is read only
// as far as it takes to produce cap+1 bytes.
func TestReadBodyStopsInflating(t *testing.T) {
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	for range 256 {
		zw.Write(chunk)
	}
	zw.Close()
	total := z.Len()
	cr := &countingReader{r: bytes.NewReader(z.Bytes())}
	_, err := site.ReadBody(cr, "gzip", 1<<20)
	var e *site.Error
	if !errors.As(err, &e) || e.Status != 413 {
		t.Fatalf("err = %v, want 413", err)
	}
	if cr.n > total/16 {
		t.Errorf("read %d of %d compressed bytes to refuse a 256 MiB stream against a 1 MiB cap", cr.n, total)
	}
}

type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestRateLimits(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ts := newServer(t, dsn, func(c *site.Config) { c.Limits = sitestore.Limits{PerMinute: 2, PerDay: 3} })
		base := realRun(t, "oltp_point_select")
		first := ts.mustSubmit(submission(base))
		ts.mustSubmit(submission(variant(t, base, nil)))
		a := ts.submit(submission(variant(t, base, nil)))
		if a.Status != 429 {
			t.Fatalf("third in a minute: %d %s", a.Status, a.Body)
		}
		ra, err := strconv.Atoi(a.Header.Get("Retry-After"))
		if err != nil || ra < 1 || ra > 60 {
			t.Errorf("Retry-After %q, want 1 to 60 s", a.Header.Get("Retry-After"))
		}
		// A duplicate still gets its link while limited.
		if again := ts.mustSubmit(submission(base)); again != first {
			t.Errorf("duplicate while limited: %s, want %s", again, first)
		}
		ts.clock.Add(61 * time.Second)
		ts.mustSubmit(submission(variant(t, base, nil)))
		a = ts.submit(submission(variant(t, base, nil)))
		if a.Status != 429 {
			t.Fatalf("fourth in a day (cap 3): %d %s", a.Status, a.Body)
		}
		ra, _ = strconv.Atoi(a.Header.Get("Retry-After"))
		if ra < 23*3600 {
			t.Errorf("Retry-After %d s at the daily cap, want about a day", ra)
		}
		ts.clock.Add(24 * time.Hour)
		ts.mustSubmit(submission(variant(t, base, nil)))
	})
}

func TestMarkedAndLeftOut(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ts := newServer(t, dsn, nil)
		base := realRun(t, "oltp_point_select")
		rel := ts.mustSubmit(submission(variant(t, base, released)))
		dev := ts.mustSubmit(submission(variant(t, base, nil)))
		failed := ts.mustSubmit(submission(variant(t, base, func(r *result.Result) {
			released(r)
			r.Status, r.Error = result.StatusFailed, "lost the connection"
		})))
		el, err := ts.store.Eligible(t.Context(), "oltp_point_select")
		if err != nil {
			t.Fatal(err)
		}
		if len(el) != 1 || el[0].ID != rel {
			t.Errorf("eligible: %+v, want only %s", el, rel)
		}
		for id, want := range map[string]string{rel: "ok true", dev: "ok false", failed: "failed true"} {
			var d site.ResultDetail
			ts.do("GET", "/api/v1/results/"+id, nil).json(t, &d)
			if got := d.Status + " " + strconv.FormatBool(d.Released); got != want {
				t.Errorf("%s: status and released %q, want %q", id, got, want)
			}
		}
	})
}

func TestPagination(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ts := newServer(t, dsn, nil)
		base := realRun(t, "oltp_point_select")
		heads := []float64{500, 100, 300, 300, 200, 400, 50}
		ids := map[float64][]string{}
		for _, h := range heads {
			id := ts.mustSubmit(submission(variant(t, base, func(r *result.Result) { r.Summary.Headline = h })))
			ids[h] = append(ids[h], id)
		}
		for _, sort := range []string{"new", "headline", "headline_asc"} {
			var got []float64
			seen := map[string]bool{}
			cursor := ""
			for page := 0; ; page++ {
				if page > 10 {
					t.Fatal("pages do not end")
				}
				a := ts.do("GET", "/api/v1/results?limit=2&sort="+sort+"&cursor="+url.QueryEscape(cursor), nil)
				var l site.ResultList
				a.json(t, &l)
				if a.Status != 200 {
					t.Fatalf("%s: %d %s", sort, a.Status, a.Body)
				}
				for _, r := range l.Results {
					if seen[r.ID] {
						t.Errorf("%s: %s twice", sort, r.ID)
					}
					seen[r.ID] = true
					got = append(got, r.Headline)
				}
				if l.NextCursor == "" {
					break
				}
				cursor = l.NextCursor
			}
			want := map[string][]float64{"new": {50, 400, 200, 300, 300, 100, 500}, "headline": {500, 400, 300, 300, 200, 100, 50},
				"headline_asc": {50, 100, 200, 300, 300, 400, 500}}[sort]
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: %v, want %v", sort, got, want)
			}
		}
		if a := ts.do("GET", "/api/v1/results?sort=headline&cursor=bogus", nil); a.Status != 400 {
			t.Errorf("bad cursor: %d", a.Status)
		}
	})
}

func TestModeration(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ts := newServer(t, dsn, nil)
		id := ts.mustSubmit(submission(variant(t, realRun(t, "oltp_point_select"), released)))
		for _, h := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"Authorization", "s3cret-admin-token"}} {
			if a := ts.do("POST", "/api/v1/admin/results/"+id+"/hide", nil, append(h, invalidRequest, "1")...); a.Status != 401 {
				t.Errorf("hide with %v: %d", h, a.Status)
			}
		}
		admin := []string{"Authorization", "Bearer s3cret-admin-token"}
		if a := ts.do("POST", "/api/v1/admin/results/"+id+"/hide", nil, admin...); a.Status != 200 {
			t.Fatalf("hide: %d %s", a.Status, a.Body)
		}
		if a := ts.do("GET", "/api/v1/results/"+id, nil); a.Status != 404 {
			t.Errorf("hidden result: %d", a.Status)
		}
		if a := ts.do("GET", "/api/v1/results/"+id, nil, admin...); a.Status != 200 {
			t.Errorf("hidden result, as admin: %d", a.Status)
		}
		var l site.ResultList
		ts.do("GET", "/api/v1/results", nil).json(t, &l)
		if len(l.Results) != 0 {
			t.Errorf("hidden result listed")
		}
		if el, _ := ts.store.Eligible(t.Context(), "oltp_point_select"); len(el) != 0 {
			t.Errorf("hidden result eligible for the leaderboard")
		}
		if a := ts.do("POST", "/api/v1/admin/results/"+id+"/unhide", nil, admin...); a.Status != 200 {
			t.Fatalf("unhide: %d %s", a.Status, a.Body)
		}
		if a := ts.do("GET", "/api/v1/results/"+id, nil); a.Status != 200 {
			t.Errorf("shown again: %d", a.Status)
		}
		if a := ts.do("DELETE", "/api/v1/admin/results/"+id, nil, admin...); a.Status != 200 {
			t.Fatalf("delete: %d %s", a.Status, a.Body)
		}
		if a := ts.do("DELETE", "/api/v1/admin/results/"+id, nil, admin...); a.Status != 404 {
			t.Errorf("delete again: %d", a.Status)
		}
		for _, ep := range [][2]string{{"POST", "/hide"}, {"POST", "/unhide"}, {"DELETE", ""}} {
			if a := ts.do(ep[0], "/api/v1/admin/results/zzzzzzzzzzzz"+ep[1], nil, admin...); a.Status != 404 {
				t.Errorf("%s %s of no result: %d", ep[0], ep[1], a.Status)
			}
			if a := ts.do(ep[0], "/api/v1/admin/results/"+id+ep[1], nil, invalidRequest, "1"); a.Status != 401 {
				t.Errorf("%s %s without the token: %d", ep[0], ep[1], a.Status)
			}
		}
	})
}

// TestMain checks, after a full run of the tests, that they exercised
// every operation and answer of the OpenAPI document.
func TestMain(m *testing.M) {
	code := m.Run()
	if code != 0 || testing.Short() || flag.Lookup("test.run").Value.String() != "" {
		os.Exit(code)
	}
	doc, err := site.OpenAPI()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status := range op.Responses.Map() {
				if _, ok := exercised.Load(op.OperationID + " " + status); !ok {
					fmt.Fprintf(os.Stderr, "contract: %s %s answering %s: no test exercised it against the document\n", method, path, status)
					code = 1
				}
			}
		}
	}
	os.Exit(code)
}

// TestSubmitDegraded: a run whose clients lost their connection is taken,
// listed as degraded, and its page names each client's outage.
func TestSubmitDegraded(t *testing.T) {
	ts := newServer(t, t.TempDir()+"/site.db", nil)
	r := variant(t, realRun(t, "oltp_point_select"), func(r *result.Result) {
		r.Status = result.StatusDegraded
		r.Summary.Reconnects = 1
		r.Summary.Disconnects = []result.Disconnect{{Client: 3, StartS: 8.012, BackS: 15.25, Back: true, DisconnectedS: 7.238, WaitS: 7.3, Reconnects: 1}}
		p := []result.Percentile{{P: 95, MS: 7300}}
		r.Summary.ReconnectWait = &result.Latency{MinMS: 7300, MeanMS: 7300, MaxMS: 7300, Percentiles: p}
		r.Summary.LatencyWithReconnects = &result.Latency{MinMS: 0.1, MeanMS: 2, MaxMS: 7300, Percentiles: p}
	})
	a := ts.submit(submission(r))
	if a.Status != http.StatusCreated {
		t.Fatalf("a degraded run: %d %s", a.Status, a.Body)
	}
	var sa site.SubmitAnswer
	a.json(t, &sa)
	page := ts.do("GET", "/r/"+sa.ID, nil)
	for _, want := range []string{"The run ended <strong>degraded</strong>", "Disconnected clients", "<td>3</td>", "7.24", "7300"} {
		if !bytes.Contains(page.Body, []byte(want)) {
			t.Errorf("the result page lacks %q", want)
		}
	}
	if l := ts.do("GET", "/results", nil); !bytes.Contains(l.Body, []byte(`class="status-degraded"`)) {
		t.Errorf("the list does not show the run as degraded:\n%s", l.Body)
	}
}

package site_test

import (
	"encoding/xml"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

func (ts *testServer) page(path string) (int, string) {
	ts.t.Helper()
	a := ts.do("GET", path, nil)
	return a.Status, string(a.Body)
}

func TestPages(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ts := newServer(t, dsn, nil)
		ps := realRun(t, "oltp_point_select")
		ro := realRun(t, "oltp_read_only")
		best := ts.mustSubmit(submission(variant(t, ps, func(r *result.Result) { released(r); r.Summary.Headline = 1000 })))
		second := ts.mustSubmit(submission(variant(t, ps, func(r *result.Result) { released(r); r.Summary.Headline = 500 })))
		other := ts.mustSubmit(submission(variant(t, ps, func(r *result.Result) { released(r); r.Run.Threads = 64; r.Summary.Headline = 9000 })))
		dev := ts.mustSubmit(submission(variant(t, ps, func(r *result.Result) { r.Summary.Headline = 99999 })))
		roID := ts.mustSubmit(submission(variant(t, ro, released)))

		code, body := ts.page("/")
		if code != 200 || !strings.Contains(body, `href="/results?workload=oltp_read_only"`) || !strings.Contains(body, roID) {
			t.Errorf("home: %d\n%.2000s", code, body)
		}
		code, body = ts.page("/results?workload=oltp_read_only&sort=headline")
		if code != 200 || !strings.Contains(body, roID) || strings.Contains(body, best) {
			t.Errorf("filtered results: %d", code)
		}
		// Sort links keep the filter; facet counts are shown.
		if !strings.Contains(body, `href="/results?sort=new&amp;workload=oltp_read_only"`) {
			t.Errorf("sort links lose the filter:\n%s", body)
		}
		if !regexp.MustCompile(`oltp_point_select</a> <span class="count">4</span>`).MatchString(body) {
			t.Errorf("the workload facet does not count 4 oltp_point_select results")
		}
		if code, _ := ts.page("/results?colour=red"); code != 400 {
			t.Errorf("unknown filter: %d", code)
		}

		code, body = ts.page("/r/" + best)
		for _, want := range []string{"Latency", "p99 ms", `class="chart"`, "dbmark submit last --server", best + ".json", "Preflight:"} {
			if !strings.Contains(body, want) {
				t.Errorf("result page lacks %q", want)
			}
		}
		if code, body := ts.page("/r/" + dev); code != 200 || !strings.Contains(body, "unreleased dbmark build") {
			t.Errorf("unreleased result not marked: %d", code)
		}
		a := ts.do("GET", "/r/"+best+".csv", nil)
		if a.Status != 200 || !strings.HasPrefix(a.Header.Get("Content-Type"), "text/csv") || !strings.HasPrefix(string(a.Body), "t_s,duration_s") {
			t.Errorf("CSV: %d %s %.200s", a.Status, a.Header.Get("Content-Type"), a.Body)
		}
		if a := ts.do("GET", "/r/"+best+".json", nil); a.Status != 200 || !strings.Contains(string(a.Body), `"runs"`) {
			t.Errorf("JSON download: %d", a.Status)
		}

		// The leaderboard ranks only comparable, released, ok results.
		code, body = ts.page("/leaderboard/oltp_point_select")
		if code != 200 || !strings.Contains(body, best) || !strings.Contains(body, second) || strings.Contains(body, ">"+other+"<") || strings.Contains(body, dev) {
			t.Errorf("leaderboard: %d\n%s", code, body)
		}
		if !strings.Contains(body, "0.500") {
			t.Errorf("leaderboard: the second result's score is not 0.500")
		}
		code, body = ts.page("/leaderboard")
		if code != 200 || !strings.Contains(body, "/leaderboard/oltp_read_only") {
			t.Errorf("leaderboards: %d", code)
		}

		code, body = ts.page("/compare?ids=" + best + "," + second)
		if code != 200 || !strings.Contains(body, "0.50") || !strings.Contains(body, "single runs: no test") {
			t.Errorf("compare: %d", code)
		}

		var feed struct {
			Entries []struct {
				ID string `xml:"id"`
			} `xml:"entry"`
		}
		a = ts.do("GET", "/feed.atom", nil)
		if err := xml.Unmarshal(a.Body, &feed); err != nil || len(feed.Entries) != 5 {
			t.Errorf("feed: %v, %d entries", err, len(feed.Entries))
		}

		// Hidden: gone from lists, the feed, the leaderboard and its page.
		if a := ts.do("POST", "/api/v1/admin/results/"+best+"/hide", nil, "Authorization", "Bearer s3cret-admin-token"); a.Status != 200 {
			t.Fatalf("hide: %d", a.Status)
		}
		for _, p := range []string{"/", "/results", "/leaderboard/oltp_point_select", "/feed.atom"} {
			if _, body := ts.page(p); strings.Contains(body, best) {
				t.Errorf("%s shows a hidden result", p)
			}
		}
		if code, _ := ts.page("/r/" + best); code != 404 {
			t.Errorf("hidden result's page: %d", code)
		}
	})
}

func TestAdminPage(t *testing.T) {
	ts := newServer(t, t.TempDir()+"/site.db", nil)
	id := ts.mustSubmit(submission(variant(t, realRun(t, "oltp_point_select"), released)))
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	post := func(c *http.Client, path string, form url.Values) (int, string) {
		t.Helper()
		res, err := c.PostForm(ts.URL+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		buf := make([]byte, 1<<16)
		for {
			n, err := res.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return res.StatusCode, b.String()
	}
	if code, body := post(c, "/admin/login", url.Values{"token": {"wrong"}}); code != 401 || !strings.Contains(body, "Wrong token") {
		t.Errorf("wrong token: %d", code)
	}
	if code, _ := post(c, "/admin/results/"+id+"/hide", url.Values{}); code != 401 {
		t.Errorf("action without signing in: %d", code)
	}
	code, body := post(c, "/admin/login", url.Values{"token": {"s3cret-admin-token"}})
	if code != 200 || !strings.Contains(body, `name="csrf"`) || !strings.Contains(body, id) {
		t.Fatalf("signed in: %d\n%s", code, body)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(body)[1]
	// A forged form (the cookie goes along, the token does not): refused.
	if code, _ := post(c, "/admin/results/"+id+"/hide", url.Values{"csrf": {"0000"}}); code != 403 {
		t.Errorf("forged form: %d", code)
	}
	if code, body := post(c, "/admin/results/"+id+"/hide", url.Values{"csrf": {csrf}}); code != 200 || !strings.Contains(body, "hidden") {
		t.Errorf("hide: %d", code)
	}
	if code, _ := ts.page("/r/" + id); code != 404 {
		t.Errorf("hidden result shown to the public: %d", code)
	}
	res, err := c.Get(ts.URL + "/r/" + id)
	if err != nil || res.StatusCode != 200 {
		t.Errorf("hidden result to the admin: %v %v", err, res.StatusCode)
	}
	res.Body.Close()
	if code, _ := post(c, "/admin/results/"+id+"/delete", url.Values{"csrf": {csrf}}); code != 200 {
		t.Errorf("delete: %d", code)
	}
	if a := ts.do("GET", "/api/v1/results/"+id, nil, "Authorization", "Bearer s3cret-admin-token"); a.Status != 404 {
		t.Errorf("deleted result: %d", a.Status)
	}
}

// A result whose client limited its figure says so on its page, with what
// to do, and the client facet tells it from the others.
func TestClientLimitedResult(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ts := newServer(t, dsn, nil)
		ps := realRun(t, "oltp_point_select")
		limited := ts.mustSubmit(submission(variant(t, ps, func(r *result.Result) {
			r.Summary.Client = &result.ClientCPU{PerEventUS: 41.5, MachineShare: 0.62, CPUs: 2, SharedMachine: true, Limited: true}
		})))
		not := ts.mustSubmit(submission(variant(t, ps, func(r *result.Result) {
			r.Summary.Client = &result.ClientCPU{PerEventUS: 20, MachineShare: 0.2, CPUs: 2, SharedMachine: true}
		})))
		_, body := ts.page("/r/" + limited)
		for _, want := range []string{`class="warn client-limited">client-limited: dbmark itself used 62% of this machine&#39;s 2 CPUs`,
			"run dbmark on another machine, or with fewer clients", "Client CPU (dbmark's process): 41.5 µs per event, 62% of 2 CPUs"} {
			if !strings.Contains(body, want) {
				t.Errorf("the limited result's page lacks %q", want)
			}
		}
		if _, body := ts.page("/r/" + not); strings.Contains(body, "client-limited:") || !strings.Contains(body, "20.0 µs per event") {
			t.Error("a result the client did not limit is marked, or lacks its client CPU")
		}
		_, body = ts.page("/results?client=client-limited")
		if !strings.Contains(body, limited) || strings.Contains(body, not) {
			t.Errorf("the client facet does not pick the limited result alone")
		}
	})
}

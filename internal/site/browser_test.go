package site_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/dbmark/dbmark/internal/redact"
	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site"
	"github.com/dbmark/dbmark/internal/testchrome"
)

func chartLibrary(t *testing.T) {
	t.Helper()
	if _, err := htmlreport.ChartLibrary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// watched is a headless Chromium whose console errors, exceptions, log
// entries (CSP violations among them), dialogs and requests to any origin
// but the site's are noted as problems.
type watched struct {
	ctx      context.Context
	problems *testchrome.Problems
}

func (w *watched) take() []string { return w.problems.Take() }

func newBrowser(t *testing.T, origin string) *watched {
	t.Helper()
	ctx := testchrome.Start(t, 1280, 900)
	return &watched{ctx: ctx, problems: testchrome.Watch(t, ctx, origin)}
}

type drawn struct {
	ID     string `json:"id"`
	Points int    `json:"points"`
	Error  string `json:"error"`
}

// open loads u and, when the page has charts, waits for them and checks
// every one drew points.
func (w *watched) open(t *testing.T, u string, charts bool) {
	t.Helper()
	if err := chromedp.Do(w.ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("footer.site"))); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
	if charts {
		w.chartsDrew(t, u)
	}
}

func (w *watched) chartsDrew(t *testing.T, u string) {
	t.Helper()
	if err := chromedp.Do(w.ctx, chromedp.WaitVisible(chromedp.CSS("body[data-charts]"))); err != nil {
		t.Fatalf("%s: the charts were not drawn: %v", u, err)
	}
	states, err := chromedp.Run(w.ctx, chromedp.Evaluate[[]drawn](`Array.from(document.querySelectorAll('.chart')).map(e => ({
		id: e.id, points: Number(e.dataset.points), error: e.dataset.error || ''}))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(states) == 0 {
		t.Errorf("%s: no charts", u)
	}
	for _, s := range states {
		if s.Points <= 0 || s.Error != "" {
			t.Errorf("%s: chart %s drew %d points, error %q", u, s.ID, s.Points, s.Error)
		}
	}
}

func (w *watched) click(t *testing.T, sel string) string {
	t.Helper()
	if err := chromedp.Do(w.ctx, chromedp.Click(chromedp.CSS(sel)), chromedp.WaitVisible(chromedp.CSS("footer.site"))); err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
	loc, err := chromedp.Run(w.ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestWalkInChromium walks home -> filter -> result -> compare ->
// leaderboard in a real browser, under the site's CSP, checking that the
// charts draw and nothing is refused or fails.
func TestWalkInChromium(t *testing.T) {
	chartLibrary(t)
	ts := newServer(t, t.TempDir()+"/site.db", nil)
	ps := realRun(t, "oltp_point_select")
	ro := realRun(t, "oltp_read_only")
	ts.mustSubmit(submission(variant(t, ps, released)))
	ts.mustSubmit(submission(variant(t, ps, func(r *result.Result) { released(r); r.Summary.Headline *= 0.8 })))
	ts.mustSubmit(submission(variant(t, ro, released)))

	w := newBrowser(t, ts.URL)
	w.open(t, ts.URL+"/", false)
	loc := w.click(t, `.counts a[href="/results?workload=oltp_point_select"]`)
	if !strings.Contains(loc, "workload=oltp_point_select") {
		t.Errorf("the filter is not in the URL: %s", loc)
	}
	rows, err := chromedp.Run(w.ctx, chromedp.Evaluate[int](`document.querySelectorAll('table.results tbody tr').length`))
	if err != nil || rows != 2 {
		t.Errorf("filtered list has %d rows (%v), want 2", rows, err)
	}
	w.click(t, `table.results tbody tr:first-child a[href^="/r/"]`)
	w.chartsDrew(t, "result page")
	// Compare the two oltp_point_select results.
	var l site.ResultList
	ts.do("GET", "/api/v1/results?workload=oltp_point_select", nil).json(t, &l)
	w.open(t, ts.URL+"/compare?ids="+l.Results[0].ID+","+l.Results[1].ID, true)
	ratio, err := chromedp.Run(w.ctx, chromedp.Evaluate[string](`document.querySelectorAll('td.ratio')[1].textContent`))
	if err != nil || ratio != "1.25" {
		t.Errorf("ratio to the first %q (%v), want 1.25", ratio, err)
	}
	w.open(t, ts.URL+"/leaderboard", false)
	w.click(t, `main a[href="/leaderboard/oltp_point_select"]`)
	scores, err := chromedp.Run(w.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('table.ranking td.score')).map(e => e.textContent)`))
	if err != nil || strings.Join(scores, " ") != "1.000 0.800" {
		t.Errorf("leaderboard scores %v (%v), want 1.000 0.800", scores, err)
	}
	for _, p := range w.take() {
		t.Error(p)
	}
}

// payloads try every way a string could become script.
var payloads = []string{
	`<script>window.__xss=1</script>`,
	`"><img src=x onerror="window.__xss=2">`,
	`javascript:window.__xss=3`,
	`<svg onload="window.__xss=4"><circle r=1 /></svg>`,
	`</script><script>window.__xss=5</script>`,
	`'-alert(6)-'`,
	`{{7*7}}<iframe src="javascript:window.top.__xss=8">`,
}

// hostile returns r with every string the server lets carry free text set
// to a payload, and payload keys in its maps, redacted as submit does.
func hostile(t *testing.T, r *result.Result, n int) *result.Result {
	t.Helper()
	b, _ := json.Marshal(r)
	var doc map[string]any
	json.Unmarshal(b, &doc)
	// Fields the server checks the form of (ids, names, times, enums) keep
	// their values: a payload there is refused, which another test shows.
	keep := map[string]bool{"id": true, "schema_version": true, "name": true, "kind": true, "better": true, "status": true,
		"started_at": true, "ended_at": true, "encoded": true, "version": true, "op": true, "unit": true}
	i := n
	var walk func(key string, v any) any
	walk = func(key string, v any) any {
		switch x := v.(type) {
		case string:
			if keep[key] {
				return x
			}
			i++
			return payloads[i%len(payloads)]
		case []any:
			for j := range x {
				x[j] = walk(key, x[j])
			}
		case map[string]any:
			for k, e := range x {
				x[k] = walk(k, e)
			}
		}
		return v
	}
	walk("", doc)
	wl := doc["workload"].(map[string]any)
	for j, p := range payloads {
		wl["options"].(map[string]any)[p] = payloads[(j+1)%len(payloads)]
		doc["target"].(map[string]any)["settings"].(map[string]any)[p] = p
	}
	doc["target"].(map[string]any)["engine"] = payloads[n%len(payloads)]
	doc["target"].(map[string]any)["version"] = payloads[(n+1)%len(payloads)]
	b, _ = json.Marshal(doc)
	var out result.Result
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	red, err := redact.Result(&out)
	if err != nil {
		t.Fatal(err)
	}
	return red
}

// TestXSSInChromium submits payloads in every string field and checks, in
// Chromium, on every page that shows them, that none ran or became an
// element.
func TestXSSInChromium(t *testing.T) {
	chartLibrary(t)
	ts := newServer(t, t.TempDir()+"/site.db", nil)
	ok := hostile(t, variant(t, realRun(t, "oltp_point_select"), released), 0)
	failed := hostile(t, variant(t, realRun(t, "oltp_read_only"), nil), 3)
	failed.Status, failed.Error = result.StatusFailed, payloads[1]
	var ids []string
	for k, r := range []*result.Result{ok, failed} {
		s := submission(r)
		s.Note = payloads[k]
		s.Tags = map[string]string{"a": payloads[2], "b": payloads[3]}
		a := ts.submit(s)
		if a.Status != 201 {
			t.Fatalf("hostile submission refused: %d %s", a.Status, a.Body)
		}
		var ans site.SubmitAnswer
		a.json(t, &ans)
		ids = append(ids, ans.ID)
	}
	w := newBrowser(t, ts.URL)
	var q url.Values = url.Values{"engine": {payloads[0]}, "q": {payloads[1]}}
	pages := []struct {
		path   string
		charts bool
	}{
		{"/", false}, {"/results", false}, {"/results?" + q.Encode(), false},
		{"/results?cpu_model=" + url.QueryEscape(payloads[3]), false},
		{"/r/" + ids[0], true}, {"/r/" + ids[1], true},
		{"/compare?ids=" + ids[0] + "," + ids[1], true}, {"/compare?ids=" + url.QueryEscape(payloads[0]), false},
		{"/leaderboard", false}, {"/leaderboard/oltp_point_select", false},
		{"/leaderboard/" + url.PathEscape(payloads[1]), false}, {"/admin", false},
		{"/standing/oltp_point_select", false}, {"/standing/" + url.PathEscape(payloads[0]), false}, {"/api", false},
	}
	for _, p := range pages {
		w.open(t, ts.URL+p.path, p.charts)
		if p.charts {
			// Hover every chart: tooltips are HTML.
			n, err := chromedp.Run(w.ctx, chromedp.Evaluate[int](`document.querySelectorAll('.chart').length`))
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				pos, err := chromedp.Run(w.ctx, chromedp.Evaluate[[2]float64](fmt.Sprintf(`(e => { e.scrollIntoView(); const r = e.getBoundingClientRect();
					return [r.left + r.width/2, r.top + r.height/2]; })(document.querySelectorAll('.chart')[%d])`, i)))
				if err != nil {
					t.Fatal(err)
				}
				if err := chromedp.Do(w.ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, pos[0], pos[1]), chromedp.Sleep(50*time.Millisecond)); err != nil {
					t.Fatal(err)
				}
			}
		}
		ran, err := chromedp.Run(w.ctx, chromedp.Evaluate[string](`JSON.stringify({xss: window.__xss || 0,
			handlers: document.querySelectorAll('[onerror],[onload],iframe,img').length,
			scripts: Array.from(document.scripts).filter(s => s.src === '' && s.type !== 'application/json').length})`))
		if err != nil {
			t.Fatal(err)
		}
		if ran != `{"xss":0,"handlers":0,"scripts":0}` {
			t.Errorf("%s: a payload took effect: %s", p.path, ran)
		}
		for _, pr := range w.take() {
			// A 404 page is an error the browser logs; the payload pages
			// that name nothing are expected to answer 404.
			if strings.Contains(pr, "404") && strings.Contains(pr, "Failed to load resource") {
				continue
			}
			t.Errorf("%s: %s", p.path, pr)
		}
	}
	// The payloads are on the pages, as text.
	w.open(t, ts.URL+"/r/"+ids[0], true)
	text, err := chromedp.Run(w.ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{payloads[0], payloads[2]} {
		if !strings.Contains(text, p) {
			t.Errorf("payload %q is not shown as text", p)
		}
	}
}

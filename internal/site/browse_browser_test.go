package site_test

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site"
)

// browseSite is a site with released and unreleased point-select results
// (one with long words, as a phone must still show), a read-only one and
// a sweep, served with the from-source boards on.
type browseSite struct {
	ts                           *testServer
	released, unreleased, others []string
	sweep                        string
}

func newBrowseSite(t *testing.T) *browseSite {
	t.Helper()
	ts := newServer(t, t.TempDir()+"/site.db", func(c *site.Config) { c.LeaderboardUnreleased = true })
	b := &browseSite{ts: ts}
	ps := realRun(t, "oltp_point_select")
	for i := range 12 {
		r := variant(t, ps, func(r *result.Result) {
			released(r)
			onDisk(r, i%2 == 0, "ext4", "AMD EPYC 7763 64-Core Processor with a rather long model name that does not wrap")
			r.Summary.Headline *= 1 + float64(i)/10
		})
		s := submission(r)
		if i == 0 {
			s.Tags = map[string]string{"long": strings.Repeat("x", 120)}
		}
		b.released = append(b.released, ts.mustSubmit(s))
	}
	for i := range 2 {
		b.unreleased = append(b.unreleased, ts.mustSubmit(submission(variant(t, ps, func(r *result.Result) { r.Summary.Headline *= 2 + float64(i) }))))
	}
	b.others = append(b.others, ts.mustSubmit(submission(variant(t, realRun(t, "oltp_read_only"), released))))
	sw := &result.Sweep{SchemaVersion: 1, ID: uuid.NewString(), Workload: ps.Workload.Name, Headline: "tps", Better: "higher",
		StartedAt: ps.StartedAt, Status: result.SweepDone, Command: []string{"dbmark", "sweep"}, Args: []string{},
		Axes: []result.SweepAxis{{Name: "threads", Values: []string{"1", "2"}}}}
	var runs []*result.Result
	for _, th := range []string{"1", "2"} {
		runs = append(runs, variant(t, ps, func(r *result.Result) {
			released(r)
			r.Sweep = &result.SweepRef{ID: sw.ID, Cell: map[string]string{"threads": th}}
		}))
	}
	b.sweep = ts.mustSubmit(&site.Submission{Format: site.SubmissionFormat, Sweep: sw, Runs: runs})
	return b
}

// TestCompareWithoutIDs: in Chromium with scripts off, results are
// compared by ticking them in a list, in search results, on a
// leaderboard and under a result's "compare with…"; with scripts on,
// the comparison's chart legends name the site's ids, not local UUIDs.
// The from-source board is apart from the released one.
func TestCompareWithoutIDs(t *testing.T) {
	chartLibrary(t)
	b := newBrowseSite(t)
	ts := b.ts
	w := newBrowser(t, ts.URL)
	if _, err := chromedp.Call(w.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	// compared submits the form of the button sel and returns the ids of
	// the comparison it leads to.
	compared := func(t *testing.T, sel string) []string {
		t.Helper()
		if err := chromedp.Do(w.ctx, chromedp.Click(chromedp.CSS(sel)), chromedp.WaitVisible(chromedp.CSS("table.compare"))); err != nil {
			t.Fatalf("compare by %s: %v", sel, err)
		}
		loc, err := chromedp.Run(w.ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(loc)
		if err != nil || u.Path != "/compare" {
			t.Fatalf("the form went to %s", loc)
		}
		ids, err := chromedp.Run(w.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('table.compare thead a')).map(a => a.textContent)`))
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	tick := func(t *testing.T, sel string) {
		t.Helper()
		if err := chromedp.Do(w.ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
			t.Fatalf("tick %s: %v", sel, err)
		}
	}
	// A filtered list.
	w.open(t, ts.URL+"/results?workload=oltp_point_select", false)
	tick(t, `input[value="`+b.released[0]+`"]`)
	tick(t, `input[value="`+b.released[1]+`"]`)
	ids := compared(t, `form#pick button`)
	if len(ids) != 2 || !slices.Contains(ids, b.released[0]) || !slices.Contains(ids, b.released[1]) {
		t.Errorf("compared %v, want %s and %s", ids, b.released[0], b.released[1])
	}
	// Search results.
	w.open(t, ts.URL+"/results?q=oltp", false)
	tick(t, `input[value="`+b.others[0]+`"]`)
	tick(t, `input[value="`+b.released[2]+`"]`)
	if ids := compared(t, `form#pick button`); len(ids) != 2 {
		t.Errorf("compared %v from search results", ids)
	}
	// A result's "compare with…": the same work on the same engine only.
	w.open(t, ts.URL+"/r/"+b.released[3], false)
	offered, err := chromedp.Run(w.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#compare-with input[type=checkbox]')).map(e => e.value)`))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(offered, b.others[0]) || slices.Contains(offered, b.released[3]) || !slices.Contains(offered, b.released[4]) || !slices.Contains(offered, b.unreleased[0]) {
		t.Errorf("compare with… offers %v: want the other point-select results, not itself nor the read-only one", offered)
	}
	tick(t, `#compare-with input[value="`+b.released[4]+`"]`)
	if ids := compared(t, `#compare-with button`); len(ids) != 2 || ids[0] != b.released[3] || ids[1] != b.released[4] {
		t.Errorf("compared %v, want %s then %s", ids, b.released[3], b.released[4])
	}
	// A leaderboard, and its from-source board apart.
	w.open(t, ts.URL+"/leaderboard/oltp_point_select", false)
	ranked, err := chromedp.Run(w.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('table.ranking input')).map(e => e.value)`))
	if err != nil {
		t.Fatal(err)
	}
	source, err := chromedp.Run(w.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#from-source table.ranking input')).map(e => e.value)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(source) != 2 || source[0] != b.unreleased[1] {
		t.Errorf("from-source board %v, want %v best first", source, b.unreleased)
	}
	if len(ranked) != len(b.released)+1+len(source) {
		t.Errorf("boards hold %d results, want %d released (the sweep too) and %d from source", len(ranked), len(b.released)+1, len(source))
	}
	tick(t, `table.ranking input[value="`+b.released[5]+`"]`)
	tick(t, `#from-source input[value="`+b.unreleased[0]+`"]`)
	if ids := compared(t, `form#pick button`); len(ids) != 2 {
		t.Errorf("compared %v from the leaderboard", ids)
	}
	// Legends: the site's ids.
	if _, err := chromedp.Call(w.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}
	w.open(t, ts.URL+"/compare?id="+b.released[0]+"&id="+b.released[1], true)
	legends, err := chromedp.Run(w.ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('.chart')).map(e => echarts.getInstanceByDom(e)).filter(Boolean)
		.flatMap(c => (c.getOption().series || []).map(s => s.name)).join('\n')`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(legends, b.released[0]) || !strings.Contains(legends, b.released[1]) {
		t.Errorf("the legends do not name the site's ids:\n%s", legends)
	}
	var detail site.ResultDetail
	ts.do("GET", "/api/v1/results/"+b.released[0], nil).json(t, &detail)
	if uid := detail.Submission.Runs[0].ID[:8]; strings.Contains(legends, uid) {
		t.Errorf("the legends name the local UUID %s", uid)
	}
	for _, p := range w.take() {
		t.Error(p)
	}
	// Without a browser: the form's GET is the comparison.
	if a := ts.do("GET", "/compare?id="+b.released[0]+"&id="+b.released[1], nil); a.Status != http.StatusOK || !bytes.Contains(a.Body, []byte(b.released[1])) {
		t.Errorf("GET /compare?id=&id=: %d", a.Status)
	}
}

// TestPagesFit opens every page at 1280 and 390 px (a phone) in Chromium:
// the page never scrolls sideways (wide tables scroll in their own box),
// and, with $DBMARK_SCREENSHOTS naming a directory, its full-page
// screenshot, written there, is as wide as the window.
func TestPagesFit(t *testing.T) {
	chartLibrary(t)
	b := newBrowseSite(t)
	ts := b.ts
	w := newBrowser(t, ts.URL)
	// Full-page screenshots are slow on a loaded machine: taken, checked
	// and kept when asked for.
	dir := os.Getenv("DBMARK_SCREENSHOTS")
	pages := []struct {
		name, path string
		charts     bool
	}{
		{"home", "/", false}, {"results", "/results?q=epyc", false},
		{"result", "/r/" + b.released[0], true}, {"sweep", "/r/" + b.sweep, true},
		{"compare", "/compare?id=" + b.released[0] + "&id=" + b.released[1] + "&id=" + b.others[0], true},
		{"leaderboards", "/leaderboard", false}, {"leaderboard", "/leaderboard/oltp_point_select", false},
		{"standing", "/standing/oltp_point_select", false}, {"api", "/api", false}, {"admin", "/admin", false},
		{"notfound", "/nothing-here", false},
	}
	for _, width := range []int64{1280, 390} {
		opts := []chromedp.EmulateViewportOption{}
		if width < 800 {
			opts = append(opts, chromedp.EmulateMobile)
		}
		if err := chromedp.Do(w.ctx, chromedp.EmulateViewport(width, 844, opts...)); err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			w.open(t, ts.URL+p.path, p.charts)
			sizes, err := chromedp.Run(w.ctx, chromedp.Evaluate[[2]int](`[document.scrollingElement.scrollWidth, window.innerWidth]`))
			if err != nil {
				t.Fatal(err)
			}
			if sizes[1] != int(width) || sizes[0] > sizes[1] {
				// Name what sticks out, innermost first.
				wide, _ := chromedp.Run(w.ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`Array.from(document.querySelectorAll('main *'))
					.filter(e => e.getBoundingClientRect().right > %d && !Array.from(e.children).some(c => c.getBoundingClientRect().right > %d))
					.slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`, width, width)))
				t.Errorf("%s at %d px: the page is %d px wide in a %d px window: %v", p.name, width, sizes[0], sizes[1], wide)
			}
			if dir == "" {
				continue
			}
			// A full-page screenshot is as wide as the page's content.
			shot, err := chromedp.Run(w.ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(shot))
			if err != nil {
				t.Fatal(err)
			}
			if img.Bounds().Dx() != int(width) {
				t.Errorf("%s at %d px: the screenshot is %d px wide", p.name, width, img.Bounds().Dx())
			}
			if err := os.WriteFile(filepath.Join(dir, p.name+"-"+strconv.FormatInt(width, 10)+".png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range w.take() {
		if strings.Contains(p, "404") { // the not-found page's own answer
			continue
		}
		t.Error(p)
	}
}

// TestFeedStyled: the Atom feed names a style sheet the site serves, and
// Chromium lays its entries out with it.
func TestFeedStyled(t *testing.T) {
	ts := newServer(t, t.TempDir()+"/site.db", nil)
	ts.mustSubmit(submission(variant(t, realRun(t, "oltp_point_select"), released)))
	feed := ts.do("GET", "/feed.atom", nil)
	if !bytes.Contains(feed.Body, []byte(`<?xml-stylesheet type="text/css" href="/static/feed.css"?>`)) {
		t.Fatalf("the feed names no style sheet:\n%.300s", feed.Body)
	}
	if css := ts.do("GET", "/static/feed.css", nil); css.Status != http.StatusOK || css.Header.Get("Content-Type") != "text/css; charset=utf-8" {
		t.Fatalf("/static/feed.css: %d %s", css.Status, css.Header.Get("Content-Type"))
	}
	w := newBrowser(t, ts.URL)
	if err := chromedp.Do(w.ctx, chromedp.Navigate(ts.URL+"/feed.atom")); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(w.ctx, chromedp.Evaluate[[]string](`[document.contentType, getComputedStyle(document.documentElement).display,
		getComputedStyle(document.getElementsByTagName('entry')[0]).display,
		getComputedStyle(document.getElementsByTagName('author')[0]).display]`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "application/xml block block none" {
		t.Errorf("the feed in Chromium: type, and feed, entry and author displayed %v, want application/xml, block block none", got)
	}
	// A feed reader is given Atom's own type.
	if a := ts.do("GET", "/feed.atom", nil, "Accept", "application/atom+xml, application/rss+xml;q=0.9, */*;q=0.1"); a.Header.Get("Content-Type") != "application/atom+xml; charset=utf-8" {
		t.Errorf("a feed reader is given %s", a.Header.Get("Content-Type"))
	}
	for _, p := range w.take() {
		t.Error(p)
	}
}

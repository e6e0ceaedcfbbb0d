package site_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/dbmark/dbmark/internal/result"
)

// TestResultBlocksFitInChromium opens the pages with a sweep's cells, a
// query suite's queries, a durability flag, the reproduction script, a
// per-query comparison and the counters that moved at 1280 and 390 pixels
// wide: none of these blocks
// may reach past the window, other than inside a box that scrolls on its
// own (.wide).
func TestResultBlocksFitInChromium(t *testing.T) {
	chartLibrary(t)
	ts := newServer(t, t.TempDir()+"/site.db", nil)
	ps := realRun(t, "oltp_point_select")
	q := realRun(t, "query")
	if q.Counters != nil && q.Counters.Series == nil {
		q.Counters.Series = []result.CounterSeries{}
	}
	// One sweep shows the cells, the durability flag and the script.
	sweep := ts.mustSubmit(sweepOf(t, variant(t, ps, func(r *result.Result) { r.Target.Settings["synchronous"] = "0" }),
		[][2]any{{1, []float64{100000, 120000, 110000}}, {4, []float64{300000, 374562, 342995}}}))
	qa := ts.mustSubmit(submission(q))
	qb := ts.mustSubmit(submission(variant(t, q, nil)))
	ca, cb, cc := movedCounters(t, ts)
	pages := [][2]string{{"sweep", "/r/" + sweep}, {"query", "/r/" + qa}, {"compare-queries", "/compare?ids=" + qa + "," + qb},
		{"compare-counters", "/compare?ids=" + ca + "," + cb + "," + cc}}
	blocks := `table.cells, table.queries, table.compare-queries, div.section.counters, table.counters, p.with-throughput, table.read-check, pre#reproduce-script, p#not-durable, p.headline-of, p.tables-of`
	// DBMARK_SCREENSHOTS names a directory for screenshots of each page's
	// main part, to look at.
	dir := os.Getenv("DBMARK_SCREENSHOTS")
	w := newBrowser(t, ts.URL)
	for _, pg := range pages {
		w.open(t, ts.URL+pg[1], false)
		found, err := chromedp.Run(w.ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, blocks)))
		if err != nil || found < 1 {
			t.Errorf("%s: %d of the blocks (%v)", pg[0], found, err)
		}
		// The page is laid out again at each width, without a reload.
		for _, width := range []int64{1280, 390} {
			if err := chromedp.Do(w.ctx, chromedp.EmulateViewport(width, 900)); err != nil {
				t.Fatal(err)
			}
			over, err := chromedp.Run(w.ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).filter(e =>
				!e.closest('.wide') && e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map(e => e.tagName + '.' + e.className + '#' + e.id)`, blocks)))
			if err != nil {
				t.Fatal(err)
			}
			if len(over) > 0 {
				t.Errorf("%s at %d px: %v reach past the window", pg[0], width, over)
			}
			if dir != "" {
				for i, sel := range strings.Split(blocks, ", ") {
					if shot, err := chromedp.Run(w.ctx, chromedp.Screenshot(chromedp.CSS(sel), chromedp.AtLeast(0))); err == nil && len(shot) > 0 {
						os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d-%d.png", pg[0], width, i)), shot, 0o644)
					}
				}
			}
		}
	}
	for _, p := range w.take() {
		t.Error(p)
	}
}

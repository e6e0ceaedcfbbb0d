package htmlreport_test

import (
	"bytes"
	"context"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/testchrome"
)

var screenshots = flag.String("screenshots", "", "write screenshots of a sample report into this directory (make screenshots)")

// openReport renders runs into a report with opts, opens it in a headless
// Chromium 1280 by 900 pixels large, watched for problems (any request but
// for the file itself among them), and waits until its charts are drawn.
// It returns the browser's tab, its problems and the report's HTML.
func openReport(t *testing.T, runs []htmlreport.Run, opts htmlreport.Options) (context.Context, *testchrome.Problems, string) {
	t.Helper()
	var html bytes.Buffer
	if err := htmlreport.Render(&html, runs, opts); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, html.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := testchrome.Start(t, 1280, 900)
	problems := testchrome.Watch(t, ctx, "file:")
	if err := chromedp.Do(ctx,
		chromedp.Navigate((&url.URL{Scheme: "file", Path: path}).String()),
		chromedp.WaitVisible(chromedp.CSS("body[data-charts]")),
	); err != nil {
		t.Fatalf("open the report in chromium: %v", err)
	}
	return ctx, problems, html.String()
}

type chartState struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Points int    `json:"points"`
	Error  string `json:"error"`
}

// TestReportInChromium renders a report of real runs and checks, in a real
// browser, that it draws every chart with data, logs no error, asks for
// nothing over the network, and prints.
func TestReportInChromium(t *testing.T) {
	lib := library(t)
	var runs []htmlreport.Run
	if *screenshots != "" {
		runs = sample(t, 8*time.Second) // enough intervals for a picture worth keeping
	} else {
		runs = sharedSample(t)
	}
	// The last run moved to start a second after the one before it: the
	// two are drawn on one clock as well.
	last, prev := *runs[len(runs)-1].Result, runs[len(runs)-2].Result
	took := last.EndedAt.Sub(last.StartedAt)
	last.StartedAt = prev.StartedAt.Add(time.Second)
	last.EndedAt = last.StartedAt.Add(took)
	runs = append(slices.Clone(runs[:len(runs)-1]), htmlreport.Run{ID: runs[len(runs)-1].ID, Result: &last})

	ctx, problems, html := openReport(t, runs, htmlreport.Options{Title: "dbmark sample report", Library: lib,
		Generated: time.Now(), Tool: "dbmark test"})
	wantCharts := strings.Count(html, `class="chart"`)
	states, err := chromedp.Run(ctx, chromedp.Evaluate[[]chartState](`Array.from(document.querySelectorAll('.chart')).map(e => ({
		id: e.id, kind: e.dataset.kind, points: Number(e.dataset.points), error: e.dataset.error || ''}))`))
	if err != nil {
		t.Fatalf("read the charts: %v", err)
	}
	pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF(chromedp.PDFPaper(chromedp.PaperA4), chromedp.PDFPrintBackground()))
	if err != nil {
		t.Fatalf("print to PDF: %v", err)
	}
	for _, p := range problems.Take() {
		t.Error(p)
	}

	if len(states) != wantCharts || wantCharts == 0 {
		t.Fatalf("%d chart elements in the page, %d in the HTML", len(states), wantCharts)
	}
	kinds := map[string]int{}
	for _, s := range states {
		kinds[s.Kind]++
		if s.Points <= 0 || s.Error != "" {
			t.Errorf("chart %s (%s) drew %d points, error %q", s.ID, s.Kind, s.Points, s.Error)
		}
	}
	// The sample has a two-axis sweep with repeats, overlaid runs, a counter,
	// a rows series and two runs at the same time: every kind of chart must
	// be there.
	// (A counter is drawn only when it moved, which a short run's may not
	// have done: the line naming the flat ones stands for them then.)
	ctr := "g2-ctr1"
	if !strings.Contains(html, `id="g2-ctr1"`) && strings.Contains(html, `id="g2-counters-flat"`) {
		ctr = "g1-tput"
	}
	for _, id := range []string{"g1-sweep-5f0c2d9e-line", "g1-sweep-5f0c2d9e-bars", "g1-sweep-5f0c2d9e-box", "g1-sweep-5f0c2d9e-xbox",
		"g1-tput", "g1-lat", "g1-pct", "g2-tput", ctr, "g2-pct", "g3-tput", "g3-rows1", "together1-1", "together1-2"} {
		found := false
		for _, s := range states {
			found = found || s.ID == id
		}
		if !found {
			t.Errorf("chart %s missing; have %v", id, states)
		}
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF")) || len(pdf) < 10_000 {
		t.Errorf("PrintToPDF gave %d bytes, not a PDF of the report", len(pdf))
	}

	if *screenshots != "" {
		shoot(t, ctx, *screenshots)
	}
}

// shoot writes the screenshots docs/report.md shows.
func shoot(t *testing.T, ctx context.Context, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The top of the page at a laptop's size: title, summary, the sweep.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 1600), chromedp.Sleep(500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	top, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report-overview.png"), top, 0o644); err != nil {
		t.Fatal(err)
	}
	// The findings of a part with a dip, when a run dipped.
	findings, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const f = Array.from(document.querySelectorAll('.findings')).find(e => e.querySelector('li.f-dip'));
		return '#' + (f ? f.id : 'g1-findings');
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	shots := []struct{ file, sel string }{
		{"report-findings.png", findings},
		{"report-time.png", "#g2-time"},
		{"report-rows.png", "#g3-rows"},
		{"report-latency.png", "#g1-latency"},
	}
	// The throughput over time with the first counter laid over it.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const sel = document.querySelector('select[data-overlay-of="g2-tput"]');
		sel.selectedIndex = 1;
		sel.dispatchEvent(new Event('change'));
		return true;
	})()`)); err != nil {
		t.Fatalf("lay a counter over the throughput: %v", err)
	}
	for _, s := range shots {
		png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(s.sel)))
		if err != nil {
			t.Fatalf("screenshot %s: %v", s.sel, err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.file), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", filepath.Join(dir, s.file))
	}
}

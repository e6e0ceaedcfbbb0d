package htmlreport_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/dbmark/dbmark/internal/report/htmlreport"
)

var screenshots = flag.String("screenshots", "", "write screenshots of a sample report into this directory (make screenshots)")

// chromium finds Debian's chromium (scripts/testenv.sh installs it for make
// test). Without it the test is skipped, except in CI, where it must run.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on PATH: make test installs it (scripts/testenv.sh)")
	}
	t.Skip("no chromium on PATH: apt-get install chromium, or run make test")
	return ""
}

// browser starts a headless Chromium with a fresh profile and no
// background network traffic.
func browser(t *testing.T, width, height int) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	// A safety net, not a measure: a loaded machine may take minutes.
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
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

	var html bytes.Buffer
	if err := htmlreport.Render(&html, runs, htmlreport.Options{Title: "dbmark sample report", Library: lib,
		Generated: time.Now(), Tool: "dbmark test"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, html.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	wantCharts := strings.Count(html.String(), `class="chart"`)

	ctx := browser(t, 1280, 900)
	var mu sync.Mutex
	var problems []string
	note := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			switch ev.Type {
			case runtime.ConsoleAPICalledTypeError, runtime.ConsoleAPICalledTypeWarning, runtime.ConsoleAPICalledTypeAssert:
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				note("console.%s: %s", ev.Type, strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			desc := d.Text
			if d.Exception != nil {
				desc += " " + d.Exception.Description
			}
			note("exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, desc)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				note("log %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			if u := ev.Request.URL; !strings.HasPrefix(u, "file:") && !strings.HasPrefix(u, "data:") {
				note("network request: %s", u)
			}
		}
	})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}

	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate((&url.URL{Scheme: "file", Path: path}).String()),
		chromedp.WaitVisible(chromedp.CSS("body[data-charts]")),
	); err != nil {
		t.Fatalf("open the report in chromium: %v", err)
	}
	states, err := chromedp.Run(ctx, chromedp.Evaluate[[]chartState](`Array.from(document.querySelectorAll('.chart')).map(e => ({
		id: e.id, kind: e.dataset.kind, points: Number(e.dataset.points), error: e.dataset.error || ''}))`))
	if err != nil {
		t.Fatalf("read the charts: %v", err)
	}
	pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF(chromedp.PDFPaper(chromedp.PaperA4), chromedp.PDFPrintBackground()))
	if err != nil {
		t.Fatalf("print to PDF: %v", err)
	}
	mu.Lock()
	for _, p := range problems {
		t.Error(p)
	}
	mu.Unlock()

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
	if !strings.Contains(html.String(), `id="g2-ctr1"`) && strings.Contains(html.String(), `id="g2-counters-flat"`) {
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

// Package testchrome starts a headless Chromium for a test that checks a
// page in a real browser, and gathers what went wrong on the page. Only
// tests import it: the dbmark binary links no test helper
// (cmd/dbmark's architecture test).
package testchrome

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Path is the Chromium to run: Debian's chromium (scripts/testenv.sh
// installs it for make test), or another on PATH. Without one the test is
// skipped, except in CI, where it must run.
func Path(t testing.TB) string {
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

// timeout bounds a test's browser: a safety net, not a measure, since a
// loaded machine may take minutes.
const timeout = 5 * time.Minute

// Start starts a headless Chromium with a fresh profile and no background
// network traffic, its window width by height pixels, and returns the
// context of its first tab. It ends with the test.
func Start(t testing.TB, width, height int) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Path(t)),
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
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// Problems are what went wrong on the pages of a browser being watched.
type Problems struct {
	mu   sync.Mutex
	list []string
}

func (p *Problems) note(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

// Take returns the problems noted since the last Take.
func (p *Problems) Take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.list
	p.list = nil
	return out
}

// Watch notes, from now on, every console error, warning and failed
// assertion, uncaught exception, log entry of level warning or error (a
// refused Content-Security-Policy, a failed load), dialog, and request to
// anywhere but a data: URL or one starting with an allowed prefix (the
// site's origin, "file:"), on the browser of ctx (Start's).
func Watch(t testing.TB, ctx context.Context, allowed ...string) *Problems {
	t.Helper()
	p := &Problems{}
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			switch ev.Type {
			case runtime.ConsoleAPICalledTypeError, runtime.ConsoleAPICalledTypeWarning, runtime.ConsoleAPICalledTypeAssert:
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				p.note("console.%s: %s", ev.Type, strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			desc := d.Text
			if d.Exception != nil {
				desc += " " + d.Exception.Description
			}
			p.note("exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, desc)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				p.note("log %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL)
			}
		case *page.EventJavascriptDialogOpening:
			p.note("a dialog opened: %s", ev.Message)
		case *network.EventRequestWillBeSent:
			if u := ev.Request.URL; !strings.HasPrefix(u, "data:") && !slices.ContainsFunc(allowed, func(p string) bool { return strings.HasPrefix(u, p) }) {
				p.note("request to %s", u)
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
	return p
}

package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/result"
)

func TestReportBadInput(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "usage: dbmark report ID..."},
		{[]string{"report", "4242", "-o", filepath.Join(dir, "r.html")}, `no result or sweep "4242"`},
		{[]string{"report", "no-such-sweep", "-o", filepath.Join(dir, "r.html")}, `no result or sweep "no-such-sweep"`},
		{[]string{"quick", "extra"}, "unknown command"},
		{[]string{"quick", "--time", "soon"}, "not a duration"},
	}
	if _, err := htmlreport.ChartLibrary(); err == nil {
		cases = append(cases, struct {
			args []string
			want string
		}{[]string{"quick", "-o", filepath.Join(dir, "no", "such", "r.html")}, "no such directory"})
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			oneLineError(t, dbmark(t, ctx, c.args...), c.want)
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "r.html")); !os.IsNotExist(err) {
		t.Errorf("a failed report left a file behind: %v", err)
	}
}

// TestQuickThenReport runs the suite briefly on the embedded SQLite, then
// reports its runs again by run IDs and by the suite's ID.
func TestQuickThenReport(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	out := filepath.Join(dir, "quick.html")
	if _, err := htmlreport.ChartLibrary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		// A build before `make assets` must say so before running anything.
		oneLineError(t, dbmark(t, ctx, "quick", "-o", out), "make build")
		oneLineError(t, dbmark(t, ctx, "report", "1"), "make build")
		t.Skip(err)
	}

	// A PG* variable (which a tpcb run without --target follows) does not
	// take quick's steps off the embedded database.
	t.Setenv("PGPORT", "1")
	o := dbmark(t, ctx, "quick", "--time", "1", "--warmup", "0.5", "-o", out)
	if o.code != 0 {
		t.Fatalf("quick: exit %d\nstdout: %s\nstderr: %s", o.code, o.stdout, o.stderr)
	}
	for _, w := range []string{"oltp_read_write", "oltp_point_select", "tpcb", "fileio", "iibench"} {
		if !strings.Contains(o.stdout, "] "+w+": ") {
			t.Errorf("quick did not run %s:\n%s", w, o.stdout)
		}
	}
	m := regexp.MustCompile(`report written to (\S+) \(runs stored as suite (\S+):`).FindStringSubmatch(o.stdout)
	if m == nil || m[1] != out {
		t.Fatalf("quick did not say where the report is:\n%s", o.stdout)
	}
	suite := m[2]
	page := readPage(t, out)
	if !strings.Contains(page, "oltp_read_write") || !strings.Contains(page, "oltp_point_select") {
		t.Error("the report lacks the suite's workloads")
	}

	// Each stored run is linked to the suite.
	e := dbmark(t, ctx, "results", "export", "1", "--format", "json")
	var r result.Result
	if err := json.Unmarshal([]byte(e.stdout), &r); err != nil {
		t.Fatalf("export: %v: %s", err, e.stderr)
	}
	if r.Sweep == nil || r.Sweep.ID != suite || r.Sweep.Cell["step"] != "oltp_read_write" || r.Status != result.StatusOK {
		t.Fatalf("stored run 1: sweep %+v status %s", r.Sweep, r.Status)
	}

	stored := len(regexp.MustCompile(`\(result \d+\)`).FindAllString(o.stdout, -1))
	for _, args := range [][]string{{"1", "2"}, {suite}} {
		path := filepath.Join(dir, "again.html")
		want := 2
		if args[0] == suite {
			want = stored // a suite's ID stands for all of its runs
		}
		o := dbmark(t, ctx, append([]string{"report", "-o", path}, args...)...)
		if o.code != 0 || !strings.Contains(o.stdout, fmt.Sprintf("report of %d run(s) written to %s", want, path)) {
			t.Fatalf("report %v: exit %d: %s %s", args, o.code, o.stdout, o.stderr)
		}
		readPage(t, path)
	}

	// --redact: a report to share has no host name.
	host, err := os.Hostname()
	if err != nil || len(host) < 4 {
		t.Skipf("host name %q: too short to look for", host)
	}
	for _, redacted := range []bool{false, true} {
		path := filepath.Join(dir, fmt.Sprintf("redacted-%v.html", redacted))
		args := []string{"report", "-o", path, "1"}
		if redacted {
			args = append(args, "--redact")
		}
		if o := dbmark(t, ctx, args...); o.code != 0 {
			t.Fatalf("report %v: %s", args, o.stderr)
		}
		if has := strings.Contains(readPage(t, path), host); has == redacted {
			t.Errorf("report %v: host name %q in the page: %v", args, host, has)
		}
	}
}

// readPage checks a written report is a whole, self-contained page.
func readPage(t *testing.T, path string) string {
	t.Helper()
	page := readWholePage(t, path)
	if strings.Count(page, `class="chart"`) < 4 {
		t.Errorf("%s has %d charts", path, strings.Count(page, `class="chart"`))
	}
	return page
}

// readWholePage reads a report and checks it is one whole HTML page that
// loads nothing from outside itself, whatever charts its run allowed.
func readWholePage(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
		t.Fatalf("%s is not a whole HTML page", path)
	}
	markup := regexp.MustCompile(`(?s)<script[^>]*>.*?</script>`).ReplaceAllString(page, "")
	if regexp.MustCompile(`(?i)<(script|link|img|iframe)[^>]+(src|href)=`).MatchString(markup) {
		t.Errorf("%s loads something from outside itself", path)
	}
	return page
}

// Two runs at the same time (point selects while iibench inserts into the
// same database) are drawn on one clock in the report of both.
func TestReportRunsAtTheSameTime(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	if _, err := htmlreport.ChartLibrary(); err != nil {
		t.Skip(err)
	}
	db := filepath.Join(dir, "shared.db")
	tgt := "sqlite://" + db
	if o := dbmark(t, ctx, "prepare", "oltp_point_select", "--target", tgt); o.code != 0 {
		t.Fatalf("prepare: %s", o.stderr)
	}
	var wg sync.WaitGroup
	var ins outcome
	wg.Go(func() { ins = dbmark(t, ctx, "run", "iibench", "--target", tgt, "--time", "3s") })
	time.Sleep(500 * time.Millisecond)
	sel := dbmark(t, ctx, "run", "oltp_point_select", "--target", tgt, "--time", "1s")
	wg.Wait()
	if sel.code != 0 || ins.code != 0 {
		t.Fatalf("runs: exit %d, %d\n%s\n%s", ins.code, sel.code, ins.stderr, sel.stderr)
	}
	out := filepath.Join(dir, "r.html")
	if o := dbmark(t, ctx, "report", "1", "2", "-o", out); o.code != 0 {
		t.Fatalf("report: %s", o.stderr)
	}
	page := readPage(t, out)
	if !strings.Contains(page, "Runs at the same time") || !strings.Contains(page, "2 runs on one clock") {
		t.Error("the report does not draw the runs on one clock")
	}
}

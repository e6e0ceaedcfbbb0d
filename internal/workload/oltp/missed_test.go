package oltp_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/workload/workloadtest"
)

// runCLI runs dbmark with args and returns its exit code, its output and
// the result it wrote.
func runCLI(t *testing.T, args ...string) (int, string, *result.Result) {
	t.Helper()
	js := filepath.Join(t.TempDir(), "run.json")
	var out bytes.Buffer
	code := cli.Main(context.Background(), append(args, "--json", js, "--no-store"), &out, &out)
	res, err := result.ReadFile(js)
	if err != nil {
		t.Fatalf("dbmark %s: exit %d, no result (%v): %s", strings.Join(args, " "), code, err, out.String())
	}
	return code, out.String(), res
}

// TestReadsOfATableThatLostRows deletes rows of sbtest1 behind the
// workload's back: a whole table says nothing, a few rows gone is a
// warning, most gone fails the run with sysbench's exit code.
func TestReadsOfATableThatLostRows(t *testing.T) {
	for _, e := range workloadtest.Engines(t, "dbmark_oltp_missed") {
		t.Run(e.Name, func(t *testing.T) {
			t.Setenv("DBMARK_HOME", t.TempDir())
			t.Setenv("DBMARK_TARGET", "")
			t.Setenv("DBMARK_STORE", "")
			at := []string{"--target", e.URL, "--table-size", "1000"}
			var out bytes.Buffer
			if code := cli.Main(context.Background(), append([]string{"prepare", "oltp_read_write"}, at...), &out, &out); code != 0 {
				t.Fatalf("prepare: exit %d: %s", code, out.String())
			}
			t.Cleanup(func() {
				cli.Main(context.Background(), append([]string{"cleanup", "oltp_read_write"}, at...), &out, &out)
			})
			run := func(test string) (int, string, *result.Result) {
				return runCLI(t, append(append([]string{"run", test}, at...), "--threads", "2", "--events", "1000", "--time", "0", "--rand-type", "uniform")...)
			}

			code, text, res := run("oltp_point_select")
			if code != 0 || res.Status != result.StatusOK {
				t.Fatalf("whole table: exit %d, status %s: %s", code, res.Status, text)
			}
			if c := res.Summary.ReadCheck; c == nil || c.Checked != 1000 || c.Missed != 0 {
				t.Fatalf("whole table: read check %+v, want 1000 checked and none missed", c)
			}
			if strings.Contains(text, "must find rows") || len(res.Summary.Warnings) > 0 {
				t.Fatalf("whole table: a word about missed reads: %s", text)
			}
			for _, p := range res.Series {
				if _, ok := p.Extra["missed_reads_per_s"]; ok {
					t.Fatalf("whole table: a series of missed reads: %+v", p)
				}
			}

			// 5% of the rows gone: a warning, the run still ok. 1,000
			// uniform reads miss none with odds of 0.95^1000, about 5e-23.
			workloadtest.Exec(t, e.URL, "DELETE FROM sbtest1 WHERE id % 20 = 0")
			code, text, res = run("oltp_point_select")
			c := res.Summary.ReadCheck
			if code != 0 || res.Status != result.StatusOK || c == nil || c.Missed == 0 || c.Missed > c.Checked/10 {
				t.Fatalf("5%% deleted: exit %d, status %s, read check %+v: want ok and a few missed: %s", code, res.Status, c, text)
			}
			if len(res.Summary.Warnings) != 1 || !strings.Contains(text, "warning: ") || !strings.Contains(text, "prepare") ||
				!strings.Contains(res.Summary.Warnings[0], "point_select") {
				t.Fatalf("5%% deleted: no warning naming the reads and the hint: %q\n%s", res.Summary.Warnings, text)
			}

			// 95% gone: the run failed, with the count and the hint.
			workloadtest.Exec(t, e.URL, "DELETE FROM sbtest1 WHERE id % 10 <> 0")
			for _, test := range []string{"oltp_point_select", "oltp_read_only"} {
				code, text, res = run(test)
				c = res.Summary.ReadCheck
				if code != 1 || res.Status != result.StatusFailed || c == nil || c.Missed*2 <= c.Checked {
					t.Fatalf("%s, 95%% deleted: exit %d, status %s, read check %+v: want exit 1, failed, most missed: %s", test, code, res.Status, c, text)
				}
				if !strings.Contains(res.Error, "reads that must find rows found none") || !strings.Contains(res.Error, "re-run dbmark") {
					t.Fatalf("%s, 95%% deleted: the error says neither the count nor the hint: %s", test, res.Error)
				}
				if !strings.Contains(text, "run failed: ") {
					t.Fatalf("%s, 95%% deleted: the command does not say the run failed: %s", test, text)
				}
			}
			// oltp_read_only's ranges count too: a range of 100 ids
			// returns 10 rows.
			for _, o := range c.Ops {
				if o.Op == "simple_range" && o.Missed < o.Checked*99/100 {
					t.Errorf("simple ranges over a table with holes: %d of %d short, want (almost) all", o.Missed, o.Checked)
				}
			}

			// Writes that find nothing are no misses, nor are the
			// reads of tables allowed to be empty, which only warn.
			if code, text, _ = run("oltp_delete"); code != 0 {
				t.Fatalf("oltp_delete: exit %d: %s", code, text)
			}
			code, text, res = runCLI(t, append(append([]string{"run", "oltp_point_select"}, at...), "--threads", "2", "--events", "200", "--time", "0", "--allow-empty")...)
			if code != 0 || res.Status != result.StatusOK || len(res.Summary.Warnings) != 1 {
				t.Fatalf("--allow-empty: exit %d, status %s, warnings %q: want ok with a warning: %s", code, res.Status, res.Summary.Warnings, text)
			}
		})
	}
}

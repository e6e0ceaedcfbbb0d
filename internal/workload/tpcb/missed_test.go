package tpcb_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/workload/workloadtest"
)

// TestReadsOfAccountsThatAreGone deletes accounts behind the workload's
// back: the builtins' read of an account then finds nothing. Whole
// tables say nothing, a few accounts gone is a warning, most gone fails
// the run; a custom script is checked only when it reads and draws its
// account as the builtins do.
func TestReadsOfAccountsThatAreGone(t *testing.T) {
	for name, tg := range engines(t) {
		t.Run(name, func(t *testing.T) {
			dir := home(t)
			must(t, "prepare", "tpcb", "--target", tg, "-s", "1", "-q")
			t.Cleanup(func() { dbmark(t, "cleanup", "tpcb", "--target", tg, "-q") })
			run := func(args ...string) (outcome, *result.Result) {
				js := filepath.Join(dir, "run.json")
				os.Remove(js)
				o := dbmark(t, append([]string{"run", "tpcb", "--target", tg, "-c", "2", "-t", "300", "-n", "--json", js, "--no-store"}, args...)...)
				return o, readResult(t, js)
			}

			o, r := run("-S")
			if c := r.Summary.ReadCheck; o.code != 0 || r.Status != result.StatusOK || c == nil || c.Checked != 600 || c.Missed != 0 {
				t.Fatalf("whole tables: exit %d, status %s, read check %+v: want ok, 600 checked, none missed\n%s%s", o.code, r.Status, c, o.stdout, o.stderr)
			}
			if strings.Contains(o.stdout+o.stderr, "must find") {
				t.Fatalf("whole tables: a word about missed reads:\n%s%s", o.stdout, o.stderr)
			}

			// 5% gone: 600 uniform reads miss none with odds of 0.95^600,
			// about 4e-14, and more than 60 (twice the 30 expected) with
			// odds near 1e-8.
			workloadtest.Exec(t, tg, "DELETE FROM pgbench_accounts WHERE aid % 20 = 0")
			o, r = run("-S")
			if c := r.Summary.ReadCheck; o.code != 0 || r.Status != result.StatusOK || c == nil || c.Missed == 0 || c.Missed > c.Checked/10 ||
				len(r.Summary.Warnings) != 1 || !strings.Contains(r.Summary.Warnings[0], "stmt:select-only:2") || !strings.Contains(o.stdout, "warning: ") {
				t.Fatalf("5%% of the accounts gone: exit %d, status %s, read check %+v, warnings %q: want ok and a warning\n%s%s", o.code, r.Status, c, r.Summary.Warnings, o.stdout, o.stderr)
			}

			workloadtest.Exec(t, tg, "DELETE FROM pgbench_accounts WHERE aid % 10 <> 0")
			script := filepath.Join(dir, "select-only.sql")
			if err := os.WriteFile(script, []byte("\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"-S"}, {"-b", "tpcb-like"}, {"-f", script, "-s", "1"}} {
				o, r = run(args...)
				c := r.Summary.ReadCheck
				if o.code != 2 || r.Status != result.StatusFailed || c == nil || c.Missed*2 <= c.Checked {
					t.Fatalf("%v, 95%% of the accounts gone: exit %d, status %s, read check %+v: want exit 2, failed, most missed\n%s%s", args, o.code, r.Status, c, o.stdout, o.stderr)
				}
				if !strings.Contains(r.Error, "reads that must find rows found none") || !strings.Contains(r.Error, "dbmark prepare tpcb -s 1") {
					t.Fatalf("%v: the error names neither the count nor the hint: %s", args, r.Error)
				}
			}

			// A custom read of accounts that may be missing is not checked.
			if err := os.WriteFile(script, []byte("\\set aid random(1, 200000)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if o, r = run("-f", script); o.code != 0 || r.Status != result.StatusOK || r.Summary.ReadCheck != nil {
				t.Fatalf("a custom read of any aid: exit %d, status %s, read check %+v: want ok and no check\n%s%s", o.code, r.Status, r.Summary.ReadCheck, o.stdout, o.stderr)
			}
		})
	}
}

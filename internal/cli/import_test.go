package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Results exported on one machine are imported on another with their
// context, compare and report beside the local ones, and are not stored
// twice; a document that is not a result is refused in one line.
func TestResultsImport(t *testing.T) {
	ctx := context.Background()
	out := t.TempDir()
	home(t) // the machine the results come from
	if o := dbmark(t, ctx, "sweep", "tpcb", "-s", "1", "-c", "1,2", "-t", "20", "--iterations", "1"); o.code != 0 {
		t.Fatalf("sweep: exit %d: %s", o.code, o.stderr)
	}
	run := filepath.Join(out, "run.json")
	sweep := filepath.Join(out, "sweep.json")
	for _, args := range [][]string{{"results", "export", "1", "-o", run}, {"results", "export", "sweep:1", "-o", sweep}} {
		if o := dbmark(t, ctx, args...); o.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, o.code, o.stderr)
		}
	}
	source := dbmark(t, ctx, "results", "show", "2").stdout

	home(t) // this machine: a store of its own, not yet made
	o := dbmark(t, ctx, "results", "import", run)
	if o.code != 0 || !regexp.MustCompile(`(?m)^imported result [0-9a-f]{8} as 1 \(tpcb on sqlite`).MatchString(o.stdout) {
		t.Fatalf("import of a run: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	o = dbmark(t, ctx, "results", "import", sweep)
	if o.code != 0 || !strings.Contains(o.stdout, "imported sweep") || !strings.Contains(o.stdout, "is already stored as 1") ||
		!strings.Contains(o.stdout, "as 2 (tpcb") {
		t.Fatalf("import of the sweep, which holds the run already imported: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if n := strings.Count(dbmark(t, ctx, "results", "list").stdout, "tpcb"); n != 2 {
		t.Errorf("%d runs stored after importing one run and its sweep of two, want 2", n)
	}
	// The imported run is the exported one: the same figures (its paths
	// were redacted by the export).
	got := dbmark(t, ctx, "results", "show", "2").stdout
	for _, re := range []string{`(?m)^ +transactions: .*$`, `(?m)^ +95th percentile: .*$`, `(?m)^threads: .*$`, `(?m)^ +script:tpcb-like .*$`} {
		want := regexp.MustCompile(re).FindString(source)
		if want == "" || !strings.Contains(got, want) {
			t.Errorf("the imported run lacks %q of the exported one:\n%s", want, got)
		}
	}
	if o := dbmark(t, ctx, "results", "show", "sweep:1"); o.code != 0 || !regexp.MustCompile(`(?m)^2 +\d`).MatchString(o.stdout) {
		t.Errorf("the imported sweep: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if o := dbmark(t, ctx, "compare", "1", "2"); o.code != 0 {
		t.Errorf("compare of the imported runs: exit %d: %s", o.code, o.stderr)
	}

	notResult := filepath.Join(out, "x.json")
	if err := os.WriteFile(notResult, []byte(`{"name": "not a result"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(out, "x.sql")
	if err := os.WriteFile(script, []byte("SELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		notResult:                       "not a dbmark result: no schema_version",
		script:                          "not a dbmark result: not a JSON object",
		filepath.Join(out, "none.json"): "no such file or directory",
	} {
		oneLineError(t, dbmark(t, ctx, "results", "import", file), want)
	}
}

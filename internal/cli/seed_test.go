package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/report/htmlreport"
)

// TestSeedKeepsItsDigits follows a seed above 2^63, which a float64 would
// round, through every way a result leaves the store: the --json file,
// results show and export (JSON, redacted or not), a sweep over seeds
// exported as CSV (its table and its cells) and JSON, a report, a
// submission, and a reproduction from the site, which runs it again.
func TestSeedKeepsItsDigits(t *testing.T) {
	const seed, seed2 = "18446744073709551557", "9007199254740993" // 2^64-59; 2^53+1
	dir := home(t)
	ctx := context.Background()
	js := filepath.Join(dir, "r.json")
	run := []string{"run", "oltp_point_select", "--time", "0.3", "--table-size", "100", "--sample-interval", "0"}
	if o := dbmark(t, ctx, append(run, "--seed", seed, "--json", js)...); o.code != 0 || !strings.Contains(o.stdout, "seed: "+seed) {
		t.Fatalf("run: exit %d: %s\n%s", o.code, o.stderr, o.stdout)
	}
	jsonSeed := regexp.MustCompile(`"seed": *` + seed + `\b`)
	if b, _ := os.ReadFile(js); !jsonSeed.Match(b) {
		t.Errorf("--json file: no seed %s", seed)
	}
	for _, args := range [][]string{{"export", "1"}, {"export", "1", "--no-redact"}} {
		if o := dbmark(t, ctx, append([]string{"results"}, args...)...); !jsonSeed.MatchString(o.stdout) {
			t.Errorf("results %v: no seed %s: %s", args, seed, o.stderr)
		}
	}
	if o := dbmark(t, ctx, "results", "show", "1"); !strings.Contains(o.stdout, "seed: "+seed) {
		t.Errorf("results show: no seed %s", seed)
	}
	if o := dbmark(t, ctx, "submit", "1", "--dry-run"); !jsonSeed.MatchString(o.stdout) {
		t.Errorf("submit --dry-run: no seed %s: %s", seed, o.stderr)
	}

	// A sweep over seeds: the CSV tables hold them digit for digit.
	if o := dbmark(t, ctx, append([]string{"sweep"}, append(run[1:], "--seed", seed+","+seed2, "--iterations", "1")...)...); o.code != 0 {
		t.Fatalf("sweep: %s", o.stderr)
	}
	for _, series := range []string{"table", "cells"} {
		o := dbmark(t, ctx, "results", "export", "sweep:1", "--format", "csv", "--series", series)
		if !regexp.MustCompile(`(?m)^`+seed+`,`).MatchString(o.stdout) || !regexp.MustCompile(`(?m)^`+seed2+`,`).MatchString(o.stdout) {
			t.Errorf("sweep CSV %s: the seeds are not whole:\n%s%s", series, o.stdout, o.stderr)
		}
	}
	o := dbmark(t, ctx, "results", "export", "sweep:1")
	if !jsonSeed.MatchString(o.stdout) || !regexp.MustCompile(`"seed": *`+seed2+`\b`).MatchString(o.stdout) {
		t.Errorf("sweep JSON: the seeds are not whole: %s", o.stderr)
	}

	if _, err := htmlreport.ChartLibrary(); err == nil {
		out := filepath.Join(dir, "r.html")
		if o := dbmark(t, ctx, "report", "1", "sweep:1", "-o", out, "--redact"); o.code != 0 {
			t.Fatalf("report: %s", o.stderr)
		}
		page := readPage(t, out)
		if !strings.Contains(page, seed) || !strings.Contains(page, seed2) {
			t.Errorf("the report lacks the seeds")
		}
	}

	// Published, then reproduced from its permalink: the new run uses the
	// same seed.
	url, _ := serve(t, "--store", filepath.Join(t.TempDir(), "site.db"))
	o = dbmark(t, ctx, "submit", "1", "--server", url)
	if o.code != 0 {
		t.Fatalf("submit: %s", o.stderr)
	}
	rep := dbmark(t, ctx, "reproduce", strings.TrimSpace(o.stdout))
	if rep.code != 0 || !strings.Contains(rep.stdout, "seed: "+seed) {
		t.Fatalf("reproduce: exit %d\n%s\n%s", rep.code, rep.stdout, rep.stderr)
	}
	saved := regexp.MustCompile(`result (\d+) saved`).FindStringSubmatch(rep.stdout + rep.stderr)
	if saved == nil {
		t.Fatalf("the reproduction was not saved:\n%s\n%s", rep.stdout, rep.stderr)
	}
	if o := dbmark(t, ctx, "results", "export", saved[1]); !jsonSeed.MatchString(o.stdout) {
		t.Errorf("the reproduction's stored result %s: no seed %s", saved[1], seed)
	}
}

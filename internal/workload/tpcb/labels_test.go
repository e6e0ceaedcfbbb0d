package tpcb_test

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// labelled is a custom script whose statements are named by the comment
// above them, but the last.
const labelled = `\set aid random(1, 100000 * :scale)
\set delta random(-5000, 5000)
-- lookup: read one account
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
-- bump
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;

SELECT count(*) FROM pgbench_branches;
`

// TestCustomScriptStatementsByName runs a custom script whose statements
// are labelled by comments, on SQLite and PostgreSQL: each statement is
// its own operation under its label (the unlabelled one under its
// number), timed under -r, in the per-operation CSV with its text, and a
// sweep's table shows one statement's p95 per cell.
func TestCustomScriptStatementsByName(t *testing.T) {
	for name, tg := range engines(t) {
		if name == "mariadb" {
			continue // the statements are the same on every engine; two suffice here
		}
		t.Run(name, func(t *testing.T) {
			dir := home(t)
			must(t, "prepare", "tpcb", "--target", tg, "-s", "1", "-q")
			t.Cleanup(func() { dbmark(t, "cleanup", "tpcb", "--target", tg, "-q") })
			file := filepath.Join(dir, "lab.sql")
			if err := os.WriteFile(file, []byte(labelled), 0o644); err != nil {
				t.Fatal(err)
			}
			js := filepath.Join(dir, "r.json")
			o := must(t, "run", "tpcb", "--target", tg, "-f", file, "-c", "2", "-t", "15", "-r", "--json", js)
			r := readResult(t, js)
			for _, op := range []string{"stmt:lab.sql:lookup", "stmt:lab.sql:bump", "stmt:lab.sql:5"} {
				if o := opOf(r, op); o == nil || o.Count != 30 || o.Latency == nil {
					t.Errorf("%s: %+v, want 30 timed statements", op, o)
				}
			}
			// pgbench's own report keeps every statement's latency.
			for _, line := range strings.Split(o.stdout, "\n") {
				if strings.Contains(line, "UPDATE pgbench_accounts") && strings.HasPrefix(strings.TrimSpace(line), "0.000 ") {
					t.Errorf("the labelled statement lost its latency in -r's report: %q", line)
				}
			}

			recs, err := csv.NewReader(strings.NewReader(must(t, "results", "export", "1", "--format", "csv", "--series", "ops").stdout)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(strings.Join(recs[0], ","), "op,kind,count,per_s,mib_per_s,mean_ms,p50_ms,") || recs[0][len(recs[0])-1] != "text" {
				t.Fatalf("ops CSV header %v", recs[0])
			}
			found := false
			for _, rec := range recs[1:] {
				if rec[0] == "stmt:lab.sql:bump" {
					found = rec[1] == "write" && rec[2] == "30" && rec[5] != "" && strings.HasPrefix(rec[len(rec)-1], "UPDATE pgbench_accounts")
				}
			}
			if !found {
				t.Errorf("no row for the bump statement with its kind, count, latency and text: %v", recs)
			}

			// A sweep shows the p95 per cell, results show one
			// statement's, and its CSV holds every statement's figures.
			o = must(t, "sweep", "tpcb", "--target", tg, "-f", file, "-c", "1,2", "-t", "10", "-r", "--iterations", "1", "--metric", "p95")
			if !strings.Contains(o.stdout, "p95 (ms): mean") || !strings.Contains(o.stdout, "client  p95 (ms)") {
				t.Errorf("the table does not show the p95:\n%s", o.stdout)
			}
			metric := "op:stmt:lab.sql:lookup:p95"
			if o := must(t, "results", "show", "sweep:1", "--metric", metric); !strings.Contains(o.stdout, "client  "+metric+" (ms)") {
				t.Errorf("results show does not show %s:\n%s", metric, o.stdout)
			}
			recs, err = csv.NewReader(strings.NewReader(must(t, "results", "export", "sweep:1", "--format", "csv", "--series", "cells").stdout)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			for _, col := range []string{"op:stmt:lab.sql:lookup_mean", "op:stmt:lab.sql:bump:p95_mean", "op:stmt:lab.sql:5:mean_cv", "p95_ci95_high"} {
				if !slices.Contains(recs[0], col) {
					t.Errorf("the cells CSV has no %s column: %v", col, recs[0])
				}
			}
			if len(recs) != 3 {
				t.Errorf("%d rows, want a header and 2 cells", len(recs))
			}
		})
	}
}

package cli_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/stats"
)

// TestSweepMetrics checks --metric: a name that is no metric is refused
// before any run; an operation no run measures stops the sweep at its
// first run, which a resume with another --metric finishes; every
// metric is in the CSV, the JSON export and the sweep's stored record,
// with its spread over the repeats.
func TestSweepMetrics(t *testing.T) {
	home(t)
	log := &prepLog{}
	ctx := context.Background()
	args := []string{"sweep", "tiny", "--threads", "1,2", "--events", "30", "--time", "0", "--iterations", "2"}

	oneLineError(t, withTiny(t, ctx, log, append(args, "--metric", "p95th")...), `--metric "p95th": not a metric; valid: headline, p50, p95`)
	if l := dbmark(t, ctx, "results", "list"); strings.Contains(l.stdout, "tiny") {
		t.Fatalf("a run was made for a bad --metric:\n%s", l.stdout)
	}

	oneLineError(t, withTiny(t, ctx, log, append(args, "--metric", "op:nope")...), "op:NAME (the operation's rate), with :p50, :p95, :p99, :p99.9, :mean after it for its latency or MiB/s, for NAME one of count")
	if l := dbmark(t, ctx, "results", "list"); strings.Count(l.stdout, "tiny") != 1 {
		t.Fatalf("the sweep did not stop at its first run:\n%s", l.stdout)
	}
	o := withTiny(t, ctx, log, "sweep", "--resume", "1", "--metric", "op:count:p95")
	if o.code != 0 {
		t.Fatalf("resume: exit %d: %s", o.code, o.stderr)
	}
	if !strings.Contains(o.stdout, "op:count:p95 (ms): mean") || !strings.Contains(o.stdout, "threads  op:count:p95 (ms)") {
		t.Errorf("the resumed sweep's table does not show op:count:p95:\n%s", o.stdout)
	}

	// The table of any metric, again.
	if o := withTiny(t, ctx, log, "results", "show", "sweep:1", "--metric", "p95"); o.code != 0 || !strings.Contains(o.stdout, "threads  p95 (ms)") {
		t.Errorf("results show --metric p95: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	oneLineError(t, withTiny(t, ctx, log, "results", "show", "sweep:1", "--metric", "op:nope"), "for NAME one of count")
	// The headline by its own name.
	if o := withTiny(t, ctx, log, "results", "show", "sweep:1", "--metric", "tps"); o.code != 0 || !strings.Contains(o.stdout, "threads  tps") {
		t.Errorf("results show --metric tps: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}

	// The CSV's columns: the headline's statistics, then each metric's.
	o = withTiny(t, ctx, log, "results", "export", "sweep:1", "--format", "csv", "--series", "cells")
	recs, err := csv.NewReader(strings.NewReader(o.stdout)).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("cells CSV: %v\n%s", err, o.stdout)
	}
	for _, col := range []string{"p50_mean", "p95_mean", "p95_ci95_low", "p95_ci95_high", "p95_cv", "p99_mean", "qps_mean", "errors_mean", "retries_mean", "op:count_mean", "op:count:p95_cv"} {
		if !slices.Contains(recs[0], col) {
			t.Errorf("no %s column: %v", col, recs[0])
		}
	}

	// The JSON export and the stored record: each cell's p95 over its two
	// runs, as the runs have it.
	var doc struct {
		Sweep result.Sweep `json:"sweep"`
		Table []struct {
			Cell    map[string]string    `json:"cell"`
			Metrics []result.SweepMetric `json:"metrics"`
		} `json:"table"`
		Runs []*result.Result `json:"runs"`
	}
	if err := json.Unmarshal([]byte(withTiny(t, ctx, log, "results", "export", "sweep:1").stdout), &doc); err != nil {
		t.Fatal(err)
	}
	p95 := map[string][]float64{}
	for _, r := range doc.Runs {
		v, _ := r.Summary.Latency.Get(95)
		p95[r.Sweep.Cell["threads"]] = append(p95[r.Sweep.Cell["threads"]], v)
	}
	check := func(what string, cell map[string]string, ms []result.SweepMetric) {
		t.Helper()
		want := stats.Describe(p95[cell["threads"]])
		for _, m := range ms {
			if m.Name == "p95" {
				if m.Unit != "ms" || len(m.Values) != 2 || m.Mean == nil || *m.Mean != want.Mean || m.CI95High == nil || *m.CI95High != want.High() {
					t.Errorf("%s: cell %v p95 %+v, the runs' %v", what, cell, m, p95[cell["threads"]])
				}
				return
			}
		}
		t.Errorf("%s: cell %v has no p95: %+v", what, cell, ms)
	}
	if len(doc.Table) != 2 || len(doc.Sweep.Cells) != 2 {
		t.Fatalf("%d cells in the table, %d in the record", len(doc.Table), len(doc.Sweep.Cells))
	}
	for i := range doc.Table {
		check("export", doc.Table[i].Cell, doc.Table[i].Metrics)
		check("record", doc.Sweep.Cells[i].Cell, doc.Sweep.Cells[i].Metrics)
	}
}

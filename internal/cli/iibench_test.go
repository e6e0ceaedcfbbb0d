package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

// iibench from the command line: the threads come from --inserters and
// --query-threads, --max-rows ends the run without --time, the rows and
// their series are in the stored result. --insert-rate makes the run last
// long enough (about 0.25 s) for live lines, and a line for each
// --report-rows mark passed.
func TestIibenchRunIsStored(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	db := "sqlite://" + filepath.Join(dir, "ii.db")
	js := filepath.Join(dir, "ii.json")
	o := dbmark(t, ctx, "run", "iibench", "--target", db, "--inserters", "2", "--query-threads", "1",
		"--max-rows", "5e3", "--rows-per-insert", "100", "--insert-rate", "2e4", "--report-rows", "1000", "--report-interval", "0.05", "--json", js)
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	if !strings.Contains(o.stdout, "rows: ") || !strings.Contains(o.stdout, "Rows (purchases_index)") || !strings.Contains(o.stdout, "rows/s: ") {
		t.Fatalf("no rows in the live lines or the summary:\n%s", o.stdout)
	}
	if !strings.Contains(o.stderr, "[ rows: ") || !strings.Contains(o.stderr, " cum ins/s: ") {
		t.Fatalf("no line as the table passed a --report-rows mark:\n%s", o.stderr)
	}
	r := readResult(t, js)
	if r.Run.Threads != 3 || r.Rows == nil || r.Rows.Inserted != 5000 || len(r.Rows.Series) == 0 || r.Summary.HeadlineUnit != "rows/s" {
		t.Fatalf("threads %d, rows %+v, headline %s", r.Run.Threads, r.Rows, r.Summary.HeadlineUnit)
	}
	// The options stored are the ones the run used: no time limit applied
	// (the rows did), and how dbmark was asked is not among them.
	if o := r.Workload.Options; o["time"] != "0s" || o["help"] != "" || o["no-store"] != "" {
		t.Fatalf("stored options %v", o)
	}
	// The headline is rows inserted: the latency beside it is the inserts',
	// and the chart over time draws rows/s from the series.
	var ins *result.OpSummary
	for i := range r.Summary.Ops {
		if r.Summary.Ops[i].Name == "insert_trx" {
			ins = &r.Summary.Ops[i]
		}
	}
	if ins == nil || fmt.Sprint(r.Summary.LatencyOps) != "[insert_trx]" || r.Summary.Latency.MeanMS != ins.Latency.MeanMS {
		t.Fatalf("latency of %v, mean %.3f ms; the inserts' mean is %v", r.Summary.LatencyOps, r.Summary.Latency.MeanMS, ins)
	}
	if key := r.Summary.HeadlineSeries; key != "rows_per_s" || len(r.Series) == 0 {
		t.Fatalf("headline series %q over %d points", key, len(r.Series))
	}
	if !strings.Contains(o.stdout, "Latency (ms) of insert_trx:") {
		t.Fatalf("the summary does not say whose latency it gives:\n%s", o.stdout)
	}
	if o := dbmark(t, ctx, "results", "show", "1"); o.code != 0 || !strings.Contains(o.stdout, "iibench") {
		t.Fatalf("the stored result: exit %d %s %s", o.code, o.stdout, o.stderr)
	}
	// The table is there now: a second run is refused until told what to do.
	oneLineError(t, dbmark(t, ctx, "run", "iibench", "--target", db, "--max-rows", "6000", "--no-store"), "add --resume")
	if o := dbmark(t, ctx, "run", "iibench", "--target", db, "--max-rows", "6000", "--resume", "--json", js); o.code != 0 {
		t.Fatalf("resume: exit %d: %s", o.code, o.stderr)
	}
	if r := readResult(t, js); !r.Rows.Resumed || r.Rows.ResumedFrom != 5000 || r.Rows.Inserted != 1000 {
		t.Fatalf("resumed rows %+v", r.Rows)
	}
}

// Bad iibench options: one line, exit 1, and nothing created.
func TestIibenchRefusesBadInputBeforeCreatingAnything(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	db := filepath.Join(dir, "never.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--partitions", "4", "--max-rows", "1000"}, "SQLite has no table partitioning"},
		{[]string{"--secondary-indexes", "4"}, "--secondary-indexes 4"},
		{[]string{"--rows-per-insert", "0"}, "--rows-per-insert 0"},
		{[]string{"--inserters", "2", "--threads", "3"}, "--threads 3 conflicts"},
		{[]string{"--max-rows", "lots"}, "not a whole number of rows"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := append([]string{"run", "iibench", "--target", "sqlite://" + db}, c.args...)
			oneLineError(t, dbmark(t, ctx, args...), c.want)
			if _, err := os.Stat(db); err == nil {
				t.Fatalf("%s was created before refusing", db)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the data directory holds %d entries: a refused run created something", len(entries))
	}
}

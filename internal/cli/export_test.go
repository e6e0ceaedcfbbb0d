package cli_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

// readCSV parses an export, failing the test on a malformed one.
func readCSV(t *testing.T, o outcome) [][]string {
	t.Helper()
	if o.code != 0 {
		t.Fatalf("export: exit %d: %s", o.code, o.stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(o.stdout)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("not CSV (%v):\n%s", err, o.stdout)
	}
	return recs
}

func column(t *testing.T, recs [][]string, name string) int {
	t.Helper()
	i := slices.Index(recs[0], name)
	if i < 0 {
		t.Fatalf("no column %q in %v", name, recs[0])
	}
	return i
}

func float(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return f
}

// TestExportEverySeries runs the insert benchmark on the embedded SQLite
// with counters sampled, and checks that each series the report draws
// comes out as its own CSV with the stored figures: the intervals (with
// the workload's own rows/s), the series keyed by rows, the counters.
func TestExportEverySeries(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	js := filepath.Join(dir, "ii.json")
	o := dbmark(t, ctx, "run", "iibench", "--target", "sqlite://"+filepath.Join(dir, "ii.db"), "--inserters", "2", "--query-threads", "1",
		"--max-rows", "5e3", "--rows-per-insert", "100", "--insert-rate", "2e4", "--report-rows", "1000", "--report-interval", "0.05",
		"--sample-interval", "0.05", "--json", js)
	if o.code != 0 {
		t.Fatalf("run: exit %d: %s", o.code, o.stderr)
	}
	r := readResult(t, js)
	if r.Rows == nil || len(r.Rows.Series) < 2 || r.Counters == nil || len(r.Counters.Series) == 0 {
		t.Fatalf("the run recorded rows %+v, counters %+v", r.Rows, r.Counters)
	}

	// The intervals, with the figures the workload adds to each.
	recs := readCSV(t, dbmark(t, ctx, "results", "export", "1", "--format", "csv"))
	if len(recs) != len(r.Series)+1 || !strings.HasPrefix(strings.Join(recs[0], ","), "t_s,duration_s,warmup,tps") {
		t.Fatalf("%d interval rows for %d intervals, head %v", len(recs)-1, len(r.Series), recs[0])
	}
	c := column(t, recs, r.Summary.HeadlineSeries)
	for i, iv := range r.Series {
		if want, ok := iv.Extra[r.Summary.HeadlineSeries]; ok && float(t, recs[i+1][c]) != want {
			t.Errorf("interval %d: %s %s, stored %v", i, r.Summary.HeadlineSeries, recs[i+1][c], want)
		}
	}

	// The rate against rows.
	recs = readCSV(t, dbmark(t, ctx, "results", "export", "1", "--format", "csv", "--series", "rows"))
	if len(recs) != len(r.Rows.Series)+1 {
		t.Fatalf("%d rows marks for %d stored", len(recs)-1, len(r.Rows.Series))
	}
	rows, rate, p := column(t, recs, "rows"), column(t, recs, "inserts_per_s"), column(t, recs, "insert_p99_ms")
	for i, pt := range r.Rows.Series {
		lat, _ := (&result.Latency{Percentiles: pt.InsertLatency}).Get(99)
		if float(t, recs[i+1][rows]) != float64(pt.Rows) || float(t, recs[i+1][rate]) != pt.InsertsPerS || recs[i+1][p] != "" && float(t, recs[i+1][p]) != lat {
			t.Errorf("row mark %d: %v, stored %+v", i, recs[i+1], pt)
		}
	}

	// The counters, one column each, at their own times.
	recs = readCSV(t, dbmark(t, ctx, "results", "export", "1", "--format", "csv", "--series", "counters"))
	if len(recs[0]) != len(r.Counters.Series)+1 {
		t.Fatalf("%d columns for %d counters", len(recs[0]), len(r.Counters.Series))
	}
	// Sources sampled an instant apart may print the same time on rows of
	// their own: a point is found on any row of its time.
	at := map[float64][][]string{}
	for _, rec := range recs[1:] {
		k := float(t, rec[0])
		at[k] = append(at[k], rec)
	}
	for i, cs := range r.Counters.Series {
		name := cs.Name
		if cs.Unit != "" {
			name += " (" + cs.Unit + ")"
		}
		if recs[0][i+1] != name {
			t.Fatalf("column %d is %q, want %q", i+1, recs[0][i+1], name)
		}
		for _, pt := range cs.Points {
			found := false
			for _, rec := range at[pt[0]] {
				found = found || rec[i+1] != "" && float(t, rec[i+1]) == pt[1]
			}
			if !found {
				t.Errorf("%s at %v: %v, stored %v", name, pt[0], at[pt[0]], pt[1])
			}
		}
	}

	// Every table at once, one file each.
	out := filepath.Join(dir, "csv")
	o = dbmark(t, ctx, "results", "export", "1", "--out-dir", out)
	if o.code != 0 {
		t.Fatalf("--out-dir: %s", o.stderr)
	}
	for _, s := range []string{"intervals", "rows", "counters"} {
		p := filepath.Join(out, "run-1-"+s+".csv")
		if b, err := os.ReadFile(p); err != nil || !strings.Contains(o.stdout, p+"\n") || len(b) == 0 {
			t.Errorf("%s: %v, named: %v", p, err, strings.Contains(o.stdout, p))
		}
	}

	// What cannot be exported says so, in one line.
	if o := dbmark(t, ctx, "run", "oltp_point_select", "--time", "1", "--table-size", "100", "--sample-interval", "0"); o.code != 0 {
		t.Fatalf("run: %s", o.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"2", "--format", "csv", "--series", "rows"}, "result 2 has no rows series"},
		{[]string{"2", "--format", "csv", "--series", "counters"}, "it has: intervals"},
		{[]string{"1", "--format", "csv", "--series", "latency"}, "intervals, rows, counters"},
		{[]string{"1", "--series", "rows"}, "add --format csv"},
		{[]string{"1", "--out-dir", out, "-o", "x.csv"}, "give one of them"},
		{[]string{"sweep:1"}, "no sweep"},
	} {
		oneLineError(t, dbmark(t, ctx, append([]string{"results", "export"}, c.args...)...), c.want)
	}
}

// TestExportSweep checks a sweep read back: results show prints the table
// dbmark sweep printed (pgbench's clients x transactions), export gives it
// as CSV with the stored headlines, as JSON with its runs, and every file.
func TestExportSweep(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	o := dbmark(t, ctx, "sweep", "tpcb", "-s", "1", "-c", "1,2", "-t", "10:20:10", "--iterations", "1")
	if o.code != 0 {
		t.Fatalf("sweep: exit %d: %s", o.code, o.stderr)
	}
	printed := o.stdout

	show := dbmark(t, ctx, "results", "show", "sweep:1")
	if show.code != 0 || !strings.HasPrefix(show.stdout, printed) {
		t.Fatalf("results show sweep:1 does not start with the table the sweep printed:\n%s\nprinted:\n%s", show.stdout, printed)
	}
	if n := len(regexp.MustCompile(`(?m)^\d+ +client=\d transactions=\d+ +1 +[\d.]+ tps +ok$`).FindAllString(show.stdout, -1)); n != 4 {
		t.Errorf("%d runs listed, want 4:\n%s", n, show.stdout)
	}

	var doc struct {
		Sweep result.Sweep `json:"sweep"`
		Table []struct {
			Cell   map[string]string `json:"cell"`
			Values []float64         `json:"values"`
			Mean   *float64          `json:"mean"`
		} `json:"table"`
		Runs []*result.Result `json:"runs"`
	}
	o = dbmark(t, ctx, "results", "export", "sweep:1")
	if err := json.Unmarshal([]byte(o.stdout), &doc); err != nil || o.code != 0 {
		t.Fatalf("export sweep:1 as JSON: %v %s", err, o.stderr)
	}
	if len(doc.Runs) != 4 || len(doc.Table) != 4 || !slices.Contains(doc.Sweep.Command, "10:20:10") {
		t.Fatalf("JSON: %d runs, %d cells, command %v", len(doc.Runs), len(doc.Table), doc.Sweep.Command)
	}
	headline := map[string]float64{}
	for _, r := range doc.Runs {
		headline[r.Sweep.Cell["client"]+" "+r.Sweep.Cell["transactions"]] = r.Summary.Headline
	}
	for _, c := range doc.Table {
		if h := headline[c.Cell["client"]+" "+c.Cell["transactions"]]; c.Mean == nil || *c.Mean != h || len(c.Values) != 1 {
			t.Errorf("cell %v: mean %v, values %v; its run's headline %v", c.Cell, c.Mean, c.Values, h)
		}
	}

	recs := readCSV(t, dbmark(t, ctx, "results", "export", "sweep:1", "--format", "csv"))
	if strings.Join(recs[0], ",") != "client,transactions=10,transactions=20" || len(recs) != 3 {
		t.Fatalf("the table as CSV:\n%v", recs)
	}
	for _, rec := range recs[1:] {
		for j, tx := range []string{"10", "20"} {
			if float(t, rec[j+1]) != headline[rec[0]+" "+tx] {
				t.Errorf("client %s transactions %s: %s, its run's headline %v", rec[0], tx, rec[j+1], headline[rec[0]+" "+tx])
			}
		}
	}
	recs = readCSV(t, dbmark(t, ctx, "results", "export", "sweep:1", "--format", "csv", "--series", "cells"))
	if !strings.HasPrefix(strings.Join(recs[0], ","), "client,transactions,metric,n,mean") || len(recs) != 5 {
		t.Fatalf("the cells as CSV:\n%v", recs)
	}
	oneLineError(t, dbmark(t, ctx, "results", "export", "sweep:1", "--format", "csv", "--series", "intervals"), "--out-dir")

	out := filepath.Join(dir, "csv")
	o = dbmark(t, ctx, "results", "export", "sweep:1", "--out-dir", out)
	if o.code != 0 {
		t.Fatalf("--out-dir: %s", o.stderr)
	}
	for _, f := range []string{"sweep-1-table.csv", "sweep-1-cells.csv", "run-1-intervals.csv", "run-4-intervals.csv"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil || !strings.Contains(o.stdout, f) {
			t.Errorf("%s: %v\n%s", f, err, o.stdout)
		}
	}
}

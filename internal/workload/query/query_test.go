package query_test

import (
	"context"
	"encoding/csv"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/workload/workloadtest"
)

// dbmark runs the command in this process with its own data directory
// (the store included) and returns its exit code, output and errors.
func dbmark(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	code := cli.Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// home gives the test a data directory and no environment's target.
func home(t *testing.T) {
	t.Setenv("DBMARK_HOME", t.TempDir())
	t.Setenv("DBMARK_TARGET", "")
	t.Setenv("DBMARK_STORE", "")
}

// file writes a query file and returns its path.
func file(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "q.sql")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readResult reads the document --json wrote.
func readResult(t *testing.T, path string) *result.Result {
	t.Helper()
	r, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func byLabel(t *testing.T, r *result.Result, label string) result.QueryResult {
	t.Helper()
	if r.Queries == nil {
		t.Fatalf("the result has no queries section")
	}
	for _, q := range r.Queries.List {
		if q.Label == label {
			return q
		}
	}
	t.Fatalf("no query %s in the result", label)
	return result.QueryResult{}
}

// storedRuns is how many runs the store holds.
func storedRuns(t *testing.T) int {
	t.Helper()
	code, out, errs := dbmark(t, "results", "list")
	if code != 0 {
		t.Fatalf("results list: exit %d: %s%s", code, out, errs)
	}
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			if _, err := strconv.Atoi(f[0]); err == nil {
				n++
			}
		}
	}
	return n
}

func TestSuiteOnEveryEngine(t *testing.T) {
	for _, e := range workloadtest.Engines(t, "dbmark_wl_query") {
		t.Run(e.Name, func(t *testing.T) {
			home(t)
			at := []string{"--target", e.URL}
			if code, out, errs := dbmark(t, append([]string{"prepare", "query", "--setup", "testdata/setup.sql"}, at...)...); code != 0 {
				t.Fatalf("prepare: exit %d: %s%s", code, out, errs)
			}
			js := filepath.Join(t.TempDir(), "r.json")
			code, out, errs := dbmark(t, append([]string{"run", "query", "--file", "testdata/suite.sql", "--iterations", "3", "--explain", "--json", js}, at...)...)
			if code != 0 {
				t.Fatalf("run: exit %d: %s%s", code, out, errs)
			}
			r := readResult(t, js)
			if r.Status != result.StatusOK || r.Workload.Better != "lower" || r.Summary.HeadlineUnit != "suite seconds" {
				t.Fatalf("status %s (%s), better %s, unit %q", r.Status, r.Error, r.Workload.Better, r.Summary.HeadlineUnit)
			}
			q := r.Queries
			if len(q.List) != 3 || q.Iterations != 3 || q.Streams != 1 || q.TotalS <= 0 || q.GeomeanS <= 0 || r.Summary.Headline != q.TotalS {
				t.Fatalf("queries %+v, headline %v", q, r.Summary.Headline)
			}
			var sum float64
			for _, one := range q.List {
				if len(one.Runs) != 3 || one.ColdS <= 0 || one.HotS <= 0 || one.MedianS <= 0 || one.Errors != 0 {
					t.Errorf("%s: %+v", one.Label, one)
				}
				if one.HotS > one.MedianS && one.HotS > one.ColdS {
					t.Errorf("%s: hot %v is above both the median and the cold time", one.Label, one.HotS)
				}
				if one.Plan == "" || strings.HasPrefix(one.Plan, "no plan") {
					t.Errorf("%s: --explain kept no plan: %q", one.Label, one.Plan)
				}
				for _, rn := range one.Runs {
					sum += rn.S
				}
			}
			// The suite's time holds every run, and little else.
			if q.TotalS < sum || q.TotalS > sum+2 {
				t.Errorf("the suite took %v s, its runs %v s", q.TotalS, sum)
			}
			for label, rows := range map[string]int64{"count": 1, "scan": 4, "touch": 2} {
				if got := byLabel(t, r, label).Rows; got != rows {
					t.Errorf("%s: %d rows, want %d", label, got, rows)
				}
			}
			if b := byLabel(t, r, "scan").Runs[0].Bytes; b != int64(4+8+len("a;bcde")) {
				t.Errorf("scan: %d bytes, want %d", b, 4+8+len("a;bcde"))
			}
			for _, want := range []string{"Queries (ms;", "count", "scan", "touch", "suite:"} {
				if !strings.Contains(out, want) {
					t.Errorf("the summary lacks %q:\n%s", want, out)
				}
			}
			if code, out, errs := dbmark(t, append([]string{"cleanup", "query", "--teardown", "testdata/teardown.sql"}, at...)...); code != 0 {
				t.Fatalf("cleanup: exit %d: %s%s", code, out, errs)
			}
		})
	}
}

// A query that fails in the middle of the file is recorded, the others
// are run and measured, and the run is kept as failed, naming it.
func TestFailingQueryInTheMiddle(t *testing.T) {
	for _, e := range workloadtest.Engines(t, "dbmark_wl_query") {
		t.Run(e.Name, func(t *testing.T) {
			home(t)
			js := filepath.Join(t.TempDir(), "r.json")
			f := file(t, "-- before\nSELECT 1;\n-- broken\nSELECT nosuchcolumn FROM nosuchtable;\n-- after\nSELECT 2;\n")
			code, out, errs := dbmark(t, "run", "query", "--target", e.URL, "--file", f, "--iterations", "2", "--json", js)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (run failed): %s%s", code, out, errs)
			}
			if !strings.Contains(errs, "1 of 3 queries failed: broken") || strings.Count(strings.TrimSpace(errs), "\n") > 3 {
				t.Errorf("the error does not name the query: %s", errs)
			}
			r := readResult(t, js)
			if r.Status != result.StatusFailed {
				t.Errorf("status %s, want failed", r.Status)
			}
			if b := byLabel(t, r, "broken"); b.Errors != 2 || b.Runs[0].Kind != result.QueryError || b.Error == "" {
				t.Errorf("broken: %+v", b)
			}
			for _, l := range []string{"before", "after"} {
				if q := byLabel(t, r, l); q.Errors != 0 || q.MedianS <= 0 || q.Rows != 1 {
					t.Errorf("%s: %+v", l, q)
				}
			}
			if storedRuns(t) != 1 {
				t.Errorf("the failed run was not kept")
			}
		})
	}
}

// sleepSQL is a statement that runs for about 10 s on each engine, and
// active finds it still running on the server.
var sleepSQL = map[string]string{
	"postgres": "SELECT pg_sleep(10)",
	"mariadb":  "SELECT SLEEP(10)",
	"sqlite":   "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i < 1000000000) SELECT count(*) FROM r",
}

// --query-timeout has the engine end the query: it is recorded as a
// timeout within about the timeout, and the server runs it no more.
func TestQueryTimeoutCancelsOnTheServer(t *testing.T) {
	for _, e := range workloadtest.Engines(t, "dbmark_wl_query") {
		t.Run(e.Name, func(t *testing.T) {
			home(t)
			js := filepath.Join(t.TempDir(), "r.json")
			f := file(t, "-- slow\n"+sleepSQL[e.Name]+";\n-- quick\nSELECT 1;\n")
			start := time.Now()
			code, out, errs := dbmark(t, "run", "query", "--target", e.URL, "--file", f, "--iterations", "1", "--query-timeout", "500ms", "--json", js, "--no-store")
			took := time.Since(start)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (a query failed): %s%s", code, out, errs)
			}
			if took > 8*time.Second {
				t.Errorf("the run took %v: the 10 s query was not ended at its 500 ms timeout", took)
			}
			r := readResult(t, js)
			slow := byLabel(t, r, "slow")
			if slow.Runs[0].Kind != result.QueryTimeout || slow.Runs[0].S < 0.4 {
				t.Errorf("slow: %+v, want a timeout after about 0.5 s", slow.Runs[0])
			}
			if q := byLabel(t, r, "quick"); q.Errors != 0 {
				t.Errorf("the query after the timeout failed: %+v", q)
			}
			// The server ends a cancelled statement at its next check,
			// which a loaded machine delays: a few seconds, not its 10.
			n := stillRunning(t, e)
			for deadline := time.Now().Add(3 * time.Second); n != 0 && time.Now().Before(deadline); n = stillRunning(t, e) {
				time.Sleep(100 * time.Millisecond)
			}
			if n != 0 {
				t.Errorf("the server still runs the timed-out query (%d sessions) 3 s after its timeout", n)
			}
		})
	}
}

// stillRunning counts the server's sessions running a sleep of 10 s.
func stillRunning(t *testing.T, e workloadtest.Engine) int {
	t.Helper()
	ctx := context.Background()
	var n int
	switch e.Name {
	case "postgres":
		c, err := pgx.Connect(ctx, e.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query = 'SELECT pg_sleep(10)'").Scan(&n); err != nil {
			t.Fatal(err)
		}
	case "mariadb":
		db := workloadtest.OpenMariaDB(t, e.URL)
		defer db.Close()
		if err := db.QueryRow("SELECT count(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(10)'").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// A query returning ten million rows runs in flat memory: the rows are
// counted as they stream by, never kept.
func TestTenMillionRowsInFlatMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("ten million rows")
	}
	series := map[string]string{
		"postgres": "SELECT i FROM generate_series(1, 10000000) AS g(i)",
		"sqlite":   "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i < 10000000) SELECT i FROM r",
	}
	for _, e := range workloadtest.Engines(t, "dbmark_wl_query") {
		sql, ok := series[e.Name]
		if !ok {
			continue // one server engine is enough for the memory's sake
		}
		t.Run(e.Name, func(t *testing.T) {
			home(t)
			js := filepath.Join(t.TempDir(), "r.json")
			f := file(t, "-- big\n"+sql+";\n")
			runtime.GC()
			peak := watchHeap(t)
			code, out, errs := dbmark(t, "run", "query", "--target", e.URL, "--file", f, "--iterations", "1", "--json", js, "--no-store")
			grew := peak()
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, out, errs)
			}
			q := byLabel(t, readResult(t, js), "big")
			if q.Rows != 10_000_000 || q.Runs[0].Bytes < 60_000_000 {
				t.Errorf("%d rows, %d bytes: want ten million rows of their digits", q.Rows, q.Runs[0].Bytes)
			}
			t.Logf("the heap grew by %d KiB at most", grew>>10)
			// Kept, the rows would take hundreds of MiB.
			if grew > 48<<20 {
				t.Errorf("the heap grew by %d MiB while the query ran", grew>>20)
			}
		})
	}
}

// watchHeap samples the live heap until the returned function is called,
// which returns its peak above the heap at the start.
func watchHeap(t *testing.T) func() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(s); return s[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tk := time.NewTicker(10 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				if v := read(); v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		if p := peak.Load(); p > base {
			return p - base
		}
		return 0
	}
}

// The CSV export of a query suite is Shard-Query's pivot: a row per
// iteration of each stream, a column per query.
func TestPivotCSV(t *testing.T) {
	home(t)
	db := "sqlite://" + filepath.Join(t.TempDir(), "pivot.db")
	f := file(t, "-- a\nSELECT 1;\n-- b\nSELECT 2;\n-- c\nSELECT nosuch;\n")
	if code, out, errs := dbmark(t, "run", "query", "--target", db, "--file", f, "--iterations", "3", "--streams", "2"); code != 2 {
		t.Fatalf("exit %d, want 2 (c fails): %s%s", code, out, errs)
	}
	code, out, errs := dbmark(t, "results", "export", "1", "--format", "csv")
	if code != 0 {
		t.Fatalf("export: exit %d: %s%s", code, out, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 7 || strings.Join(rows[0], ",") != "stream,iteration,a,b,c" {
		t.Fatalf("%d rows, header %q: want 6 rows under stream,iteration,a,b,c:\n%s", len(rows), rows[0], out)
	}
	for i, row := range rows[1:] {
		if row[0] != strconv.Itoa(i/3) || row[1] != strconv.Itoa(i%3+1) {
			t.Errorf("row %d: stream %s iteration %s", i+1, row[0], row[1])
		}
		for _, cell := range row[2:4] {
			if v, err := strconv.ParseFloat(cell, 64); err != nil || v <= 0 {
				t.Errorf("row %d: %q is not a time", i+1, cell)
			}
		}
		if row[4] != "" {
			t.Errorf("row %d: the failed query has a time %q", i+1, row[4])
		}
	}
}

// Bad input is one line, before anything is measured, and nothing is kept.
func TestBadInput(t *testing.T) {
	home(t)
	db := "sqlite://" + filepath.Join(t.TempDir(), "bad.db")
	good := file(t, "-- a\nSELECT 1;\n-- b\nSELECT 2;\n")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"--file", filepath.Join(t.TempDir(), "none.sql")}, "no such file"},
		{"no file", nil, "--file is required"},
		{"empty file", []string{"--file", file(t, "-- nothing here\n")}, "no statement in the file"},
		{"unclosed string", []string{"--file", file(t, "SELECT 'x;\n")}, "line 1: the string opened here is not closed"},
		{"unknown label", []string{"--file", good, "--only", "a,zz"}, "--only zz: no query has that label (the labels are a, b)"},
		{"threads and streams", []string{"--file", good, "--streams", "2", "--threads", "3"}, "--threads 3 conflicts with --streams 2"},
		{"events", []string{"--file", good, "--events", "10"}, "--events: a query suite ends"},
		{"no iterations", []string{"--file", good, "--iterations", "0"}, "--iterations 0: must be at least 1"},
		{"cold streams", []string{"--file", good, "--cold", "--streams", "2"}, "--cold with --streams 2"},
		{"restart an embedded engine", []string{"--file", good, "--cold", "--restart-cmd", "true"}, "no server to restart"},
		{"restart without cold", []string{"--file", good, "--restart-cmd", "true"}, "add --cold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := dbmark(t, append([]string{"run", "query", "--target", db}, c.args...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1: %s%s", code, out, errs)
			}
			if !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 || strings.Contains(errs, "goroutine") {
				t.Errorf("want one line with %q, got:\n%s", c.want, errs)
			}
		})
	}
	if n := storedRuns(t); n != 0 {
		t.Errorf("%d runs kept after bad input", n)
	}
}

// More streams than the server lets connect are refused in one line
// before anything is measured, and nothing is kept.
func TestStreamsAboveTheConnectionLimit(t *testing.T) {
	raw := os.Getenv("DBMARK_TEST_POSTGRES")
	if raw == "" {
		t.Skip("DBMARK_TEST_POSTGRES is not set")
	}
	home(t)
	pg := workloadtest.PostgresDB(t, raw, "dbmark_wl_query")
	ctx := context.Background()
	c, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	// A role of its own whose limit binds (a superuser's does not).
	_, _ = c.Exec(ctx, "DROP ROLE IF EXISTS dbmark_query_limited")
	if _, err := c.Exec(ctx, "CREATE ROLE dbmark_query_limited LOGIN PASSWORD 'limited' CONNECTION LIMIT 3"); err != nil {
		t.Skipf("cannot create a role with a connection limit: %v", err)
	}
	defer func() { _, _ = c.Exec(ctx, "DROP ROLE IF EXISTS dbmark_query_limited") }()
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("dbmark_query_limited", "limited")
	pg = u.String()
	f := file(t, "SELECT 1;\n")
	code, out, errs := dbmark(t, "run", "query", "--target", pg, "--file", f, "--streams", "6")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s%s", code, out, errs)
	}
	if !strings.Contains(errs, "--streams 6: the server refused connection") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("want one line naming --streams, got:\n%s", errs)
	}
	if n := storedRuns(t); n != 0 {
		t.Errorf("%d runs kept", n)
	}
}

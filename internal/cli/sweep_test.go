package cli_test

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// tiny is a workload of this test: one table of --rows rows (a prepare
// option), events that count them, and a note along any numeric axis. It
// runs on the real embedded SQLite, and logs its prepares.
type tiny struct {
	rows, clients int
	log           *prepLog
}

type prepLog struct {
	mu   sync.Mutex
	rows []int
}

func (w *tiny) Meta() workload.Meta {
	return workload.Meta{Name: "tiny", Description: "count a small table", Version: "1", Headline: "tps", Better: "higher"}
}

func (w *tiny) Flags(fs *pflag.FlagSet) {
	fs.IntVar(&w.rows, "rows", 10, "rows in the table")
	fs.IntVarP(&w.clients, "clients", "c", 1, "a pgbench-style short option that does nothing")
}

func (w *tiny) Spec() workload.Spec {
	return workload.Spec{
		Meta: w.Meta(), Flags: w.Flags, Load: w.Load, PrepareOptions: []string{"rows"},
		Hooks: workload.Hooks{Prepare: w.Prepare, Cleanup: w.Cleanup, Prepared: w.Prepared, AnnotateSweep: w.AnnotateSweep},
	}
}

func (w *tiny) AnnotateSweep(axis string, xs, ys []float64) []string {
	return []string{fmt.Sprintf("note on %s: %d points from %g to %g", axis, len(xs), xs[0], xs[len(xs)-1])}
}

func (w *tiny) exec(ctx context.Context, env workload.Env, sqls ...string) error {
	c, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, s := range sqls {
		if err := c.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

func (w *tiny) Prepare(ctx context.Context, env workload.Env) error {
	w.log.mu.Lock()
	w.log.rows = append(w.log.rows, w.rows)
	w.log.mu.Unlock()
	return w.exec(ctx, env, "CREATE TABLE tiny (n INTEGER)",
		fmt.Sprintf("INSERT INTO tiny WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < %d) SELECT x FROM c", w.rows))
}

func (w *tiny) Cleanup(ctx context.Context, env workload.Env) error {
	return w.exec(ctx, env, "DROP TABLE IF EXISTS tiny")
}

func (w *tiny) Prepared(ctx context.Context, env workload.Env) error {
	c, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	n, _, err := c.QueryRow(ctx, "SELECT count(*) FROM tiny")
	if err != nil {
		return err
	}
	if n != fmt.Sprint(w.rows) {
		return fmt.Errorf("tiny has %s rows, not %d", n, w.rows)
	}
	return nil
}

type tinyWorker struct {
	conn target.Conn
	h    *metrics.Handle
}

func (t *tinyWorker) Event(ctx context.Context, _ bool) (metrics.Op, error) {
	start := time.Now()
	_, _, err := t.conn.QueryRow(ctx, "SELECT count(*) FROM tiny")
	t.h.Record(0, time.Since(start))
	return 0, err
}

func (t *tinyWorker) Close() error { return nil }

func (w *tiny) Load(ctx context.Context, env workload.Env) (*workload.Load, error) {
	return &workload.Load{
		Ops: []metrics.OpSpec{{Name: "count", Kind: metrics.Event}},
		NewWorker: func(_ context.Context, seat workload.Seat) (workload.Worker, error) {
			conn, h := seat.Conn, seat.H
			return &tinyWorker{conn: conn, h: h}, nil
		},
	}, nil
}

// withTiny runs the CLI with the tiny workload registered.
func withTiny(t *testing.T, ctx context.Context, log *prepLog, args ...string) outcome {
	t.Helper()
	var out, errb strings.Builder
	code := cli.Main(ctx, args, &out, &errb, func(a *cli.App) {
		a.Workloads.Register("tiny", func() workload.Spec { return (&tiny{log: log}).Spec() })
	})
	return outcome{code, out.String(), errb.String()}
}

func TestSweepTableAndStore(t *testing.T) {
	home(t)
	log := &prepLog{}
	ctx := context.Background()
	o := withTiny(t, ctx, log, "sweep", "tiny", "--threads", "1,2", "-c", "1:3:2", "--events", "50", "--time", "0", "--iterations", "2")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	// Rows are threads, columns the short option's axis (the last).
	for _, want := range []string{"sweep 1 (", "tps: mean ± 95% confidence", "threads  clients=1", "clients=3", "± "} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, o.stdout)
		}
	}
	if n := strings.Count(o.stderr, " #"); n != 8 {
		t.Errorf("%d runs reported, want 2 cells x 2 x 2 = 8:\n%s", n, o.stderr)
	}
	// Every run stored and linked to the sweep.
	l := dbmark(t, ctx, "results", "list")
	if n := strings.Count(l.stdout, "tiny"); n != 8 {
		t.Errorf("%d runs stored, want 8:\n%s", n, l.stdout)
	}

	// CSV: one row per cell, every statistic; rows and columns swapped in text.
	o = withTiny(t, ctx, log, "sweep", "tiny", "--threads", "1,2", "--events", "20", "--time", "0", "--iterations", "3", "--format", "csv")
	if o.code != 0 {
		t.Fatalf("csv: exit %d: %s", o.code, o.stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(o.stdout)).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("csv %q: %v", o.stdout, err)
	}
	if got := strings.Join(recs[0], ","); !strings.HasPrefix(got, "threads,metric,n,mean,median,stddev,cv,ci95_low,ci95_high,outliers,values,p50_mean,") {
		t.Errorf("csv header %s", got)
	}
	if recs[1][0] != "1" || recs[1][1] != "tps" || recs[1][2] != "3" || recs[2][0] != "2" {
		t.Errorf("csv rows %q", recs[1:])
	}

	// A report of the first sweep, named as compare names it, has its 8 runs.
	if _, err := htmlreport.ChartLibrary(); err == nil {
		path := filepath.Join(t.TempDir(), "sweep.html")
		o = withTiny(t, ctx, log, "report", "sweep:1", "-o", path)
		if o.code != 0 || !strings.Contains(o.stdout, "report of 8 run(s)") {
			t.Errorf("report sweep:1: exit %d: %s %s", o.code, o.stdout, o.stderr)
		}
		oneLineError(t, withTiny(t, ctx, log, "report", "sweep:9", "-o", path), `no sweep "9"`)
	}
}

func TestSweepPrepareOptionsAndNotes(t *testing.T) {
	dir := home(t)
	log := &prepLog{}
	tgt := "sqlite://" + filepath.Join(dir, "tiny.db")
	o := withTiny(t, context.Background(), log, "sweep", "tiny", "--target", tgt, "--rows", "10,20", "--threads", "1,2",
		"--events", "20", "--time", "0", "--iterations", "1", "--zip", "rows,threads")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	// Zipped: two cells, each a new value of the prepare option.
	if fmt.Sprint(log.rows) != "[10 20]" {
		t.Errorf("prepared with rows %v, want [10 20]", log.rows)
	}
	if !strings.Contains(o.stdout, "note on rows: 2 points from 10 to 20") || !strings.Contains(o.stdout, "note on threads") {
		t.Errorf("no notes from the workload:\n%s", o.stdout)
	}
}

func TestRunWithAListIsASweep(t *testing.T) {
	home(t)
	o := withTiny(t, context.Background(), &prepLog{}, "run", "tiny", "--threads", "1,2", "--events", "20", "--time", "0")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	if !strings.Contains(o.stdout, "threads  tps") || strings.Count(o.stderr, " #1:") != 2 {
		t.Errorf("not a sweep of one run per cell:\nstdout %s\nstderr %s", o.stdout, o.stderr)
	}
}

func TestSweepInterruptAndResume(t *testing.T) {
	home(t)
	log := &prepLog{}
	ctx, cancel := context.WithCancel(context.Background())
	// Each run lasts 400ms: the cancel lands in the second cell.
	time.AfterFunc(1200*time.Millisecond, cancel)
	o := withTiny(t, ctx, log, "sweep", "tiny", "--threads", "1,2,3", "--time", "0.4", "--iterations", "2")
	if o.code != 130 {
		t.Fatalf("exit %d, want 130: %s", o.code, o.stderr)
	}
	if !strings.Contains(o.stderr, "dbmark sweep --resume 1") {
		t.Fatalf("no word on how to resume: %s", o.stderr)
	}
	before := strings.Count(dbmark(t, context.Background(), "results", "list", "--status", "ok").stdout, "tiny")
	if before < 1 || before >= 6 {
		t.Fatalf("%d finished runs kept, want some but not all", before)
	}
	o = withTiny(t, context.Background(), log, "sweep", "--resume", "1")
	if o.code != 0 {
		t.Fatalf("resume: exit %d: %s", o.code, o.stderr)
	}
	after := strings.Count(dbmark(t, context.Background(), "results", "list", "--status", "ok").stdout, "tiny")
	if after != 6 {
		t.Errorf("%d finished runs after the resume, want 6 (3 cells x 2)", after)
	}
	if ran := strings.Count(o.stderr, " #"); ran != 6-before {
		t.Errorf("resume ran %d runs, want the %d missing:\n%s", ran, 6-before, o.stderr)
	}
	if !strings.Contains(o.stdout, "done") || strings.Contains(o.stdout, " - ") {
		t.Errorf("table after the resume:\n%s", o.stdout)
	}
}

func TestSweepAndCompareBadInput(t *testing.T) {
	home(t)
	ctx := context.Background()
	// Two runs of different workloads to compare.
	for _, w := range []string{"oltp_point_select", "oltp_read_only"} {
		if o := dbmark(t, ctx, "run", w, "--table-size", "100", "--events", "10", "--time", "0"); o.code != 0 {
			t.Fatalf("run %s: %s", w, o.stderr)
		}
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "tiny", "--threads", ","}, "has no values"},
		{[]string{"sweep", "tiny", "--threads", "1,,2"}, "empty value"},
		{[]string{"sweep", "tiny", "--threads", "8:1:1"}, "FROM is greater than TO"},
		{[]string{"sweep", "tiny", "--threads", "1:8:0"}, "STEP must be positive"},
		{[]string{"sweep", "tiny", "--threads", "1:8:-2"}, "STEP must be positive"},
		{[]string{"sweep", "tiny", "--threads", "1,x"}, `invalid value "1,x" for option --threads: x: not a whole number`},
		{[]string{"sweep", "tiny", "--threads", "1,2", "-c", "1,2,3", "--zip", "threads,clients"}, "--threads has 2 values and --clients has 3"},
		{[]string{"sweep", "tiny", "--threads", "1,2", "--zip", "threads,rows"}, "--rows is not swept"},
		{[]string{"sweep", "tiny", "--iterations", "0"}, "--iterations 0"},
		{[]string{"sweep", "tiny", "--until-cv", "3%", "--max-iterations", "1"}, "--max-iterations 1"},
		{[]string{"sweep", "tiny", "--threads", "1,2", "--rows-by", "mode"}, "--rows-by mode: not a swept option"},
		{[]string{"sweep", "tiny", "--format", "xml"}, "--format"},
		{[]string{"sweep", "tiny", "--json", "x.json"}, "--json"},
		{[]string{"sweep", "nosuch"}, `unknown workload "nosuch"`},
		{[]string{"sweep"}, "needs a workload"},
		{[]string{"sweep", "--resume", "42"}, `no sweep "42"`},
		{[]string{"run", "tiny", "--threads", "4:2:1"}, "FROM is greater than TO"},
		{[]string{"compare", "1"}, "needs two"},
		{[]string{"compare", "1", "2"}, "compare runs of the same workload"},
		{[]string{"compare", "1", "999"}, `no result "999"`},
		{[]string{"compare", "1", "sweep:7"}, `no sweep "7"`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			oneLineError(t, withTiny(t, ctx, &prepLog{}, c.args...), c.want)
		})
	}
}

func TestCompareRuns(t *testing.T) {
	home(t)
	ctx := context.Background()
	for _, threads := range []string{"1", "2"} {
		if o := dbmark(t, ctx, "run", "oltp_point_select", "--table-size", "100", "--time", "5", "--report-interval", "0.5", "--threads", threads); o.code != 0 {
			t.Fatalf("run: %s", o.stderr)
		}
	}
	o := dbmark(t, ctx, "compare", "1", "2")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	for _, want := range []string{"batch means", "tps", "B/A", "what differed", "run.threads"} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("compare lacks %q:\n%s", want, o.stdout)
		}
	}
}

// pgbench's table of clients x transactions per client, on the embedded
// SQLite: -c and -t become axes under their long names.
func TestSweepTpcbClientsByTransactions(t *testing.T) {
	home(t)
	ctx := context.Background()
	o := dbmark(t, ctx, "sweep", "tpcb", "-s", "1", "-c", "1,2", "-t", "10:20:10", "--iterations", "1")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	for _, want := range []string{`sweep 1 \(`, `(?m)^client +transactions=10 +transactions=20$`, `(?m)^2 +\d`} {
		if !regexp.MustCompile(want).MatchString(o.stdout) {
			t.Errorf("table lacks %s:\n%s", want, o.stdout)
		}
	}
	if n := strings.Count(dbmark(t, ctx, "results", "list").stdout, "tpcb"); n != 4 {
		t.Errorf("%d tpcb runs stored, want 2 x 2", n)
	}
}

// A sweep of tpcb with a custom script and a builtin: each cell runs both
// scripts, as a run given the same -f and -b does (the list's brackets
// once reached the values: "no builtin script found for name [select-only]").
func TestSweepTpcbScripts(t *testing.T) {
	home(t)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "mine.sql")
	if err := os.WriteFile(file, []byte("\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if o := dbmark(t, ctx, "prepare", "tpcb", "-s", "1"); o.code != 0 {
		t.Fatalf("prepare: exit %d: %s", o.code, o.stderr)
	}
	o := dbmark(t, ctx, "sweep", "tpcb", "-f", file+"@2", "-b", "select-only", "-c", "1,2", "-t", "20", "--iterations", "1")
	if o.code != 0 {
		t.Fatalf("sweep: exit %d: %s", o.code, o.stderr)
	}
	for id := 1; id <= 2; id++ {
		show := dbmark(t, ctx, "results", "show", strconv.Itoa(id))
		for _, op := range []string{"script:select-only", "script:mine.sql"} {
			if !strings.Contains(show.stdout, op) {
				t.Errorf("run %d lacks %s:\n%s", id, op, show.stdout)
			}
		}
	}
}

// A sweep of file I/O modes: seqwr, cut short by its limit, leaves the
// files short, and the seqrd runs after it find them prepared again.
func TestSweepFileioModes(t *testing.T) {
	home(t)
	ctx := context.Background()
	dir := t.TempDir()
	opts := []string{"--dir", dir, "--file-num", "1", "--file-total-size", "4M"}
	if o := dbmark(t, ctx, append([]string{"prepare", "fileio"}, opts...)...); o.code != 0 {
		t.Fatalf("prepare: %d %s", o.code, o.stderr)
	}
	o := dbmark(t, ctx, append([]string{"sweep", "fileio", "--mode", "seqwr,seqrd", "--threads", "1,2", "--events", "8", "--time", "0",
		"--iterations", "1"}, opts...)...)
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	// Modes down, threads across; the seqrd runs after seqwr ones ran.
	for _, want := range []string{`(?m)^mode +threads=1 +threads=2$`, `(?m)^seqwr +\d`, `(?m)^seqrd +\d`} {
		if !regexp.MustCompile(want).MatchString(o.stdout) {
			t.Errorf("table lacks %s:\n%s", want, o.stdout)
		}
	}
	if n := strings.Count(dbmark(t, ctx, "results", "list").stdout, "fileio"); n != 4 {
		t.Errorf("%d fileio runs stored, want 2 x 2", n)
	}
	// A single run is not repaired: the seqwr above left the files short.
	if o := dbmark(t, ctx, append([]string{"run", "fileio", "--mode", "seqwr", "--events", "8"}, opts...)...); o.code != 0 {
		t.Fatalf("seqwr: %s", o.stderr)
	}
	oneLineError(t, dbmark(t, ctx, append([]string{"run", "fileio", "--mode", "seqrd", "--events", "8"}, opts...)...), "cut short")
}

// A prepare option given once is an axis of one: a file I/O sweep with a
// single --file-total-size makes its files as one over several sizes does.
func TestSweepWithOneSizePrepares(t *testing.T) {
	home(t)
	ctx := context.Background()
	dir := t.TempDir()
	o := dbmark(t, ctx, "sweep", "fileio", "--dir", dir, "--file-num", "1", "--file-total-size", "4M", "--mode", "seqrd",
		"--threads", "1,2", "--events", "8", "--time", "0", "--iterations", "1")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	if n := strings.Count(dbmark(t, ctx, "results", "list").stdout, "fileio"); n != 2 {
		t.Errorf("%d fileio runs stored, want 2", n)
	}
}

// A sweep over an OLTP table option prepares each cell's tables afresh: the
// 300-row cell runs on 300 rows, not on the 100 the cell before made.
func TestSweepOLTPTableSizePrepares(t *testing.T) {
	home(t)
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "sb.db")
	target := "sqlite://" + db
	if o := dbmark(t, ctx, "prepare", "oltp_point_select", "--target", target, "--table-size", "100"); o.code != 0 {
		t.Fatalf("prepare: exit %d: %s", o.code, o.stderr)
	}
	o := dbmark(t, ctx, "sweep", "oltp_point_select", "--target", target, "--table-size", "100,300",
		"--events", "20", "--time", "0", "--iterations", "1")
	if o.code != 0 {
		t.Fatalf("sweep: exit %d: %s", o.code, o.stderr)
	}
	if strings.Contains(o.stderr, "smaller than --table-size") {
		t.Errorf("a cell ran on a table smaller than its --table-size:\n%s", o.stderr)
	}
	c, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	if err := c.QueryRow("SELECT COUNT(*) FROM sbtest1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 300 {
		t.Errorf("after the sweep sbtest1 has %d rows: the last cell (--table-size 300) ran on another table", n)
	}
}

// A sweep's cell sets --threads over a deprecated --num-threads given once
// for the whole sweep: the cell's value is the run's, with no conflict.
func TestSweepCellOverDeprecatedSpelling(t *testing.T) {
	home(t)
	ctx := context.Background()
	dir := t.TempDir()
	opts := []string{"--dir", dir, "--file-num", "1", "--file-total-size", "1M"}
	if o := dbmark(t, ctx, append([]string{"prepare", "fileio"}, opts...)...); o.code != 0 {
		t.Fatalf("prepare: %d %s", o.code, o.stderr)
	}
	o := dbmark(t, ctx, append([]string{"sweep", "fileio", "--mode", "rndrd", "--threads", "1,2", "--num-threads", "4", "--events", "8", "--time", "0",
		"--iterations", "1"}, opts...)...)
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	for _, want := range []string{`(?m)^threads +iops$`, `(?m)^1 +\d`, `(?m)^2 +\d`} {
		if !regexp.MustCompile(want).MatchString(o.stdout) {
			t.Errorf("table lacks %s:\n%s", want, o.stdout)
		}
	}
}

// A sweep over tpcb's scale prepares each cell at its own scale, as a
// sweep over OLTP's table size does: -s is among what pgbench -i builds.
func TestSweepTpcbScalePrepares(t *testing.T) {
	home(t)
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "tpcb.db")
	target := "sqlite://" + db
	if o := dbmark(t, ctx, "prepare", "tpcb", "--target", target, "-s", "1"); o.code != 0 {
		t.Fatalf("prepare: exit %d: %s", o.code, o.stderr)
	}
	if o := dbmark(t, ctx, "sweep", "tpcb", "--target", target, "-s", "1,2", "-t", "10", "--iterations", "1"); o.code != 0 {
		t.Fatalf("sweep: exit %d: %s", o.code, o.stderr)
	}
	c, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	if err := c.QueryRow("SELECT COUNT(*) FROM pgbench_branches").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("after the sweep pgbench_branches has %d rows: the last cell (-s 2) ran on scale %d", n, n)
	}
}

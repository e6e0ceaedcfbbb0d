package tpcb_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/workload/workloadtest"
)

// testDB is the database these tests use on the servers, created here
// when missing, so no other test's tables are touched.
const testDB = "dbmark_tpcb"

type outcome struct {
	code           int
	stdout, stderr string
}

func dbmark(t *testing.T, args ...string) outcome {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), args, &out, &errb)
	return outcome{code, out.String(), errb.String()}
}

func must(t *testing.T, args ...string) outcome {
	t.Helper()
	o := dbmark(t, args...)
	if o.code != 0 {
		t.Fatalf("dbmark %s: exit %d\n%s%s", strings.Join(args, " "), o.code, o.stdout, o.stderr)
	}
	return o
}

func home(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("DBMARK_HOME", dir)
	t.Setenv("DBMARK_TARGET", "")
	t.Setenv("DBMARK_STORE", "")
	return dir
}

// engines are the targets every engine test runs on: SQLite always, the
// servers when the test environment is up.
func engines(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range workloadtest.Engines(t, testDB) {
		out[e.Name] = e.URL
	}
	return out
}

func readResult(t *testing.T, path string) *result.Result {
	t.Helper()
	r, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func opCount(r *result.Result, name string) int64 {
	if o := opOf(r, name); o != nil {
		return o.Count
	}
	return -1
}

func opOf(r *result.Result, name string) *result.OpSummary {
	for i, o := range r.Summary.Ops {
		if o.Name == name {
			return &r.Summary.Ops[i]
		}
	}
	return nil
}

// TestBuiltinsOnEveryEngine prepares each engine, runs each builtin with
// -t and checks the exact counts and the TPC-B balances after each.
func TestBuiltinsOnEveryEngine(t *testing.T) {
	for name, tg := range engines(t) {
		t.Run(name, func(t *testing.T) {
			dir := home(t)
			must(t, "prepare", "tpcb", "--target", tg, "-s", "1", "-q")
			t.Cleanup(func() { dbmark(t, "cleanup", "tpcb", "--target", tg, "-q") })
			if o := must(t, "check", "tpcb", "--target", tg); !strings.Contains(o.stdout, "accounts 0, tellers 0, branches 0, history 0") {
				t.Fatalf("check after prepare: %s", o.stdout)
			}
			for i, b := range []string{"tpcb-like", "select-only", "simple-update"} {
				js := filepath.Join(dir, b+".json")
				args := []string{"run", "tpcb", "--target", tg, "-b", b, "-c", "3", "-t", "17", "--json", js, "--no-store", "-q"}
				if i > 0 {
					args = append(args, "-n") // keep the history: its deltas are part of the check
				}
				o := must(t, args...)
				r := readResult(t, js)
				if r.Summary.Events != 51 || opCount(r, "script:"+b) != 51 {
					t.Fatalf("%s: %d transactions (script op %d), want 3 x 17 = 51", b, r.Summary.Events, opCount(r, "script:"+b))
				}
				if !strings.Contains(o.stdout, "number of transactions actually processed: 51/51") {
					t.Fatalf("%s: no pgbench summary line in:\n%s", b, o.stdout)
				}
				if b == "tpcb-like" {
					// Without -r the statements are counted, not timed.
					q := r.Summary.Queries
					if q.Read != 51 || q.Write != 4*51 || q.Other != 2*51 {
						t.Fatalf("tpcb-like queries %+v, want 51 reads, 204 writes, 102 others", q)
					}
					if o := opOf(r, "stmt:tpcb-like:6"); o == nil || o.Count != 51 || o.Latency != nil {
						t.Fatalf("tpcb-like's first UPDATE without -r: %+v, want 51 and no latency", o)
					}
				}
				if r.Summary.Extra["scale"] != "1" {
					t.Fatalf("scale in the result: %q", r.Summary.Extra["scale"])
				}
				c := dbmark(t, "check", "tpcb", "--target", tg)
				if b == "simple-update" {
					// simple-update leaves tellers and branches behind.
					if c.code != 2 || !strings.Contains(c.stderr, "balances disagree") {
						t.Fatalf("check after simple-update: exit %d: %s", c.code, c.stderr)
					}
					continue
				}
				if c.code != 0 {
					t.Fatalf("check after %s: exit %d: %s", b, c.code, c.stderr)
				}
			}
		})
	}
}

// TestWeightsPickScriptsInProportion runs a 3:1 mix and checks the share
// of each script, and that script numbers in the -l log follow the order
// given on the command line.
func TestWeightsPickScriptsInProportion(t *testing.T) {
	dir := home(t)
	tg := "sqlite://" + filepath.Join(dir, "w.db")
	must(t, "prepare", "tpcb", "--target", tg, "-q")
	js := filepath.Join(dir, "r.json")
	prefix := filepath.Join(dir, "mix")
	must(t, "run", "tpcb", "--target", tg, "-b", "select-only@3", "-N", "-c", "2", "-t", "1000",
		"-l", "--log-prefix", prefix, "--json", js, "--no-store", "-q", "--seed", "42")
	r := readResult(t, js)
	sel, upd := opCount(r, "script:select-only"), opCount(r, "script:simple-update")
	if sel+upd != 2000 {
		t.Fatalf("select-only %d + simple-update %d != 2000", sel, upd)
	}
	if share := float64(sel) / 2000; share < 0.70 || share > 0.80 {
		t.Fatalf("select-only share %.3f, want about 0.75", share)
	}
	logs, _ := filepath.Glob(prefix + ".*")
	var scriptNo [2]int
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Fields(line)
			switch f[3] {
			case "0":
				scriptNo[0]++
			case "1":
				scriptNo[1]++
			default:
				t.Fatalf("script_no %q in %q", f[3], line)
			}
		}
	}
	if int64(scriptNo[0]) != sel || int64(scriptNo[1]) != upd {
		t.Fatalf("log script numbers %v, result %d/%d", scriptNo, sel, upd)
	}
}

var (
	txLine  = regexp.MustCompile(`^(\d+) (\d+) (\d+|failed|skipped) ([0-9]+) (\d{10}) (\d{1,6})( \d+)?( \d+)?$`)
	aggLine = regexp.MustCompile(`^\d{10}( \d+){14}$`)
)

// TestLogFormats checks -l's per-transaction lines and files, and the
// aggregate lines of --aggregate-interval, in pgbench's formats.
func TestLogFormats(t *testing.T) {
	dir := home(t)
	tg := "sqlite://" + filepath.Join(dir, "l.db")
	must(t, "prepare", "tpcb", "--target", tg, "-q")
	prefix := filepath.Join(dir, "tx")
	must(t, "run", "tpcb", "--target", tg, "-S", "-c", "3", "-j", "2", "-t", "4", "-l", "--log-prefix", prefix, "--no-store", "-q")
	files, _ := filepath.Glob(prefix + ".*")
	if len(files) != 2 {
		t.Fatalf("files %v: want one per -j thread", files)
	}
	total := 0
	for _, f := range files {
		b, _ := os.ReadFile(f)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		seen := map[string]int{}
		for _, l := range lines {
			m := txLine.FindStringSubmatch(l)
			if m == nil || m[7] != "" {
				t.Fatalf("%s: line %q is not pgbench's format", f, l)
			}
			seen[m[1]]++
			if want := fmt.Sprint(seen[m[1]]); m[2] != want {
				t.Fatalf("%s: transaction_no %s, want %s (numbered from 1 per client)", f, m[2], want)
			}
		}
		total += len(lines)
		// pgbench gives thread 0 clients 0 and 1, thread 1 client 2.
		if strings.Count(f, ".") == 1 && len(seen) != 2 || strings.Count(f, ".") == 2 && len(seen) != 1 {
			t.Fatalf("%s: clients %v", f, seen)
		}
	}
	if total != 12 {
		t.Fatalf("%d log lines, want 12", total)
	}

	prefix = filepath.Join(dir, "agg")
	must(t, "run", "tpcb", "--target", tg, "-S", "-c", "2", "-T", "2", "-l", "--aggregate-interval", "1",
		"--log-prefix", prefix, "--no-store", "-q")
	files, _ = filepath.Glob(prefix + ".*")
	if len(files) != 1 {
		t.Fatalf("aggregate files %v", files)
	}
	b, _ := os.ReadFile(files[0])
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 || len(lines) > 3 {
		t.Fatalf("%d aggregate lines for 2 s at 1 s each:\n%s", len(lines), b)
	}
	for _, l := range lines {
		if !aggLine.MatchString(l) {
			t.Fatalf("aggregate line %q is not pgbench's format", l)
		}
	}
}

// TestShortFlags drives a run with pgbench's short flags.
func TestShortFlags(t *testing.T) {
	dir := home(t)
	tg := "sqlite://" + filepath.Join(dir, "s.db")
	must(t, "prepare", "tpcb", "--target", tg, "-s", "2", "-q")
	js := filepath.Join(dir, "r.json")
	o := must(t, "run", "tpcb", "--target", tg, "-c", "2", "-j", "2", "-t", "9", "-M", "simple", "-P", "1",
		"-r", "-n", "-D", "x=1", "--random-seed", "7", "--json", js, "--no-store")
	r := readResult(t, js)
	if r.Summary.Events != 18 || r.Run.Threads != 2 || r.Seed != 7 {
		t.Fatalf("events %d threads %d seed %d, want 18, 2, 7", r.Summary.Events, r.Run.Threads, r.Seed)
	}
	for _, want := range []string{"scaling factor: 2", "number of clients: 2", "number of threads: 2",
		"statement latencies in milliseconds:", `\set aid random(1, 100000 * :scale)`} {
		if !strings.Contains(o.stdout, want) {
			t.Fatalf("no %q in:\n%s", want, o.stdout)
		}
	}
	if opCount(r, "meta:tpcb-like:1") != 18 || opCount(r, "stmt:tpcb-like:6") != 18 {
		t.Fatalf("-r ops: meta %d stmt %d", opCount(r, "meta:tpcb-like:1"), opCount(r, "stmt:tpcb-like:6"))
	}
	if o := opOf(r, "stmt:tpcb-like:6"); o.Latency == nil || o.Latency.MeanMS <= 0 {
		t.Fatalf("-r: the first UPDATE has no latency: %+v", o)
	}
	// -C: a new connection per transaction, statements prepared again on each.
	must(t, "run", "tpcb", "--target", tg, "-C", "-c", "2", "-t", "5", "-n", "--json", js, "--no-store", "-q")
	if r := readResult(t, js); r.Summary.Events != 10 {
		t.Fatalf("-C: %d transactions, want 10", r.Summary.Events)
	}
	// -T with the pgbench short flag and the time/rand seed forms.
	must(t, "run", "tpcb", "--target", tg, "-S", "-c", "1", "-T", "1", "-R", "200", "-L", "50", "--random-seed", "time", "-n", "--no-store", "-q")
	// --progress-timestamp: pgbench's progress lines on standard error,
	// stamped with the Unix time, and --exit-on-abort accepted.
	before := time.Now().Unix()
	o = must(t, "run", "tpcb", "--target", tg, "-S", "-c", "1", "-T", "2", "-P", "1", "--progress-timestamp", "--exit-on-abort", "-n", "--no-store")
	m := regexp.MustCompile(`(?m)^progress: (\d{10})\.\d{3} s, \d+\.\d tps, lat \d+\.\d{3} ms stddev \d+\.\d{3}, 0 failed$`).FindStringSubmatch(o.stderr)
	if m == nil {
		t.Fatalf("no stamped progress line in:\n%s", o.stderr)
	}
	if at, _ := strconv.ParseInt(m[1], 10, 64); at < before || at > time.Now().Unix() {
		t.Fatalf("live line stamped %d, not within the run (from %d)", at, before)
	}
}

// TestShowScript: -b list and --show-script print and exit without
// touching any target (pgbench's output is compared in internal/compat).
func TestShowScript(t *testing.T) {
	home(t)
	o := must(t, "run", "tpcb", "--target", "postgres://nobody@127.0.0.1:1/none", "-b", "list")
	for _, name := range []string{"tpcb-like: <builtin: TPC-B (sort of)>", "simple-update: <builtin: simple update>", "select-only: <builtin: select only>"} {
		if !strings.Contains(o.stdout, name) {
			t.Fatalf("-b list: no %q in:\n%s", name, o.stdout)
		}
	}
	for _, verb := range []string{"run", "sweep", "prepare"} {
		o = must(t, verb, "tpcb", "--show-script", "simple")
		if !strings.HasPrefix(o.stdout, "-- simple-update: <builtin: simple update>\n\\set aid random(1, 100000 * :scale)\n") {
			t.Fatalf("%s --show-script simple:\n%s", verb, o.stdout)
		}
	}
}

// oneLineError checks the bad-input contract: exit 1, the last line on
// stderr naming the problem, no stack trace.
func oneLineError(t *testing.T, o outcome, want string) {
	t.Helper()
	if o.code != 1 {
		t.Fatalf("exit %d, want 1; stderr: %s", o.code, o.stderr)
	}
	lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "dbmark: ") || !strings.Contains(last, want) {
		t.Fatalf("stderr %q: want a last line naming %q", o.stderr, want)
	}
	if strings.Contains(o.stderr, "goroutine ") || strings.Contains(o.stderr, "panic") {
		t.Fatalf("stack trace: %s", o.stderr)
	}
}

func TestBadInput(t *testing.T) {
	dir := home(t)
	tg := "sqlite://" + filepath.Join(dir, "b.db")
	bad := filepath.Join(dir, "bad.sql")
	os.WriteFile(bad, []byte("\\set x 1 +\nSELECT 1;\n"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "tpcb", "-t", "5", "-T", "5"}, "either a number of transactions (-t) or a duration (-T)"},
		{[]string{"run", "tpcb", "-t", "0"}, "invalid number of transactions"},
		{[]string{"run", "tpcb", "-b", "nosuch"}, `no builtin script found for name "nosuch"`},
		{[]string{"run", "tpcb", "-b", "s"}, "ambiguous builtin name"},
		{[]string{"run", "tpcb", "-b", "select-only@x"}, "invalid weight specification"},
		{[]string{"run", "tpcb", "-b", "select-only@-1"}, "weight specification out of range"},
		{[]string{"run", "tpcb", "-b", "select-only@0"}, "total script weight must not be zero"},
		{[]string{"run", "tpcb", "-f", filepath.Join(dir, "none.sql")}, "no such file"},
		{[]string{"run", "tpcb", "-f", bad}, bad + ":1:"},
		{[]string{"run", "tpcb", "-D", "novalue"}, "invalid variable definition"},
		{[]string{"run", "tpcb", "-j", "0"}, "-j 0"},
		{[]string{"run", "tpcb", "--sampling-rate", "0.5"}, "only when logging transactions (-l)"},
		{[]string{"run", "tpcb", "--aggregate-interval", "1"}, "only when logging transactions (-l)"},
		{[]string{"run", "tpcb", "-l", "--aggregate-interval", "2", "-T", "3"}, "multiple"},
		{[]string{"run", "tpcb", "--max-tries", "0", "-t", "3"}, "--max-tries 0"},
		{[]string{"run", "tpcb", "-c", "0"}, "--threads 0"},
		{[]string{"run", "tpcb", "-F", "90"}, "-F/--fillfactor: options of the tables' initialization"},
		{[]string{"run", "tpcb", "--progress=0"}, "-P/--progress 0s: must be at least 1 second"},
		{[]string{"run", "tpcb", "-R", "0"}, "-R/--rate 0: invalid rate limit"},
		{[]string{"run", "tpcb", "--progress-timestamp"}, "--progress-timestamp is allowed only under -P/--progress"},
		{[]string{"run", "tpcb", "--random-seed", "abc"}, `invalid value "abc" for option --random-seed`},
		{[]string{"run", "tpcb", "-t", "x"}, `invalid value "x" for option -t: not a whole number`},
		{[]string{"prepare", "tpcb", "--target", tg, "-S", "-t", "5"}, "-S/--select-only, -t/--transactions: options of a run"},
		{[]string{"run", "tpcb", "--target", tg}, `run "dbmark prepare tpcb"`},
		{[]string{"prepare", "tpcb", "--target", tg, "-I", "dtx"}, `unrecognized initialization step 'x'`},
		{[]string{"prepare", "tpcb", "--target", tg, "--partition-method", "hash"}, "requires --partitions"},
		{[]string{"prepare", "tpcb", "--target", tg, "-F", "5"}, "--fillfactor 5"},
		{[]string{"prepare", "tpcb", "--target", tg, "--partitions", "2"}, "SQLite has no partitioned tables"},
		{[]string{"prepare", "tpcb", "--target", tg, "--foreign-keys"}, "SQLite cannot add a foreign key"},
		{[]string{"prepare", "tpcb", "--target", tg, "--unlogged-tables"}, "SQLite has no unlogged tables"},
		{[]string{"prepare", "tpcb", "--target", tg, "--tablespace", "fast"}, `--tablespace "fast": tablespaces are PostgreSQL's; on SQLite leave it out`},
		{[]string{"prepare", "tpcb", "--target", tg, "--index-tablespace", "fast"}, `--index-tablespace "fast"`},
		{[]string{"run", "tpcb", "--show-script", "nosuch"}, `--show-script: no builtin script found for name "nosuch"`},
		{[]string{"check", "tpcb", "--target", tg}, `run "dbmark prepare tpcb"`},
		{[]string{"check", "oltp_read_only"}, "has no check"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := c.args
			if c.args[0] == "run" && !strings.Contains(strings.Join(args, " "), "--target") {
				args = append(args, "--target", tg)
			}
			oneLineError(t, dbmark(t, args...), c.want)
		})
	}
	// A syntax error shows the line with a caret under the spot.
	o := dbmark(t, "run", "tpcb", "--target", tg, "-f", bad)
	if !strings.Contains(o.stderr, "\\set x 1 +\n") || !strings.Contains(o.stderr, "^ error found here") {
		t.Fatalf("no caret detail in: %s", o.stderr)
	}
	if o := dbmark(t, "prepare", "tpcb", "--target", "sqlite://"+filepath.Join(dir, "nothing.db"), "--partitions", "2"); o.code != 1 {
		t.Fatalf("exit %d", o.code)
	}
	if raw := os.Getenv("DBMARK_TEST_MYSQL"); raw != "" {
		o := dbmark(t, "prepare", "tpcb", "--target", workloadtest.MariaDB(t, raw, testDB), "--tablespace", "fast", "-s", "1")
		oneLineError(t, o, `--tablespace "fast": tablespaces are PostgreSQL's; on MariaDB and MySQL leave it out`)
	}
}

// TestRuntimeErrorNamesScriptLineAndClient runs a script that divides by
// zero: the run fails (exit 2) with the script, line and client named.
func TestRuntimeErrorNamesScriptLineAndClient(t *testing.T) {
	dir := home(t)
	tg := "sqlite://" + filepath.Join(dir, "r.db")
	f := filepath.Join(dir, "div.sql")
	os.WriteFile(f, []byte("SELECT 1;\n\\set x 1 / 0\n"), 0o644)
	o := dbmark(t, "run", "tpcb", "--target", tg, "-f", f, "-t", "1", "--no-store", "-q")
	if o.code != 2 || !strings.Contains(o.stderr, "client 0") || !strings.Contains(o.stderr, "line 2") || !strings.Contains(o.stderr, "div.sql") {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
}

// TestExitOnAbort: one client's fatal error ends that client and the
// others run to their limit (pgbench 15), unless --exit-on-abort, which
// ends them all (pgbench 16). Either way the run fails with exit 2.
func TestExitOnAbort(t *testing.T) {
	dir := home(t)
	tg := "sqlite://" + filepath.Join(dir, "a.db")
	f := filepath.Join(dir, "one.sql")
	os.WriteFile(f, []byte("\\if :client_id = 0\n\\set x 1 / 0\n\\endif\n\\sleep 5 ms\n"), 0o644)
	processed := regexp.MustCompile(`number of transactions actually processed: (\d+)/60`)
	for _, c := range []struct {
		flag string
		want func(n int) bool
	}{
		{"--exit-on-abort=false", func(n int) bool { return n == 40 }},
		{"--exit-on-abort", func(n int) bool { return n < 10 }},
	} {
		o := dbmark(t, "run", "tpcb", "--target", tg, "-f", f, "-c", "3", "-t", "20", "--no-store", "-q", c.flag)
		m := processed.FindStringSubmatch(o.stdout)
		if o.code != 2 || m == nil {
			t.Fatalf("%s: exit %d, want 2: %s%s", c.flag, o.code, o.stdout, o.stderr)
		}
		if n, _ := strconv.Atoi(m[1]); !c.want(n) {
			t.Fatalf("%s: %d of 60 transactions processed", c.flag, n)
		}
	}
}

// TestServerSideGeneration builds the data with -I G (generate_series on
// PostgreSQL, a recursive CTE elsewhere) and counts it with a script.
func TestServerSideGeneration(t *testing.T) {
	for name, tg := range engines(t) {
		t.Run(name, func(t *testing.T) {
			dir := home(t)
			must(t, "prepare", "tpcb", "--target", tg, "-s", "2", "-I", "dtGvp", "-q")
			t.Cleanup(func() { dbmark(t, "cleanup", "tpcb", "--target", tg, "-q") })
			f := filepath.Join(dir, "count.sql")
			os.WriteFile(f, []byte("SELECT count(*) AS n, sum(bid) AS b FROM pgbench_accounts \\gset\n"+
				"SELECT count(*) AS t FROM pgbench_tellers \\gset\n"+
				"\\if :n != 200000 or :b != 300000 or :t != 20\n\\set fail 1 / 0\n\\endif\n"), 0o644)
			if o := dbmark(t, "run", "tpcb", "--target", tg, "-f", f, "-t", "1", "-n", "--no-store", "-q"); o.code != 0 {
				t.Fatalf("the generated rows are not pgbench's: exit %d: %s", o.code, o.stderr)
			}
		})
	}
}

// TestTransactionTimeCoversItsCommands: the runner takes a transaction's
// start and end from the clock reads of its commands; the transaction's
// latency must still cover every command, and the commands' latencies
// add up to it.
func TestTransactionTimeCoversItsCommands(t *testing.T) {
	dir := home(t)
	tg := "sqlite://" + filepath.Join(dir, "c.db")
	must(t, "prepare", "tpcb", "--target", tg, "-q", "-s", "1")
	script := filepath.Join(dir, "sleepy.sql")
	if err := os.WriteFile(script, []byte("\\sleep 20 ms\nSELECT 1;\n\\sleep 10 ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "r.json")
	must(t, "run", "tpcb", "--target", tg, "-f", script, "-r", "-c", "2", "-t", "5", "-n", "--json", js, "--no-store", "-q")
	r := readResult(t, js)
	var tx, sum float64
	for _, o := range r.Summary.Ops {
		switch {
		case strings.HasPrefix(o.Name, "script:"):
			tx = o.Latency.MeanMS
		case o.Count != 10:
			t.Fatalf("%s ran %d times, want 10", o.Name, o.Count)
		default:
			sum += o.Latency.MeanMS
		}
	}
	// Above: a loaded machine wakes the sleeps late; that the transaction
	// is its commands and no more is checked below.
	if tx < 30 || tx > 30+60 {
		t.Fatalf("transaction mean %.3f ms for 30 ms of sleep", tx)
	}
	// The histograms keep three significant digits: 0.1% either way.
	if d := tx - sum; d < -0.001*tx || d > 1 {
		t.Fatalf("transaction mean %.3f ms, its commands' means add up to %.3f ms", tx, sum)
	}

	// Without -r no command is timed on its own, as in pgbench: the
	// SELECT is counted, and the last \sleep still ends the transaction.
	must(t, "run", "tpcb", "--target", tg, "-f", script, "-c", "2", "-t", "5", "-n", "--json", js, "--no-store", "-q")
	r = readResult(t, js)
	for _, o := range r.Summary.Ops {
		switch {
		case strings.HasPrefix(o.Name, "script:"):
			tx = o.Latency.MeanMS
		case strings.HasPrefix(o.Name, "meta:"):
			t.Fatalf("%s reported without -r", o.Name)
		case o.Count != 10 || o.Latency != nil:
			t.Fatalf("without -r, %s ran %d times with latency %+v; want 10 and none", o.Name, o.Count, o.Latency)
		}
	}
	// Above: a loaded machine wakes the sleeps late; that the transaction
	// is its commands and no more is checked below.
	if tx < 30 || tx > 30+60 {
		t.Fatalf("without -r: transaction mean %.3f ms for 30 ms of sleep", tx)
	}
}

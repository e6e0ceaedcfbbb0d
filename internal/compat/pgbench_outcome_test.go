package compat

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/cli"
)

// outcome runs pgbench on pgbenchDB in dir and returns what it printed
// (standard output, then standard error) and its exit code.
func (e *pgEnv) outcome(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdLimit)
	defer cancel()
	cmd := e.command(ctx, dir, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("pgbench %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// dbmarkOutcome runs dbmark and returns its standard output, standard
// error and exit code.
func dbmarkOutcome(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Main(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

var processedLine = regexp.MustCompile(`(?m)^number of transactions actually processed: (\S+)$`)

// processed is the summary's "transactions actually processed" figure,
// or "" when there is none.
func processed(out string) string {
	if m := processedLine.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// outcomeCase is a pgbench command line run by both tools: its exit code
// and the transactions processed must agree.
type outcomeCase struct {
	name   string
	script string   // a custom script, given as -f FILE when not empty
	args   []string // after "dbmark run tpcb --target URL", or after pgbench
	// dbmarkErr, when set, must be in dbmark's standard error: the line
	// that says what went wrong.
	dbmarkErr string
	// prepare runs "dbmark prepare tpcb" and "pgbench -i" instead of a run.
	prepare bool
	// conn gives dbmark pgbench's connection options and a database name
	// in place of --target, as pgbench gets them.
	conn bool
}

// runOutcomes runs each case with pgbench and dbmark on the same server
// and compares the exit codes and the transactions processed. pgbench's
// outcome is what it does, not what this test expects it to do: the
// test only checks that it is not a success when the case says it fails.
func runOutcomes(t *testing.T, cases []outcomeCase) {
	e := preparedPGEnv(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := c.args
			if c.script != "" {
				file := filepath.Join(dir, "script.sql")
				if err := os.WriteFile(file, []byte(c.script), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(append([]string(nil), args...), "-f", file)
			}
			pgArgs, dbArgs := args, append([]string{"run", "tpcb", "--target", e.url(tpcbDB), "--no-store"}, args...)
			if c.conn {
				t.Setenv("PGPASSWORD", os.Getenv("DBMARK_TEST_PG_PASSWORD"))
				dbArgs = append(append([]string{"run", "tpcb", "--no-store", "-h", os.Getenv("DBMARK_TEST_PG_HOST"), "-p", os.Getenv("DBMARK_TEST_PG_PORT"),
					"-U", os.Getenv("DBMARK_TEST_PG_USER")}, args...), tpcbDB)
			}
			if c.prepare {
				pgArgs, dbArgs = append([]string{"-i"}, args...), append([]string{"prepare", "tpcb", "--target", e.url(tpcbDB)}, args...)
			}
			pout, perr, pcode := e.outcome(t, dir, pgArgs...)
			dout, derr, dcode := dbmarkOutcome(t, dbArgs...)
			if pcode != dcode {
				t.Fatalf("exit code: pgbench %d, dbmark %d\npgbench:\n%s%s\ndbmark:\n%s%s", pcode, dcode, pout, perr, dout, derr)
			}
			if p, d := processed(pout), processed(dout); p != d {
				t.Fatalf("transactions processed: pgbench %q, dbmark %q\npgbench:\n%s%s\ndbmark:\n%s%s", p, d, pout, perr, dout, derr)
			}
			if c.dbmarkErr != "" {
				if pcode == 0 {
					t.Fatalf("pgbench succeeded where the case expects a failure:\n%s%s", pout, perr)
				}
				if !strings.Contains(derr, c.dbmarkErr) {
					t.Fatalf("dbmark's standard error lacks %q:\n%s", c.dbmarkErr, derr)
				}
			}
		})
	}
}

// TestPgbenchOutcomes runs pgbench command lines, right and wrong, with
// both tools and compares how each ends.
func TestPgbenchOutcomes(t *testing.T) {
	runOutcomes(t, []outcomeCase{
		// The simple protocol by default: \; and \aset need it.
		{name: "aset over a compound without -M", args: []string{"-n", "-t", "3"},
			script: "SELECT 1 AS a \\; SELECT 2 AS b \\aset\n\\if :a + :b != 3\nSELECT 1/0;\n\\endif\n"},
		// A script that ends inside a transaction block: the transaction
		// counts, then the client aborts.
		{name: "transaction block left open", args: []string{"-n", "-c", "1", "-t", "10"}, script: "BEGIN;\nSELECT 1;\n",
			dbmarkErr: "end of script reached without completing the last transaction"},
		{name: "transaction block left open by three clients", args: []string{"-n", "-c", "3", "-t", "5"}, script: "BEGIN;\nSELECT 1;\n",
			dbmarkErr: "end of script reached without completing the last transaction"},
		// \gset of a row with no columns sets nothing and succeeds; of no
		// row (an UPDATE's) it aborts the client.
		{name: "gset of no columns", args: []string{"-n", "-t", "2"}, script: "SELECT \\gset\n"},
		{name: "gset of no columns in prepared mode", args: []string{"-n", "-t", "2", "-M", "prepared"}, script: "SELECT \\gset\n"},
		{name: "gset of an update", args: []string{"-n", "-t", "2"}, script: "UPDATE pgbench_branches SET bbalance = bbalance WHERE bid = 1 \\gset\n",
			dbmarkErr: "expected one row, got 0"},
		// What pgbench refuses when the command runs: the client aborts.
		{name: "set of no variable name", args: []string{"-n", "-t", "1"}, script: "\\set . 1\n", dbmarkErr: `set: invalid variable name: "."`},
		{name: "least of 17", args: []string{"-n", "-t", "1"}, script: "\\set x least(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)\n",
			dbmarkErr: "too many function arguments, maximum is 16"},
		{name: "greatest of 17", args: []string{"-n", "-t", "1", "-c", "2"}, script: "\\set x greatest(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)\n",
			dbmarkErr: "too many function arguments, maximum is 16"},
		{name: "least of 16", args: []string{"-n", "-t", "1"}, script: "\\set x least(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)\n\\if :x != 1\nSELECT 1/0;\n\\endif\n"},
		// Options pgbench refuses before it connects.
		{name: "-F in a run", args: []string{"-n", "-t", "1", "-F", "90"}, dbmarkErr: "-F/--fillfactor"},
		{name: "-S -F", args: []string{"-n", "-t", "1", "-S", "-F", "90"}, dbmarkErr: "-F/--fillfactor"},
		{name: "-I in a run", args: []string{"-n", "-t", "1", "-I", "dtg"}, dbmarkErr: "-I/--init-steps"},
		{name: "progress 0", args: []string{"-n", "-t", "1", "--progress=0"}, dbmarkErr: "-P/--progress"},
		{name: "rate 0", args: []string{"-n", "-t", "1", "--rate=0.0"}, dbmarkErr: "-R/--rate"},
		{name: "latency limit 0", args: []string{"-n", "-t", "1", "--latency-limit=0.0"}, dbmarkErr: "-L/--latency-limit"},
		{name: "sampling rate 0", args: []string{"-n", "-t", "1", "-l", "--sampling-rate=0"}, dbmarkErr: "--sampling-rate"},
		{name: "progress timestamp without progress", args: []string{"-n", "-t", "1", "--progress-timestamp"}, dbmarkErr: "--progress-timestamp"},
		{name: "random seed not a number", args: []string{"-n", "-t", "1", "--random-seed=abc"}, dbmarkErr: `invalid value "abc" for option --random-seed`},
		{name: "clients not a number", args: []string{"-n", "-t", "1", "-c", "abc"}, dbmarkErr: `invalid value "abc" for option -c: not a whole number`},
		{name: "prepare given -S", prepare: true, args: []string{"-S"}, dbmarkErr: "-S/--select-only"},
		{name: "-S three times", args: []string{"-n", "-t", "2", "-S", "-S", "-S"}},
		// pgbench's connection options, -v (vacuum all) and -d (debug).
		{name: "connection options", conn: true, args: []string{"-n", "-t", "3", "-c", "2"}},
		{name: "-v vacuums all", conn: true, args: []string{"-v", "-t", "2", "-S"}},
		{name: "-d debug", conn: true, args: []string{"-d", "-n", "-t", "1", "-S"}},
		{name: "no server on that port", conn: true, args: []string{"-p", "1", "-n", "-t", "1"}, dbmarkErr: "connect to PostgreSQL at 127.0.0.1:1"},
		// One client's fatal error ends that client; the others finish.
		{name: "one client fails", args: []string{"-n", "-c", "4", "-t", "3"}, script: "\\set a 1\nSELECT 1/(:client_id - 2);\n",
			dbmarkErr: "division by zero"},
	})
}

// TestPgbenchVersionAndHelp: -V and --help print and succeed in both
// tools, and -h is a host, not help.
func TestPgbenchVersionAndHelp(t *testing.T) {
	bin, err := exec.LookPath("pgbench")
	if err != nil {
		t.Skip("pgbench is not installed")
	}
	t.Setenv("DBMARK_HOME", t.TempDir())
	for _, args := range [][]string{{"-V"}, {"--version"}, {"--help"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil || len(out) == 0 {
			t.Fatalf("pgbench %v: %v\n%s", args, err, out)
		}
		dout, derr, code := dbmarkOutcome(t, append([]string{"run", "tpcb"}, args...)...)
		if code != 0 || dout == "" {
			t.Fatalf("dbmark run tpcb %v: exit %d\n%s%s", args, code, dout, derr)
		}
		if args[0] != "--help" && !strings.HasPrefix(dout, "dbmark ") {
			t.Fatalf("dbmark run tpcb %v printed %q, not its version", args, dout)
		}
	}
	// -h takes a host: a run on a host with no server fails to connect.
	_, derr, code := dbmarkOutcome(t, "run", "tpcb", "-h", "127.0.0.1", "-p", "1", "-t", "1", "--no-store", "nodb")
	if code != 1 || !strings.Contains(derr, "127.0.0.1:1") {
		t.Fatalf("-h 127.0.0.1 -p 1: exit %d, want 1 naming the address: %s", code, derr)
	}
}

var number = regexp.MustCompile(`\d+(\.\d+)?`)

// progressShapes are the distinct progress lines of out with each number
// written N.
func progressShapes(out string) []string {
	seen := map[string]bool{}
	var shapes []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "progress: ") {
			continue
		}
		s := number.ReplaceAllString(l, "N")
		if !seen[s] {
			seen[s] = true
			shapes = append(shapes, s)
		}
	}
	return shapes
}

// TestPgbenchProgressLines compares the shape of -P's lines: both tools
// write them on standard error, with the same figures in the same form.
func TestPgbenchProgressLines(t *testing.T) {
	e := preparedPGEnv(t)
	for _, args := range [][]string{
		{"-S", "-n", "-T", "2", "-P", "1"},
		{"-S", "-n", "-T", "2", "-P", "1", "--progress-timestamp"},
		{"-S", "-n", "-T", "2", "-P", "1", "-R", "300"},
		{"-S", "-n", "-T", "2", "-P", "1", "-R", "300", "-L", "5", "--max-tries", "2"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, perr, pcode := e.outcome(t, t.TempDir(), args...)
			_, derr, dcode := dbmarkOutcome(t, append([]string{"run", "tpcb", "--target", e.url(tpcbDB), "--no-store", "-q"}, args...)...)
			want, got := progressShapes(perr), progressShapes(derr)
			if pcode != 0 || dcode != 0 || len(want) == 0 || strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Fatalf("progress lines differ (exit %d and %d):\npgbench:\n%s\ndbmark:\n%s", pcode, dcode, strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
		})
	}
}

var latencyAverage = regexp.MustCompile(`(?m)^latency (average|stddev) = (\S+) ms(.*)$`)

// latencyLines are the summary's latency average and stddev lines with
// the figures written N, and the average.
func latencyLines(out string) (shape string, avg float64) {
	var lines []string
	for _, m := range latencyAverage.FindAllStringSubmatch(out, -1) {
		lines = append(lines, "latency "+m[1]+" = N ms"+m[3])
		if m[1] == "average" {
			avg, _ = strconv.ParseFloat(m[2], 64)
		}
	}
	return strings.Join(lines, "; "), avg
}

var summaryRetries = regexp.MustCompile(`(?m)^\s+retries:\s+(\d+)`)

// TestPgbenchLatencyAverage runs the colliding clients' script, whose
// failed transactions pgbench 15 counts in its latency average unless it
// times each transaction (-P, -R, -L): the lines, their words and their
// figures must agree, and dbmark's summary counts the retries as its
// pgbench summary does.
func TestPgbenchLatencyAverage(t *testing.T) {
	e := preparedPGEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "serialization.sql")
	if err := os.WriteFile(file, []byte(retryScripts["serialization"]), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-n", "-c", "2", "-t", "1", "-f", file},
		{"-n", "-c", "2", "-t", "1", "-P", "1", "-f", file},
		{"-n", "-c", "2", "-t", "2", "--max-tries", "2", "-f", file},
	} {
		t.Run(strings.Join(args[:len(args)-2], " "), func(t *testing.T) {
			// With a retry allowed, whether a retried transaction collides
			// again, and so fails, is up to timing; the line's words depend
			// on it, so both tools are compared on a run where they failed
			// as many transactions.
			var pout, dout string
			for try := 1; ; try++ {
				var perr, derr string
				var pcode, dcode int
				pout, perr, pcode = e.outcome(t, dir, args...)
				dout, derr, dcode = dbmarkOutcome(t, append([]string{"run", "tpcb", "--target", e.url(tpcbDB), "--no-store", "-q"}, args...)...)
				if pcode != 0 || dcode != 0 {
					t.Fatalf("exit %d and %d:\n%s%s\n%s%s", pcode, dcode, pout, perr, dout, derr)
				}
				pc, dc := countsOf(pout), countsOf(dout)
				if pc["number of failed transactions"] == dc["number of failed transactions"] || try == 3 {
					break
				}
			}
			want, wavg := latencyLines(pout)
			got, gavg := latencyLines(dout)
			if c := countsOf(pout); c["number of failed transactions"] == "0" && c["number of transactions retried"] == "0" {
				t.Fatalf("the clients did not collide in pgbench:\n%s", pout)
			}
			if want != got || wavg <= 0 || gavg < 0.7*wavg || gavg > 1.4*wavg {
				t.Fatalf("latency lines differ:\npgbench: %s (%.3f)\ndbmark:  %s (%.3f)\n%s", want, wavg, got, gavg, dout)
			}
			if c := countsOf(dout)["total number of retries"]; c != "" {
				if m := summaryRetries.FindStringSubmatch(dout); m == nil || m[1] != c {
					t.Fatalf("dbmark's summary counts retries %v, its pgbench summary %s", m, c)
				}
			}
		})
	}
}

// linesWith are the lines of out that start with prefix.
func linesWith(out, prefix string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestPgbenchDebugAndShell: debug() writes its line on standard error in
// pgbench's form without being asked, and \shell's output goes to
// standard output, in both tools.
func TestPgbenchDebugAndShell(t *testing.T) {
	e := newPGEnv(t)
	t.Setenv("DBMARK_HOME", t.TempDir())
	dir := t.TempDir()
	file := filepath.Join(dir, "debug.sql")
	script := "\\set x debug(3)\n\\set y debug(1.5)\n\\set z debug(2 > 1)\n\\set n debug(NULL)\n\\shell echo shell-said-hello\n"
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-n", "-t", "2", "-f", file}
	pout, perr, pcode := e.outcome(t, dir, args...)
	dout, derr, dcode := dbmarkOutcome(t, append([]string{"run", "tpcb", "--target", e.url(tpcbDB), "--no-store", "-q"}, args...)...)
	if pcode != 0 || dcode != 0 {
		t.Fatalf("exit %d and %d:\n%s%s\n%s%s", pcode, dcode, pout, perr, dout, derr)
	}
	want, got := linesWith(perr, "debug("), linesWith(derr, "debug(")
	if len(want) != 8 || strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Fatalf("debug lines on standard error differ:\npgbench:\n%s\ndbmark:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	if p, d := len(linesWith(pout, "shell-said-hello")), len(linesWith(dout, "shell-said-hello")); p != 2 || d != 2 {
		t.Fatalf("\\shell's lines on standard output: pgbench %d, dbmark %d\n%s", p, d, dout)
	}
}

// TestPgbenchScaleIgnored: -s in a run of a builtin script is ignored
// with pgbench's warning, whatever its value.
func TestPgbenchScaleIgnored(t *testing.T) {
	e := preparedPGEnv(t)
	for _, s := range []string{"1", "5"} {
		args := []string{"-S", "-n", "-t", "1", "-s", s}
		_, perr, pcode := e.outcome(t, t.TempDir(), args...)
		_, derr, dcode := dbmarkOutcome(t, append([]string{"run", "tpcb", "--target", e.url(tpcbDB), "--no-store", "-q"}, args...)...)
		want := strings.Join(linesWith(strings.ReplaceAll(perr, "pgbench: warning:", "warning:"), "warning: scale"), "\n")
		got := strings.Join(linesWith(derr, "warning: scale"), "\n")
		if pcode != 0 || dcode != 0 || want == "" || want != got {
			t.Fatalf("-s %s: exit %d and %d, warnings:\npgbench: %q\ndbmark:  %q", s, pcode, dcode, want, got)
		}
	}
}

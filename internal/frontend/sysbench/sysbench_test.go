package sysbench

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

// start runs Start on args and returns the command or the exit code, and
// what went to each stream.
func start(t *testing.T, args ...string) (c *Command, code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c, err := Start(args, &out, &errOut, "test")
	var ex *Exit
	switch {
	case errors.As(err, &ex):
		code = ex.Code
	case err != nil:
		t.Fatalf("Start(%q): %v", args, err)
	}
	return c, code, out.String(), errOut.String()
}

const banner = "sysbench 1.0.20 (using dbmark test)\n\n"

// TestGrammar holds the front end to what sysbench 1.0.20 does with each
// command line: its exit code and what it prints where (found by running
// sysbench; internal/compat replays its own tests against it).
func TestGrammar(t *testing.T) {
	for _, tc := range []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"unknown test", []string{"foo", "bar"}, 1, banner + "FATAL: Cannot find benchmark 'foo': no such built-in test, file or module\n", ""},
		{"a third word", []string{"foo", "bar", "baz"}, 1, "", "Unrecognized command line argument: baz\n"},
		{"--opt value is two words, as sysbench reads it", []string{"--threads", "2", "oltp_read_write", "run"}, 1, "", "Unrecognized command line argument: run\n"},
		{"a built-in test needs a command", []string{"fileio"}, 1, banner, "The 'fileio' test requires a command argument. See 'sysbench fileio help'\n"},
		{"a script needs a command", []string{"oltp_read_write"}, 1, banner + "FATAL: Command is required. Supported commands: prepare, prewarm, run, cleanup, help\n", ""},
		{"unknown option", []string{"fileio", "--invalid-option", "prepare"}, 1, banner, "invalid option: --invalid-option\n"},
		{"a boolean sysbench refuses", []string{"oltp_read_write", "--skip_trx=yes", "run"}, 1, banner, "invalid option: --skip_trx=yes\n"},
		{"a general boolean sysbench refuses", []string{"oltp_read_write", "--histogram=maybe", "run"}, 1, banner, "invalid option: --histogram=maybe\n"},
		{"unknown command", []string{"oltp_read_write", "foo"}, 1, banner, "Unknown command: foo\n"},
		{"fileio has no prewarm", []string{"fileio", "prewarm"}, 1, banner, "Unknown command: prewarm\n"},
		{"bulk_insert has no help", []string{"bulk_insert", "help"}, 1, banner, "'bulk_insert' test does not implement the 'help' command.\n"},
		{"a bad integer", []string{"--threads=abc", "oltp_read_write", "run"}, 1, "", "Invalid value for the 'threads' option: 'abc'\n"},
		{"no threads", []string{"--threads=0", "oltp_read_write", "run"}, 1, "FATAL: Invalid value for --threads: 0.\n\n", ""},
		{"verbosity in a byte: -1 is 255", []string{"--verbosity=-1", "oltp_read_write", "run"}, 1, "", "Invalid value for verbosity: 255\n"},
		{"forced shutdown", []string{"--forced-shutdown=xx", "oltp_read_write", "run"}, 1, "FATAL: Invalid value for --forced-shutdown: 'xx'\n", ""},
		{"version", []string{"--version", "anything"}, 0, "sysbench 1.0.20\n", ""},
		{"prewarm is MySQL's", []string{"--db-driver=pgsql", "oltp_read_write", "prewarm"}, 1, banner + "FATAL: `sysbench.cmdline.call_command' function failed: prewarm is currently MySQL only\n", ""},
		{"a parallel prewarm fails with 0", []string{"--db-driver=pgsql", "--threads=2", "oltp_read_write", "prewarm"}, 0,
			banner + "Initializing worker threads...\n\nFATAL: `sysbench.cmdline.call_command' function failed: prewarm is currently MySQL only\n", ""},
		{"no such driver", []string{"--db-driver=oracle", "oltp_read_write", "cleanup"}, 1,
			banner + "FATAL: invalid database driver name: 'oracle'\nFATAL: `cleanup' function failed: failed to initialize the DB driver\n", ""},
		{"fileio's missing mode", []string{"fileio", "run"}, 1, "", ""},
		{"fileio's bad mode", []string{"fileio", "--file-test-mode=foo", "run"}, 1, banner + "FATAL: Invalid IO operations mode: foo.\n", ""},
		{"cpu is sysbench's own", []string{"cpu", "run"}, 1, banner + "FATAL: dbmark sysbench does not run sysbench's 'cpu' test (it runs the OLTP tests, bulk_insert and fileio)\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, code, stdout, stderr := start(t, tc.args...)
			if c != nil {
				t.Fatalf("%q: a command to run, want exit %d", tc.args, tc.code)
			}
			if code != tc.code || tc.stdout != "" && stdout != tc.stdout || stderr != tc.stderr {
				t.Errorf("%q: exit %d\nstdout %q\nstderr %q\nwant exit %d\nstdout %q\nstderr %q", tc.args, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

// TestEveryOptionWithEveryCommand: sysbench takes the run's options with
// prepare and cleanup too, so scripts pass one set of options to all three.
func TestEveryOptionWithEveryCommand(t *testing.T) {
	opts := []string{"--time=5", "--events=-1", "--report-interval=1", "--rate=10", "--percentile=0", "--histogram",
		"--forced-shutdown=5%", "--report-checkpoints=1,2", "--debug=off", "--db-debug", "--validate=on", "--thread-stack-size=128K",
		"--tx-rate=0", "--table_size=100", "--tables=2", "--auto_inc=off", "--mysql-ssl=off", "--pgsql-db=x"}
	for _, cmd := range []string{"prepare", "run", "cleanup", "prewarm"} {
		c, code, stdout, stderr := start(t, slices.Concat([]string{"oltp_read_write"}, opts, []string{cmd})...)
		if c == nil || c.Verb != cmd {
			t.Errorf("%s with every option: exit %d\n%s%s", cmd, code, stdout, stderr)
		}
	}
	c, _, _, _ := start(t, slices.Concat([]string{"oltp_read_write"}, opts, []string{"run"})...)
	if c.Events != 0 || c.Percentile != 0 || c.ForcedShutdown != 5 || !slices.Equal(c.Checkpoints, []int{1, 2}) {
		t.Errorf("events %d (a negative one is no limit), percentile %d, forced shutdown %d (5s + 5%%), checkpoints %v",
			c.Events, c.Percentile, c.ForcedShutdown, c.Checkpoints)
	}
}

// TestFlags checks what the front end asks of dbmark's workload.
func TestFlags(t *testing.T) {
	c, _, stdout, _ := start(t, "--num-threads=4", "--max-time=3", "/usr/share/sysbench/oltp_read_only.lua", "--table-size=500",
		"--skip_trx", "--rand-type=uniform", "--mysql-ignore-errors=all", "--db-ps-mode=disable", "run")
	if !strings.HasPrefix(stdout, "WARNING: --num-threads is deprecated, use --threads instead\nWARNING: --max-time is deprecated, use --time instead\n"+banner) {
		t.Errorf("the deprecated options' warnings come first, on stdout:\n%s", stdout)
	}
	flags := map[string]string{}
	for _, f := range c.Flags {
		flags[f[0]] = f[1]
	}
	for name, want := range map[string]string{"threads": "4", "time": "3s", "table-size": "500", "skip-trx": "on",
		"rand-type": "uniform", "ignore-errors": "all", "db-ps-mode": "disable", "percentiles": "95"} {
		if flags[name] != want {
			t.Errorf("--%s %q, want %q (all: %v)", name, flags[name], want, flags)
		}
	}
	if c.Test != "oltp_read_only" || c.Name != "oltp_read_only.lua" {
		t.Errorf("test %q named %q", c.Test, c.Name)
	}
	if _, ok := flags["events"]; !ok {
		t.Error("no --events")
	}
	c, _, _, _ = start(t, "oltp_point_select", "--time=0", "run")
	for _, f := range c.Flags {
		if f[0] == "time" && f[1] != endless.String() {
			t.Errorf("no limits: --time %s, want the endless run's", f[1])
		}
	}
}

func TestTarget(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mysql-host=db1,db2", "--mysql-port=3307", "--mysql-user=u", "--mysql-password=p w", "--mysql-db=d"}, "mysql://u:p%20w@db1:3307/d"},
		{[]string{"--mysql-socket=/tmp/my.sock"}, "mysql://sbtest@localhost/sbtest?socket=%2Ftmp%2Fmy.sock"},
		{[]string{"--mysql-host=127.0.0.1", "--mysql-ssl=on"}, "mysql://sbtest@127.0.0.1:3306/sbtest?tls=skip-verify"},
		{[]string{"--db-driver=pgsql"}, "postgres://sbtest@localhost:5432/sbtest"},
		{[]string{"--db-driver=pgsql", "--pgsql-host=/run/pg", "--pgsql-user=a", "--pgsql-password=b", "--pgsql-db=c"}, "postgres://a:b@/c?host=%2Frun%2Fpg&port=5432"},
	} {
		c, code, stdout, stderr := start(t, slices.Concat([]string{"oltp_read_write"}, tc.args, []string{"run"})...)
		if c == nil {
			t.Fatalf("%q: exit %d %s%s", tc.args, code, stdout, stderr)
		}
		if got := c.Target(); got != tc.want && !(strings.Contains(tc.want, "@localhost/") && got == "mysql://sbtest@localhost:3306/sbtest") {
			t.Errorf("%q: target %s, want %s", tc.args, got, tc.want)
		}
	}
}

// TestTargets: host and port lists make the servers the clients spread
// over, in sysbench's order (every port of a host, then the next host),
// and a port in a list that is not one is refused in one line.
func TestTargets(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--mysql-host=db1,db2", "--mysql-port=3307,3308", "--mysql-user=u"},
			[]string{"mysql://u@db1:3307/sbtest", "mysql://u@db1:3308/sbtest", "mysql://u@db2:3307/sbtest", "mysql://u@db2:3308/sbtest"}},
		{[]string{"--mysql-host=127.0.0.1", "--mysql-port=3307,3308", "--mysql-ssl=on"},
			[]string{"mysql://sbtest@127.0.0.1:3307/sbtest?tls=skip-verify", "mysql://sbtest@127.0.0.1:3308/sbtest?tls=skip-verify"}},
		{[]string{"--mysql-socket=/tmp/a.sock,/tmp/b.sock"},
			[]string{"mysql://sbtest@localhost/sbtest?socket=%2Ftmp%2Fa.sock", "mysql://sbtest@localhost/sbtest?socket=%2Ftmp%2Fb.sock"}},
		{[]string{"--db-driver=pgsql", "--pgsql-host=h1,h2"},
			[]string{"postgres://sbtest@h1:5432/sbtest", "postgres://sbtest@h2:5432/sbtest"}},
		{[]string{"--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-port=5433,5434"},
			[]string{"postgres://sbtest@127.0.0.1:5433/sbtest", "postgres://sbtest@127.0.0.1:5434/sbtest"}},
	} {
		c, code, stdout, stderr := start(t, slices.Concat([]string{"oltp_read_write"}, tc.args, []string{"run"})...)
		if c == nil {
			t.Fatalf("%q: exit %d %s%s", tc.args, code, stdout, stderr)
		}
		if got := c.Targets(); !slices.Equal(got, tc.want) {
			t.Errorf("%q: targets %q, want %q", tc.args, got, tc.want)
		}
	}
	for _, args := range [][]string{{"--mysql-port=3306,33o6"}, {"--db-driver=pgsql", "--pgsql-port=5432,70000"}} {
		c, code, stdout, _ := start(t, slices.Concat([]string{"oltp_read_write"}, args, []string{"run"})...)
		lines := strings.Split(strings.TrimSpace(strings.TrimPrefix(stdout, banner)), "\n")
		if c != nil || code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "FATAL: Invalid value for --") || !strings.Contains(lines[0], "is not a port") {
			t.Errorf("%q: exit %d, output %q: want one FATAL line naming the port", args, code, stdout)
		}
	}
}

func TestConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sb.cfg")
	if err := os.WriteFile(path, []byte("threads = 3 # three\ntable_size=\"77\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, code, stdout, stderr := start(t, "--config-file="+path, "oltp_read_write", "prepare")
	if c == nil {
		t.Fatalf("exit %d %s%s", code, stdout, stderr)
	}
	if c.Threads != 3 || !slices.Contains(c.Flags, [2]string{"table-size", "77"}) {
		t.Errorf("threads %d, flags %v: want the file's 3 threads and 77 rows", c.Threads, c.Flags)
	}
}

// TestBulkInsertTakesAnyOption: bulk_insert declares no options, so
// sysbench takes any.
func TestBulkInsertTakesAnyOption(t *testing.T) {
	if c, code, _, stderr := start(t, "bulk_insert", "--whatever=1", "run"); c == nil {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

func TestHelp(t *testing.T) {
	_, code, stdout, _ := start(t, "oltp_read_write", "help")
	want := banner + "oltp_read_write options:\n" +
		"  --auto_inc[=on|off]           Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs [on]\n"
	if code != 0 || !strings.HasPrefix(stdout, want) || !strings.Contains(stdout, "  --tables=N                    Number of tables [1]\n\n") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
	_, code, stdout, _ = start(t, "--help")
	if code != 0 || !strings.HasPrefix(stdout, "Usage:\n  sysbench [options]... [testname] [command]\n") ||
		!strings.Contains(stdout, "  --threads=N                     number of threads to use [1]\n") ||
		!strings.Contains(stdout, "  --pgsql-password=STRING PostgreSQL password []\n") {
		t.Errorf("--help: exit %d:\n%s", code, stdout)
	}
}

// TestReport prints a known result in sysbench's form, to the byte.
func TestReport(t *testing.T) {
	c, _, _, _ := start(t, "--threads=2", "oltp_read_write", "run")
	var out bytes.Buffer
	c.Log.W = &out
	res := &result.Result{Summary: result.Summary{
		DurationS: 2, Events: 100, DrainEvents: 2, DrainS: 0.0004,
		Queries:     result.QueryCounts{Read: 1400, Write: 400, Other: 200, Total: 2000},
		ErrorsTotal: 1,
		Latency:     &result.Latency{MinMS: 1.234, MeanMS: 8.5, MaxMS: 55.831, Percentiles: []result.Percentile{{P: 95, MS: 30.26}}},
		Fairness:    &result.Fairness{EventsMean: 51, EventsStdDev: 1, BusyMeanS: 0.43361, BusyStdDevS: 0.004, BusyS: 0.8671},
	}}
	c.Report(res)
	want := `SQL statistics:
    queries performed:
        read:                            1400
        write:                           400
        other:                           200
        total:                           2000
    transactions:                        102    (50.99 per sec.)
    queries:                             2000   (999.80 per sec.)
    ignored errors:                      1      (0.50 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          2.0004s
    total number of events:              102

Latency (ms):
         min:                                    1.23
         avg:                                    8.50
         max:                                   55.83
         95th percentile:                       30.26
         sum:                                  867.10

Threads fairness:
    events (avg/stddev):           51.0000/1.00
    execution time (avg/stddev):   0.4336/0.00

`
	if out.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", out.String(), want)
	}
	line := c.LiveLine(result.Interval{T: 1.0004, EventsPerS: 50.5, ReadsPerS: 707, WritesPerS: 202, OtherPerS: 101,
		Latency: []result.Percentile{{P: 95, MS: 20.7449}}}, 2)
	if want := "[ 1s ] thds: 2 tps: 50.50 qps: 1010.00 (r/w/o: 707.00/202.00/101.00) lat (ms,95%): 20.74 err/s: 0.00 reconn/s: 0.00"; line != want {
		t.Errorf("live line\n%s\nwant\n%s", line, want)
	}
}

func TestRunHeader(t *testing.T) {
	c, _, _, _ := start(t, "--rand-seed=5", "--rate=10", "--report-interval=2", "--time=20", "--forced-shutdown=3", "fileio",
		"--file-num=2", "--file-total-size=8M", "--file-test-mode=rndrw", "--file-extra-flags=dsync,sync", "run")
	var out bytes.Buffer
	c.Log.W = &out
	c.RunHeader()
	want := `Running the test with following options:
Number of threads: 1
Target transaction rate: 10/sec
Report intermediate results every 2 second(s)
Initializing random number generator from seed (5).

Forcing shutdown in 23 seconds

Extra file open flags: sync dsync 
2 files, 4MiB each
8MiB total file size
Block size 16KiB
Number of IO requests: 0
Read/Write ratio for combined random IO test: 1.50
Periodic FSYNC enabled, calling fsync() each 100 requests.
Calling fsync() at the end of test, Enabled.
Using synchronous I/O mode
Doing random r/w test
`
	if out.String() != want {
		t.Errorf("header:\n%s\nwant:\n%s", out.String(), want)
	}
}

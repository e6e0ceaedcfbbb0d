package cli_test

import (
	"context"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sysbenchOn is the start of a dbmark sysbench command line on the MariaDB
// server u, database db, named as sysbench names them.
func sysbenchOn(u *url.URL, db string) []string {
	pass, _ := u.User.Password()
	return []string{"sysbench", "--db-driver=mysql", "--mysql-host=" + u.Hostname(), "--mysql-port=" + u.Port(),
		"--mysql-user=" + u.User.Username(), "--mysql-password=" + pass, "--mysql-db=" + db}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestSysbenchFileioKeepsItsRuns runs sysbench's fileio command lines
// through dbmark sysbench in a directory: sysbench's lines on stdout,
// dbmark's own marked on stderr, and the run kept in the store, where
// dbmark results show finds it.
func TestSysbenchFileioKeepsItsRuns(t *testing.T) {
	home(t)
	t.Chdir(t.TempDir())
	ctx := context.Background()
	args := []string{"sysbench", "fileio", "--file-num=2", "--file-total-size=2M", "--events=50", "--time=0"}
	o := dbmark(t, ctx, append(args, "prepare")...)
	if o.code != 0 || !strings.Contains(o.stdout, "2 files, 1024Kb each, 2Mb total\nCreating files for the test...\n") ||
		!strings.Contains(o.stdout, "Creating file test_file.1\n2097152 bytes written in ") {
		t.Fatalf("prepare: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	o = dbmark(t, ctx, append(args, "--file-test-mode=rndrd", "--report-interval=1", "run")...)
	if o.code != 0 {
		t.Fatalf("run: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	for _, want := range []string{"Running the test with following options:\n", "Doing random read test\n", "Threads started!\n",
		"\n\nFile operations:\n    reads/s:                      ", "    total number of events:              50\n",
		"    events (avg/stddev):           50.0000/0.00\n"} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, o.stdout)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(o.stderr), "\n") {
		if !strings.HasPrefix(l, "dbmark: ") {
			t.Errorf("stderr line not marked as dbmark's: %q", l)
		}
	}
	m := regexp.MustCompile(`dbmark: result (\d+) saved`).FindStringSubmatch(o.stderr)
	if m == nil {
		t.Fatalf("no result saved:\n%s", o.stderr)
	}
	if s := dbmark(t, ctx, "results", "show", m[1]); s.code != 0 || !strings.Contains(s.stdout, "fileio") {
		t.Fatalf("results show %s: exit %d\n%s%s", m[1], s.code, s.stdout, s.stderr)
	}
	// --no-store keeps nothing; the output is the same.
	o = dbmark(t, ctx, append(args, "--file-test-mode=seqrd", "--no-store", "run")...)
	if o.code != 0 || strings.Contains(o.stderr, "saved") || !strings.Contains(o.stdout, "Doing sequential read test") {
		t.Fatalf("run --no-store: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if o = dbmark(t, ctx, append(args, "cleanup")...); o.code != 0 || !strings.HasSuffix(o.stdout, "\nRemoving test files...\n") {
		t.Fatalf("cleanup: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if ents, _ := os.ReadDir("."); len(ents) != 0 {
		t.Fatalf("cleanup left %v", ents)
	}
}

// TestSysbenchOLTPOnMariaDB runs one script's prepare, run and cleanup with
// the same options, as scripts do, and checks sysbench's lines.
func TestSysbenchOLTPOnMariaDB(t *testing.T) {
	u := serverURL(t, "DBMARK_TEST_MYSQL")
	home(t)
	ctx := context.Background()
	args := append(sysbenchOn(u, strings.TrimPrefix(u.Path, "/")),
		"oltp_write_only", "--tables=2", "--table-size=100", "--threads=2", "--events=40", "--time=0", "--report-interval=1", "--percentile=99")
	dbmark(t, ctx, append(args, "cleanup")...)
	o := dbmark(t, ctx, append(args, "prepare")...)
	if o.code != 0 || !strings.Contains(o.stdout, "Initializing worker threads...\n\n") || !strings.Contains(o.stdout, "Inserting 100 records into 'sbtest2'\n") {
		t.Fatalf("prepare: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	defer dbmark(t, ctx, append(args, "cleanup")...)
	o = dbmark(t, ctx, append(args, "run")...)
	if o.code != 0 {
		t.Fatalf("run: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	// Two clients on small tables deadlock now and then: sysbench
	// ignores the error, and counts the statements the transaction sent.
	if m := regexp.MustCompile(`\n        write:                           (\d+)\n`).FindStringSubmatch(o.stdout); m == nil || atoi(m[1]) < 160 {
		t.Errorf("writes %v: want 4 per transaction, 160 or more:\n%s", m, o.stdout)
	}
	for _, want := range []string{"        read:                            0\n", "    transactions:                        40     (", "        99th percentile: "} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, o.stdout)
		}
	}
	if strings.Contains(o.stdout, "p99.9") || strings.Contains(o.stdout, "Little") {
		t.Errorf("dbmark's own figures in sysbench's output:\n%s", o.stdout)
	}
	// A rate no client can keep up with ends as sysbench's does.
	rate := []string{}
	for _, a := range args {
		if !strings.HasPrefix(a, "--events=") && !strings.HasPrefix(a, "--time=") && !strings.HasPrefix(a, "--report-interval=") {
			rate = append(rate, a)
		}
	}
	o = dbmark(t, ctx, append(rate, "--rate=2000000000", "--time=2", "run", "--verbosity=1")...)
	if o.code != 1 || !strings.Contains(o.stdout+o.stderr, "FATAL: The event queue is full. This means the worker threads are unable to keep up with the specified event generation rate") {
		t.Errorf("--rate=2000000000: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if o = dbmark(t, ctx, append(args, "cleanup")...); o.code != 0 || !strings.Contains(o.stdout, "Dropping table 'sbtest2'...\n") {
		t.Fatalf("cleanup: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
}

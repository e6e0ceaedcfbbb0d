package cli_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pgEnv points libpq's variables at the test server, or skips.
func pgEnv(t *testing.T) {
	t.Helper()
	for _, v := range []string{"DBMARK_TEST_PG_HOST", "DBMARK_TEST_PG_PORT", "DBMARK_TEST_PG_USER", "DBMARK_TEST_PG_PASSWORD", "DBMARK_TEST_PG_DB"} {
		if os.Getenv(v) == "" {
			t.Skipf("%s is not set (scripts/testenv.sh starts the test servers)", v)
		}
	}
	t.Setenv("PGHOST", os.Getenv("DBMARK_TEST_PG_HOST"))
	t.Setenv("PGPORT", os.Getenv("DBMARK_TEST_PG_PORT"))
	t.Setenv("PGUSER", os.Getenv("DBMARK_TEST_PG_USER"))
	t.Setenv("PGPASSWORD", os.Getenv("DBMARK_TEST_PG_PASSWORD"))
	t.Setenv("PGDATABASE", os.Getenv("DBMARK_TEST_PG_DB"))
}

// TestPgbenchOptionErrors: pgbench's option errors, word for word, on
// stderr alone, exit 1, before anything connects.
func TestPgbenchOptionErrors(t *testing.T) {
	home(t)
	t.Setenv("PGHOST", "/nonexistent")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "three"}, "pgbench: error: invalid value \"three\" for option -c/--client\n"},
		{[]string{"--client=0"}, "pgbench: error: -c/--client must be in range 1..2147483647\n"},
		{[]string{"-j3x"}, "pgbench: error: invalid value \"3x\" for option -j/--jobs\n"},
		{[]string{"--bad-option"}, "pgbench: unrecognized option '--bad-option'\npgbench: hint: Try \"pgbench --help\" for more information.\n"},
		{[]string{"-c"}, "pgbench: option requires an argument -- 'c'\npgbench: hint: Try \"pgbench --help\" for more information.\n"},
		{[]string{"--initialize=3"}, "pgbench: option '--initialize' doesn't allow an argument\npgbench: hint: Try \"pgbench --help\" for more information.\n"},
		{[]string{"a", "b"}, "pgbench: error: too many command-line arguments (first is \"b\")\npgbench: hint: Try \"pgbench --help\" for more information.\n"},
		{[]string{"-i", "-S"}, "pgbench: error: some of the specified options cannot be used in initialization (-i) mode\n"},
		{[]string{"-t", "5", "-T", "5"}, "pgbench: error: specify either a number of transactions (-t) or a duration (-T), not both\n"},
		{[]string{"--max-tries", "0"}, "pgbench: error: an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)\n"},
		{strings.Fields(strings.Repeat("-S ", 129)), "pgbench: error: at most 128 SQL scripts are allowed\n"},
		{[]string{"--random-seed=5", "-c", "x"}, "pgbench: setting random seed to 5\npgbench: error: invalid value \"x\" for option -c/--client\n"},
		{[]string{"-i", "-I", "dta"}, "pgbench: error: unrecognized initialization step \"a\"\npgbench: detail: Allowed step characters are: \"dtgGvpf\".\n"},
	} {
		o := dbmark(t, context.Background(), append([]string{"pgbench"}, c.args...)...)
		if o.code != 1 || o.stdout != "" || o.stderr != c.want {
			t.Errorf("pgbench %s: exit %d, stdout %q, stderr %q; want exit 1 and stderr %q", strings.Join(c.args, " "), o.code, o.stdout, o.stderr, c.want)
		}
	}
}

// TestPgbenchInformation: --help and -V on stdout, -b list and
// --show-script on stderr, as pgbench prints them, exit 0.
func TestPgbenchInformation(t *testing.T) {
	home(t)
	o := dbmark(t, context.Background(), "pgbench", "--help")
	if o.code != 0 || !strings.Contains(o.stdout, "  -c, --client=NUM         number of concurrent database clients (default: 1)\n") || o.stderr != "" {
		t.Errorf("--help: exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	o = dbmark(t, context.Background(), "pgbench", "-V")
	if o.code != 0 || !strings.HasPrefix(o.stdout, "pgbench (PostgreSQL) 15") {
		t.Errorf("-V: exit %d, stdout %q", o.code, o.stdout)
	}
	o = dbmark(t, context.Background(), "pgbench", "-b", "list")
	if o.code != 0 || o.stdout != "" || !strings.Contains(o.stderr, "    select-only: <builtin: select only>\n") {
		t.Errorf("-b list: exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
}

// TestPgbenchRun: a run prints pgbench's lines on stdout in pgbench's
// order, "starting vacuum...end." alone on stderr, and is kept in the
// store, where results show gives dbmark's view of it.
func TestPgbenchRun(t *testing.T) {
	dir := home(t)
	pgEnv(t)
	ctx := context.Background()
	if o := dbmark(t, ctx, "pgbench", "-i", "-q"); o.code != 0 || o.stdout != "" || !strings.Contains(o.stderr, "creating primary keys...") {
		t.Fatalf("pgbench -i: exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	o := dbmark(t, ctx, "pgbench", "-c", "2", "-t", "5", "-r", "-S")
	if o.code != 0 || o.stderr != "starting vacuum...end.\n" {
		t.Fatalf("exit %d, stderr %q", o.code, o.stderr)
	}
	want := []string{
		`pgbench \(.+\)`,
		`transaction type: <builtin: select only>`,
		`scaling factor: 1`,
		`query mode: simple`,
		`number of clients: 2`,
		`number of threads: 1`,
		`maximum number of tries: 1`,
		`number of transactions per client: 5`,
		`number of transactions actually processed: 10/10`,
		`number of failed transactions: 0 \(0\.000%\)`,
		`latency average = \d+\.\d{3} ms`,
		`initial connection time = \d+\.\d{3} ms`,
		`tps = \d+\.\d{6} \(without initial connection time\)`,
		`statement latencies in milliseconds and failures:`,
		` {3}[ \d]{7}\.\d{3} {11}0  \\set aid random\(1, 100000 \* :scale\)`,
		` {3}[ \d]{7}\.\d{3} {11}0  SELECT abalance FROM pgbench_accounts WHERE aid = :aid;`,
	}
	lines := strings.Split(strings.TrimSuffix(o.stdout, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), o.stdout)
	}
	for i, re := range want {
		if !regexp.MustCompile("^" + re + "$").MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %q", i+1, lines[i], re)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bench.db")); err == nil {
		t.Error("the embedded database was made: the run went to SQLite")
	}
	if o := dbmark(t, ctx, "results", "show", "1"); o.code != 0 || !strings.Contains(o.stdout, "tpcb") || !strings.Contains(o.stdout, "PostgreSQL") {
		t.Errorf("results show 1: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}

	// -C and --max-tries 0 take pgbench's lines too.
	o = dbmark(t, ctx, "pgbench", "-C", "-n", "-S", "-T", "1", "--max-tries", "0", "--no-store")
	if o.code != 0 || !strings.Contains(o.stdout, "\naverage connection time = ") || !strings.Contains(o.stdout, " (including reconnection times)\n") ||
		strings.Contains(o.stdout, "maximum number of tries") || !strings.Contains(o.stdout, "\nduration: 1 s\n") {
		t.Errorf("-C -T 1 --max-tries 0: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
}

// TestPgbenchServerErrors: a server's error in pgbench's form, with its
// DETAIL, HINT and CONTEXT, exit 2; a secret of the command line the
// server quotes is masked there.
func TestPgbenchServerErrors(t *testing.T) {
	home(t)
	pgEnv(t)
	script := filepath.Join(t.TempDir(), "raise.sql")
	if err := os.WriteFile(script, []byte("DO $$ BEGIN RAISE EXCEPTION 'boom' USING DETAIL = 'token hunter2xyzzy', HINT = 'a hint'; END $$;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := dbmark(t, context.Background(), "pgbench", "-n", "-t", "1", "-D", "password=hunter2xyzzy", "-f", script, "--no-store")
	want := "pgbench: error: client 0 script 0 aborted in command 0 query 0: ERROR:  boom\nDETAIL:  token xxxxx\nHINT:  a hint\n" +
		"CONTEXT:  PL/pgSQL function inline_code_block line 1 at RAISE\npgbench: error: Run was aborted; the above results are incomplete.\n"
	if o.code != 2 || o.stderr != want || !strings.Contains(o.stdout, "number of transactions actually processed: 0/1\n") {
		t.Errorf("exit %d\nstderr %q\nwant   %q\nstdout:\n%s", o.code, o.stderr, want, o.stdout)
	}
	// dbmark's own command keeps them too, as lines of their own.
	o = dbmark(t, context.Background(), "run", "tpcb", "-n", "-t", "1", "-D", "password=hunter2xyzzy", "-f", script, "--no-store")
	for _, l := range []string{"\nDETAIL:  token xxxxx\n", "\nHINT:  a hint\n", "\nCONTEXT:  PL/pgSQL function inline_code_block line 1 at RAISE\n"} {
		if !strings.Contains("\n"+o.stderr, l) {
			t.Errorf("run tpcb: stderr lacks %q:\n%s", l, o.stderr)
		}
	}
	if strings.Contains(o.stdout+o.stderr, "hunter2xyzzy") {
		t.Errorf("the secret shows:\n%s%s", o.stdout, o.stderr)
	}
}

// TestTpcbTakesLibpqEnvironment: dbmark's own tpcb commands with no
// --target go where PGHOST, PGPORT, PGUSER and PGDATABASE say, as
// pgbench does: never to the embedded SQLite database.
func TestTpcbTakesLibpqEnvironment(t *testing.T) {
	dir := home(t)
	pgEnv(t)
	ctx := context.Background()
	if o := dbmark(t, ctx, "prepare", "tpcb", "-q"); o.code != 0 || !strings.Contains(o.stdout, "prepared tpcb on postgres://") {
		t.Fatalf("prepare: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if o := dbmark(t, ctx, "run", "tpcb", "-S", "-t", "5", "--no-store"); o.code != 0 || !strings.Contains(o.stdout, "tpcb on PostgreSQL") {
		t.Fatalf("run: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "bench.db")); err == nil {
		t.Error("the embedded database was made")
	}
	// A server that is not there is an error naming PostgreSQL, not a
	// run on SQLite.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	t.Setenv("PGHOST", "127.0.0.1")
	t.Setenv("PGPORT", strconv.Itoa(port))
	o := dbmark(t, ctx, "run", "tpcb", "-S", "-t", "5", "--no-store")
	oneLineError(t, o, "connect to PostgreSQL at 127.0.0.1:"+strconv.Itoa(port))
}

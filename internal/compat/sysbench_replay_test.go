package compat

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// The replay runs the commands of sysbench 1.0.20's own regression tests
// (its cram files, tests/t/*.t, for the OLTP scripts, the command line
// and fileio) through the real sysbench and through "dbmark sysbench",
// each from the same start (an empty database of its own, a fresh
// directory), and compares each
// command's exit code and the lines the cram file checks: standard output
// and standard error, with the figures that vary from run to run masked
// (what the cram files glob), and dbmark's own lines ("dbmark: ...", on
// standard error) left out.
//
// What the cram files do besides running sysbench (show the tables'
// definitions with mysql and psql) is not replayed here: TestSysbenchMariaDB
// and TestSysbenchPostgres compare the schemas both tools create.
//
// The tally, per cram file (commands; docs/sysbench.md keeps the same
// table, and the test logs the one it found with go test -v). "Adapted"
// files run their option on oltp_point_select against the test MariaDB in
// place of the cpu test and --mysql-dry-run, with a prepare and a cleanup
// around it:
//
//	file                              identical  different  not supported
//	script_oltp_read_write_mysql.t        24         0          0
//	script_oltp_point_select_mysql.t      12         0          0
//	script_oltp_delete_mysql.t            12         0          0
//	script_oltp_insert_mysql.t            12         0          0
//	script_bulk_insert_mysql.t             3         0          0
//	script_select_random_mysql.t           6         0          0
//	script_oltp_read_write_pgsql.t        12         0          0
//	script_oltp_point_select_pgsql.t      12         0          0
//	script_oltp_delete_pgsql.t            12         0          0
//	script_oltp_insert_pgsql.t            12         0          0
//	script_bulk_insert_pgsql.t             3         0          0
//	script_select_random_pgsql.t           6         0          0
//	script_oltp_help.t                     1         0          0
//	cmdline.t                              6         0         24
//	cmd_prepare.t                          1         0          1
//	cmd_run.t                              1         0          1
//	cmd_cleanup.t                          1         0          1
//	opt_help.t                             1         0          1
//	opt_version.t                          1         0          1
//	test_fileio.t                         35         0          0
//	opt_rate.t (adapted)                   3         0          0
//	opt_report_interval.t (adapted)        3         0          1
//	opt_report_checkpoints.t (adapted)     3         0          1
//
// No difference remains (replayDifferent would list one, with its
// reason); the commands not supported are replaySkipped's: they need
// sysbench's Lua (a script of one's own, on standard input, custom
// commands, a script's own options), the build's own files, or the cpu
// test.
var replaySkipped = map[string][]string{
	"cmdline.t": {
		"sysbench --unknown (a script on standard input)", "sysbench (a script on standard input)",
		"sysbench run (a script on standard input)", "sysbench --events=1 cmdline.lua", "sysbench --events=1 cmdline.lua run",
		"sysbench cmdline.lua", "sysbench cmdline.lua help", "sysbench cmdline.lua prepare",
		"sysbench --non-existing-option=3 cmdline.lua prepare", "sysbench cmdline.lua --events=1 run",
		"sysbench cmdline.lua cleanup", "sysbench cmdline.lua help (an empty script)", "sysbench cmdline.lua help (a bad options table)",
		"custom commands: wrong structure", "custom commands: a missing function", "sysbench --threads=2 cmdline.lua cmd1",
		"sysbench --threads=2 cmdline.lua cmd2", "sysbench --threads=2 cmdline.lua prepare", "sysbench --threads=2 cmdline.lua cmd3",
		"sysbench --opt1 --opt2=val cmdline.lua (argv)", "sysbench - (standard input)", "a module on LUA_PATH (4 cases)",
		"--bool-opt of a script (8 cases)", "sysbench --opt1 --opt2=val cmdline.lua prepare (argv)",
	},
	"cmd_prepare.t": {"sysbench cmd_prepare.lua prepare"},
	"cmd_run.t":     {"sysbench --verbosity=0 cmd_run.lua run"},
	"cmd_cleanup.t": {"sysbench cmd_cleanup.lua cleanup"},
	"opt_help.t":    {"the help_drv_*.t file of each driver"},
	"opt_version.t": {"the version against the build's SBTEST_VERSION_STRING"},
	// The adapted files' second command runs the cpu test.
	"opt_report_interval.t":    {"sysbench cpu --report-interval=1 --time=2 run"},
	"opt_report_checkpoints.t": {"sysbench cpu --report-checkpoints=1 --time=2 run"},
}

// replayDifferent are the steps whose remaining difference is known, by
// file and step, with the reason.
var replayDifferent = map[string]string{}

// step is one sysbench command of a cram file.
type step struct {
	args []string
	// check is what is compared: "out" (exit code, stdout, stderr),
	// "code" (the exit code: the cram file sends the output to /dev/null)
	// or "grep:RE" (the exit code and the lines of stdout matching RE).
	check string
	// counts masks the integer counts of a run whose work varies (bulk
	// inserts sent as buffers fill), as the cram file matches them.
	counts bool
	// live keeps the --report-interval lines (their figures masked).
	live bool
	// sed deletes the lines from the first matching this to the next
	// matching sedTo, as opt_help.t does.
	sed, sedTo string
}

// scriptDir is where the Debian package puts sysbench's scripts; the cram
// files name the scripts by path.
const scriptDir = "/usr/share/sysbench"

func script(name string) string { return scriptDir + "/" + name + ".lua" }

// oltpSteps are script_oltp_common.sh's commands.
func oltpSteps(path string, db []string, extra ...string) []step {
	with := func(a ...[]string) []string { return slices.Concat(a...) }
	seq := with([]string{path}, db, []string{"--tables=8", "--threads=1"}, extra)
	par := with([]string{path}, db, []string{"--tables=8", "--threads=2"}, extra)
	one := with([]string{path}, db, extra, []string{"--tables=1"})
	ai := with(one, []string{"--auto-inc=off", "--verbosity=1"})
	return []step{
		{args: with(seq, []string{"prepare"}), check: "out"},
		{args: with(seq, []string{"prewarm"}), check: "out"},
		{args: with(seq, []string{"cleanup"}), check: "out"},
		{args: with(par, []string{"prepare"}), check: "code"},
		{args: with(par, []string{"prewarm"}), check: "code"},
		{args: with([]string{"--events=100"}, par, []string{"run"}), check: "out"},
		{args: with(par, []string{"cleanup"}), check: "code"},
		{args: with([]string{"--create-secondary=off"}, one, []string{"prepare"}), check: "out"},
		{args: with(one, []string{"cleanup"}), check: "out"},
		{args: with(ai, []string{"prepare"}), check: "out"},
		{args: with(ai, []string{"run"}), check: "out"},
		{args: with(ai, []string{"cleanup"}), check: "out"},
	}
}

func bulkSteps(db []string) []step {
	args := slices.Concat([]string{script("bulk_insert")}, db, []string{"--threads=2", "--verbosity=1"})
	return []step{
		{args: slices.Concat(args, []string{"prepare"}), check: "out"},
		{args: slices.Concat(args, []string{"--events=100", "--verbosity=3", "run"}), check: "out", counts: true},
		{args: slices.Concat(args, []string{"cleanup"}), check: "out"},
	}
}

func selectRandomSteps(db []string) []step {
	var out []step
	for _, test := range []string{"select_random_points", "select_random_ranges"} {
		args := slices.Concat([]string{script(test)}, db, []string{"--tables=1"})
		out = append(out,
			step{args: slices.Concat(args, []string{"prepare"}), check: "out"},
			step{args: slices.Concat(args, []string{"--events=100", "run"}), check: "out"},
			step{args: slices.Concat(args, []string{"cleanup"}), check: "out"})
	}
	return out
}

// optSteps are the cram files of --rate, --report-interval and
// --report-checkpoints, with oltp_point_select on the test server in
// place of the cpu test and of --mysql-dry-run, which dbmark does not run.
func optSteps(my []string) []replayFile {
	ps := slices.Concat([]string{script("oltp_point_select")}, my, []string{"--table-size=1000"})
	with := func(a ...string) []string { return slices.Concat(ps, a) }
	around := func(steps ...step) []step {
		return slices.Concat([]step{{args: with("prepare"), check: "code"}}, steps, []step{{args: with("cleanup"), check: "code"}})
	}
	return []replayFile{
		// The exit code only: on a loaded machine sysbench itself may end
		// before it prints its "event queue is full" line.
		{name: "opt_rate.t", driver: "mysql", steps: around(step{args: with("--rate=2000000000", "--time=2", "run", "--verbosity=1"), check: "code"})},
		{name: "opt_report_interval.t", driver: "mysql", steps: around(step{args: with("--time=3", "--events=0", "--report-interval=1", "run"), check: `grep:^\[ 2s \]`, live: true})},
		{name: "opt_report_checkpoints.t", driver: "mysql", steps: around(step{args: with("--time=3", "--events=0", "--report-checkpoints=1,2", "run"), check: "grep:(Checkpoint report|SQL statistics)"})},
	}
}

// fileioSteps are test_fileio.t's commands, in its order.
func fileioSteps() []step {
	f := []string{"fileio", "--file-num=4", "--file-total-size=32M"}
	w := func(a ...string) []string { return slices.Concat(f, a) }
	v2 := w("--verbosity=2")
	mis := w("--verbosity=2", "--file-total-size=1M", "--file-num=128", "--file-block-size=4097", "--events=2")
	ex := w("--file-total-size=16K", "--file-num=1")
	gh := []string{"fileio", "--file-total-size=160K", "--file-num=10", "--file-test-mode=seqwr", "--file-fsync-freq=0", "--file-fsync-end=1", "--events=0", "--time=1"}
	s := func(check string, args ...string) step { return step{args: args, check: check} }
	return []step{
		s("out", w("prepare")...),
		s("grep:FATAL", w("run")...),
		s("out", w("--events=150", "--file-test-mode=rndrw", "run")...),
		s("out", w("--events=150", "--file-test-mode=rndrd", "run")...),
		s("out", w("--events=150", "--file-test-mode=seqrd", "run")...),
		s("out", w("--events=150", "--file-test-mode=rndwr", "run")...),
		s("grep:Validation", w("--events=150", "--file-test-mode=rndwr", "--validate", "run")...),
		s("out", w("--events=150", "--file-test-mode=foo", "run")...),
		s("out", w("cleanup")...),
		s("out", w("--file-test-mode=rndrw", "--verbosity=2", "run")...),
		// GH-196: the files' sizes are checked before a run.
		s("out", slices.Concat(v2, []string{"--file-total-size=1M", "prepare"})...),
		s("out", slices.Concat(v2, []string{"--file-test-mode=rndwr", "--events=1", "run"})...),
		s("out", slices.Concat(v2, []string{"cleanup"})...),
		s("out", slices.Concat(v2, []string{"--file-num=8", "prepare"})...),
		s("out", slices.Concat(v2, []string{"--file-test-mode=rndwr", "--events=1", "run"})...),
		s("out", slices.Concat(v2, []string{"--file-num=8", "cleanup"})...),
		s("out", slices.Concat(v2, []string{"--file-total-size=1M", "prepare"})...),
		s("out", slices.Concat(v2, []string{"--file-test-mode=seqwr", "--events=1", "run"})...),
		s("out", slices.Concat(v2, []string{"cleanup"})...),
		// GH-198: files that are no whole number of blocks.
		s("out", slices.Concat(mis, []string{"--file-total-size=1M", "prepare"})...),
		s("out", slices.Concat(mis, []string{"--file-test-mode=seqrd", "run"})...),
		s("out", slices.Concat(mis, []string{"--file-test-mode=rndrd", "run"})...),
		s("out", slices.Concat(mis, []string{"cleanup"})...),
		// Extra file flags.
		s("out", slices.Concat(ex, []string{"--file-extra-flags=", "prepare"})...),
		s("out", slices.Concat(ex, []string{"--file-extra-flags=sync", "prepare"})...),
		s("out", slices.Concat(ex, []string{"--file-extra-flags=dsync", "prepare"})...),
		s("out", slices.Concat(ex, []string{"--file-extra-flags=dsync,sync", "prepare"})...),
		s("out", slices.Concat(ex, []string{"--file-extra-flags=", "cleanup"})...),
		// GH-229: --file-fsync-freq=0 keeps the fsync at the end.
		s("out", slices.Concat(gh, []string{"prepare"})...),
		{args: slices.Concat(gh, []string{"run"}), check: "out", counts: true}, // a time limit: cram globs the counts
		{args: slices.Concat(gh, []string{"--file-fsync-end=off", "run"}), check: "out", counts: true},
		s("out", slices.Concat(gh, []string{"cleanup"})...),
		// And what the file checks with ls: the files prepare made, none left by cleanup.
		s("out", w("--verbosity=2", "prepare")...),
		s("ls", "test_file.0", "test_file.1", "test_file.2", "test_file.3"),
		s("out", w("--verbosity=2", "cleanup")...),
	}
}

// replayFile is one cram file's commands.
type replayFile struct {
	name   string
	driver string // "mysql", "pgsql", or "" for none
	dir    bool   // runs in a fresh directory (fileio's files)
	steps  []step
}

func replayFiles(my, pg []string) []replayFile {
	var files []replayFile
	// The OLTP files run their commands on tables of 2000 rows instead of
	// the default 10000, to keep the replay within a few minutes;
	// DBMARK_SYSBENCH_REPLAY_FULL=1 replays them at the cram files' sizes.
	size := []string{"--table-size=2000"}
	if os.Getenv("DBMARK_SYSBENCH_REPLAY_FULL") != "" {
		size = nil
	}
	oltpOf := func(path string, db []string, extra ...string) []step {
		return oltpSteps(path, db, slices.Concat(extra, size)...)
	}
	oltp := func(name, drv string, db []string, path string, extra ...string) {
		steps := oltpOf(path, db, extra...)
		if strings.Contains(path, "oltp_delete") {
			// Which DELETEs find a row is random: cram globs the counts.
			for i := range steps {
				steps[i].counts = true
			}
		}
		files = append(files, replayFile{name: name, driver: drv, steps: steps})
	}
	if my != nil {
		// The read/write file runs the common part twice: MyISAM, then InnoDB.
		rw := slices.Concat(oltpOf(script("oltp_read_write"), slices.Concat(my, []string{"--mysql-storage-engine=myisam"}), "--threads=1"),
			oltpOf(script("oltp_read_write"), slices.Concat(my, []string{"--mysql-storage-engine=innodb"})))
		files = append(files, replayFile{name: "script_oltp_read_write_mysql.t", driver: "mysql", steps: rw})
		oltp("script_oltp_point_select_mysql.t", "mysql", my, script("oltp_point_select"))
		oltp("script_oltp_delete_mysql.t", "mysql", my, script("oltp_delete"))
		oltp("script_oltp_insert_mysql.t", "mysql", my, script("oltp_insert"))
		files = append(files, replayFile{name: "script_bulk_insert_mysql.t", driver: "mysql", steps: bulkSteps(my)},
			replayFile{name: "script_select_random_mysql.t", driver: "mysql", steps: selectRandomSteps(my)})
		files = append(files, optSteps(my)...)
	}
	if pg != nil {
		files = append(files, replayFile{name: "script_oltp_read_write_pgsql.t", driver: "pgsql", steps: oltpOf(script("oltp_read_write"), pg, "--threads=1")})
		oltp("script_oltp_point_select_pgsql.t", "pgsql", pg, script("oltp_point_select"))
		oltp("script_oltp_delete_pgsql.t", "pgsql", pg, script("oltp_delete"))
		oltp("script_oltp_insert_pgsql.t", "pgsql", pg, script("oltp_insert"))
		files = append(files, replayFile{name: "script_bulk_insert_pgsql.t", driver: "pgsql", steps: bulkSteps(pg)},
			replayFile{name: "script_select_random_pgsql.t", driver: "pgsql", steps: selectRandomSteps(pg)})
	}
	files = append(files,
		replayFile{name: "script_oltp_help.t", steps: []step{{args: []string{script("oltp_read_write"), "help"}, check: "out"}}},
		replayFile{name: "cmdline.t", dir: true, steps: []step{
			{args: []string{"foo", "bar"}, check: "out"},
			{args: []string{"foo", "bar", "baz"}, check: "out"},
			{args: []string{"fileio"}, check: "out"},
			{args: []string{"--help", "foo"}, check: "grep:Usage:"},
			{args: []string{"fileio", "--invalid-option", "prepare"}, check: "out"},
			{args: []string{"run"}, check: "out"},
		}},
		replayFile{name: "cmd_prepare.t", steps: []step{{args: []string{"prepare"}, check: "out"}}},
		replayFile{name: "cmd_run.t", steps: []step{{args: []string{"run"}, check: "out"}}},
		replayFile{name: "cmd_cleanup.t", steps: []step{{args: []string{"cleanup"}, check: "out"}}},
		replayFile{name: "opt_help.t", steps: []step{{args: []string{"--help"}, check: "out", sed: "Compiled-in database drivers:", sedTo: "Compiled-in tests:"}}},
		replayFile{name: "opt_version.t", steps: []step{{args: []string{"--version"}, check: "out"}}},
		replayFile{name: "test_fileio.t", dir: true, steps: fileioSteps()},
	)
	return files
}

// outcome is what one tool did with one step.
type outcome struct {
	code           int
	stdout, stderr string
}

var (
	reBanner   = regexp.MustCompile(`(?m)^sysbench [0-9.]+ \(.*\)$`)
	reFloat    = regexp.MustCompile(` *[0-9]+\.[0-9]+`)
	reLuaPlace = regexp.MustCompile(`/usr/share/sysbench/[a-z_]+\.lua:[0-9]+: `)
	reCount    = regexp.MustCompile(`(?m)^(\s+(write|other|total|queries|total number of events):\s+)[0-9]+`)
	reDbmark   = regexp.MustCompile(`(?m)^dbmark: .*\n`)
	reLiveLine = regexp.MustCompile(`(?m)^\[ [0-9]+s \] .*\n`)
	reReplayDB = regexp.MustCompile(replayDB + `[0-9]+_(sb|db)`)
)

// masked is o as the cram file compares it.
func (s step) masked(o outcome) outcome {
	norm := func(t string) string {
		t = reBanner.ReplaceAllString(t, "sysbench VERSION (*)")
		t = reReplayDB.ReplaceAllString(t, "DB")
		t = reLuaPlace.ReplaceAllString(t, "")
		if !s.live {
			t = reLiveLine.ReplaceAllString(t, "")
		}
		t = reFloat.ReplaceAllString(t, " N.N")
		if s.counts {
			t = reCount.ReplaceAllString(t, "${1}N")
		}
		return t
	}
	o.stdout, o.stderr = norm(o.stdout), norm(reDbmark.ReplaceAllString(o.stderr, ""))
	if s.sed != "" {
		var keep []string
		in := false
		for _, l := range strings.SplitAfter(o.stdout, "\n") {
			if strings.HasPrefix(l, s.sed) {
				in = true
			}
			if !in {
				keep = append(keep, l)
			}
			if in && strings.HasPrefix(l, s.sedTo) {
				in = false
			}
		}
		o.stdout = strings.Join(keep, "")
	}
	switch {
	case s.check == "code":
		o.stdout, o.stderr = "", ""
	case strings.HasPrefix(s.check, "grep:"):
		re := regexp.MustCompile(strings.TrimPrefix(s.check, "grep:"))
		var keep []string
		for _, l := range strings.Split(o.stdout, "\n") {
			if re.MatchString(l) {
				keep = append(keep, l)
			}
		}
		o.stdout, o.stderr = strings.Join(keep, "\n"), ""
	}
	return o
}

func runSysbench(t *testing.T, args []string) outcome {
	t.Helper()
	path, err := sysbenchPath()
	if err != nil {
		return outcome{code: -1, stderr: err.Error()}
	}
	ctx, cancel := context.WithTimeout(t.Context(), cmdLimit)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		// Not t.Fatal: this may run off the test's goroutine.
		return outcome{code: -1, stderr: fmt.Sprintf("sysbench %s: %v", strings.Join(redact(args), " "), err)}
	}
	return outcome{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func runDbmarkSysbench(t *testing.T, args []string) outcome {
	t.Helper()
	o := dbmarkCode(t, t.Context(), append([]string{"sysbench"}, args...)...)
	return outcome{code: o.code, stdout: o.stdout, stderr: o.stderr}
}

// lsOutcome is the "ls" a cram file runs: which of the files are there.
func lsOutcome(names []string) outcome {
	var there []string
	for _, n := range names {
		if _, err := os.Stat(n); err == nil {
			there = append(there, n)
		}
	}
	return outcome{stdout: strings.Join(there, "\n")}
}

// replayArgs are the driver options of the test servers, for the
// database db; nil for a server that is not there.
func replayArgs(db string) (my, pg []string) {
	if host := os.Getenv("DBMARK_TEST_MY_HOST"); host != "" {
		my = []string{"--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + os.Getenv("DBMARK_TEST_MY_PORT"),
			"--mysql-user=" + os.Getenv("DBMARK_TEST_MY_USER"), "--mysql-password=" + os.Getenv("DBMARK_TEST_MY_PASSWORD"), "--mysql-db=" + db}
	}
	if host := os.Getenv("DBMARK_TEST_PG_HOST"); host != "" {
		pg = []string{"--db-driver=pgsql", "--pgsql-host=" + host, "--pgsql-port=" + os.Getenv("DBMARK_TEST_PG_PORT"),
			"--pgsql-user=" + os.Getenv("DBMARK_TEST_PG_USER"), "--pgsql-password=" + os.Getenv("DBMARK_TEST_PG_PASSWORD"), "--pgsql-db=" + db}
	}
	return my, pg
}

// createReplayDB creates the empty database db on the test server of
// driver ("mysql" or "pgsql"), and drops it when t ends.
func createReplayDB(t *testing.T, driver, db string) {
	t.Helper()
	switch driver {
	case "mysql":
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.DBName = os.Getenv("DBMARK_TEST_MY_USER"), os.Getenv("DBMARK_TEST_MY_PASSWORD"), "tcp", os.Getenv("DBMARK_TEST_MY_DB")
		cfg.Addr = net.JoinHostPort(os.Getenv("DBMARK_TEST_MY_HOST"), os.Getenv("DBMARK_TEST_MY_PORT"))
		c, err := openSQL(t.Context(), "mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatalf("MariaDB: %v", err)
		}
		mustExec(t, c, "DROP DATABASE IF EXISTS "+db)
		mustExec(t, c, "CREATE DATABASE "+db)
		t.Cleanup(func() { _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db); c.Close() })
	case "pgsql":
		u := fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", os.Getenv("DBMARK_TEST_PG_USER"), os.Getenv("DBMARK_TEST_PG_PASSWORD"),
			net.JoinHostPort(os.Getenv("DBMARK_TEST_PG_HOST"), os.Getenv("DBMARK_TEST_PG_PORT")), os.Getenv("DBMARK_TEST_PG_DB"))
		c, err := pgx.Connect(t.Context(), u)
		if err != nil {
			t.Fatalf("PostgreSQL: %v", err)
		}
		p := pgConn{c}
		mustExec(t, p, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
		mustExec(t, p, "CREATE DATABASE "+db)
		t.Cleanup(func() { _ = p.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)"); p.Close() })
	default:
		t.Fatalf("no test server for driver %q", driver)
	}
}

// TestSysbenchReplay replays sysbench 1.0.20's cram files through both
// tools and keeps the tally of identical, different and not supported
// commands per file.
func TestSysbenchReplay(t *testing.T) {
	if _, err := sysbenchPath(); err != nil {
		t.Skipf("sysbench not found (%v): install the sysbench package to run the replay", err)
	}
	if _, err := os.Stat(script("oltp_read_write")); err != nil {
		t.Skipf("sysbench's scripts are not in %s: %v", scriptDir, err)
	}
	t.Setenv("DBMARK_HOME", t.TempDir())
	// Each file's commands name the database placeholder; a file of a
	// server runs them with a database of its own for each tool, so
	// that both tools run its commands at once, from the same start (an
	// empty database), as cram would, and the files run at once too. The
	// files in a directory run one tool after the other (the in-process
	// dbmark works in the test's directory).
	const placeholder = replayDB + "0_sb"
	var mu sync.Mutex
	tally := map[string]string{}
	files := replayFiles(replayArgs(placeholder))
	replay := func(t *testing.T, k int, f replayFile) {
		t.Run(f.name, func(t *testing.T) {
			var sbOut, dbOut []outcome
			dbmarkSteps := f
			if f.driver != "" {
				t.Parallel()
				sb, db := fmt.Sprintf("%s%d_sb", replayDB, k+1), fmt.Sprintf("%s%d_db", replayDB, k+1)
				createReplayDB(t, f.driver, sb)
				createReplayDB(t, f.driver, db)
				f.steps, dbmarkSteps.steps = stepsInDB(f.steps, placeholder, sb), stepsInDB(f.steps, placeholder, db)
			}
			if f.dir || f.driver == "" {
				sbOut = replaySteps(t, f, runSysbench)
				dbOut = replaySteps(t, dbmarkSteps, runDbmarkSysbench)
			} else {
				done := make(chan struct{})
				go func() {
					defer close(done)
					sbOut = replaySteps(t, f, runSysbench)
				}()
				dbOut = replaySteps(t, dbmarkSteps, runDbmarkSysbench)
				<-done
			}
			same, diff := 0, 0
			for i, s := range f.steps {
				id := fmt.Sprintf("%s#%d", f.name, i+1)
				sb, db := sbOut[i], dbOut[i]
				why, known := replayDifferent[id]
				switch {
				case sb == db && known:
					same++
					t.Errorf("%s (%s) is now identical; take it out of replayDifferent (%s)", id, strings.Join(redact(s.args), " "), why)
				case sb == db:
					same++
				case known:
					diff++
					t.Logf("%s differs, as known: %s", id, why)
				default:
					diff++
					t.Errorf("%s: sysbench %s\n  sysbench: exit %d\n%s%s  dbmark:   exit %d\n%s%s", id, strings.Join(redact(s.args), " "),
						sb.code, indent(sb.stdout), indent(sb.stderr), db.code, indent(db.stdout), indent(db.stderr))
				}
			}
			mu.Lock()
			tally[f.name] = fmt.Sprintf("%-34s %9d %10d %13d", f.name, same, diff, len(replaySkipped[f.name]))
			mu.Unlock()
		})
	}
	// The files without a database, which change directory, one after the
	// other; then the servers' files, as many at once as -test.parallel
	// lets, in their databases of their own.
	for k, f := range files {
		if f.driver == "" {
			replay(t, k, f)
		}
	}
	t.Run("servers", func(t *testing.T) {
		for k, f := range files {
			if f.driver != "" {
				replay(t, k, f)
			}
		}
	})
	var lines []string
	for _, f := range files {
		if l, ok := tally[f.name]; ok {
			lines = append(lines, l)
		}
	}
	t.Logf("replay of sysbench 1.0.20's cram files (commands):\n%-34s %9s %10s %13s\n%s", "file", "identical", "different", "not supported", strings.Join(lines, "\n"))
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}

// replayDB starts the names of the replay's databases: one per tool and
// file, replayDB + "<file>_sb" and replayDB + "<file>_db".
const replayDB = "dbmark_replay_"

// stepsInDB is steps with the database old in their arguments replaced by new.
func stepsInDB(steps []step, old, new string) []step {
	out := make([]step, len(steps))
	for i, s := range steps {
		s.args = slices.Clone(s.args)
		for j, a := range s.args {
			s.args[j] = strings.ReplaceAll(a, old, new)
		}
		out[i] = s
	}
	return out
}

// replaySteps runs f's steps with one tool and returns what each gave, as
// compared.
func replaySteps(t *testing.T, f replayFile, run func(*testing.T, []string) outcome) []outcome {
	t.Helper()
	if f.dir {
		t.Chdir(t.TempDir())
	}
	out := make([]outcome, len(f.steps))
	for i, s := range f.steps {
		if s.check == "ls" {
			out[i] = lsOutcome(s.args)
			continue
		}
		out[i] = s.masked(run(t, s.args))
	}
	return out
}

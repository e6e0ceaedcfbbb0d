package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
)

type outcome struct {
	code           int
	stdout, stderr string
}

// dbmark runs the CLI in-process with a private data directory.
func dbmark(t *testing.T, ctx context.Context, args ...string) outcome {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(ctx, args, &out, &errb)
	return outcome{code, out.String(), errb.String()}
}

func home(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("DBMARK_HOME", dir)
	t.Setenv("DBMARK_TARGET", "")
	t.Setenv("DBMARK_STORE", "")
	return dir
}

// oneLineError checks the bad-input contract: exit 1, one line on stderr
// naming the problem, no stack trace, nothing on stdout.
func oneLineError(t *testing.T, o outcome, want string) {
	t.Helper()
	if o.code != 1 {
		t.Fatalf("exit %d, want 1; stderr: %s", o.code, o.stderr)
	}
	lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "dbmark: ") || !strings.Contains(last, want) {
		t.Fatalf("stderr %q: want one line naming %q", o.stderr, want)
	}
	for _, l := range lines {
		if strings.Contains(l, "goroutine ") || strings.Contains(l, "panic") {
			t.Fatalf("stack trace in output: %s", o.stderr)
		}
	}
}

// readResult reads a result document written with --json.
func readResult(t *testing.T, path string) *result.Result {
	t.Helper()
	r, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// prepared runs cleanup and prepare for workload with args, and cleanup
// again when the test ends.
func prepared(t *testing.T, workload string, args ...string) {
	t.Helper()
	ctx := context.Background()
	dbmark(t, ctx, append([]string{"cleanup", workload}, args...)...)
	if o := dbmark(t, ctx, append([]string{"prepare", workload}, args...)...); o.code != 0 {
		t.Fatalf("prepare: %s", o.stderr)
	}
	t.Cleanup(func() { dbmark(t, ctx, append([]string{"cleanup", workload}, args...)...) })
}

func TestBadInputGivesOneClearLine(t *testing.T) {
	home(t)
	ctx := context.Background()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "nosuch"}, `unknown workload "nosuch"`},
		{[]string{"run"}, "needs a workload"},
		{[]string{"run", "oltp_read_only", "--bogus"}, "unknown flag: --bogus"},
		// A second server never silently wins over the first: several are
		// a cluster's servers, of one engine, never embedded.
		{[]string{"run", "oltp_read_only", "--target", "sqlite:///tmp/a.db", "--target", "sqlite:///tmp/b.db"}, "--target given 2 times: sqlite is an embedded engine"},
		{[]string{"run", "oltp_read_only", "--target", "postgres://u@127.0.0.1:1/d", "--target", "mysql://u@127.0.0.1:1/d"}, "--target mysql://u@127.0.0.1:1/d is mysql, the first --target postgres: a run's servers are of one engine"},
		{[]string{"prepare", "oltp_read_only", "--target", "postgres://u@127.0.0.1:1/d", "--target", "mysql://u@127.0.0.1:1/d"}, "a run's servers are of one engine"},
		{[]string{"run", "oltp_read_only", "--target", "postgres://u@127.0.0.1:1/d", "--target", "postgres://u@127.0.0.1:99999/d"}, "invalid port"},
		{[]string{"run", "oltp_read_only", "--target", "mysql://u@127.0.0.1:1/d", "--target", "mysql://u@127.0.0.1:3x/d"}, `invalid port ":3x"`},
		{[]string{"run", "oltp_read_only", "--target", "postgres://u@127.0.0.1:1/d", "--target", "postgres://u@127.0.0.1:2/d", "--server-set", "work_mem=8MB"}, "--server-set changes one server's settings, and --target names several"},
		{[]string{"run", "oltp_read_only", "--threads", "0"}, "--threads 0"},
		{[]string{"run", "oltp_read_only", "--tables", "0"}, "--tables 0"},
		{[]string{"run", "oltp_read_only", "--stall-timeout", "-1s"}, "must not be negative"},
		{[]string{"run", "oltp_read_only", "--rand-type", "lumpy"}, "lumpy"},
		{[]string{"run", "oltp_read_only", "--time", "soon"}, "not a duration"},
		{[]string{"run", "oltp_read_only", "--percentiles", "50,200"}, "percentile"},
		{[]string{"run", "oltp_read_only", "--rate", "-1"}, "--rate"},
		{[]string{"run", "oltp_read_only", "--time", "0"}, "no limit"},
		{[]string{"run", "oltp_read_only", "--target", "postgres://%zz"}, "bad target URL"},
		{[]string{"run", "oltp_read_only", "--target", "redis://127.0.0.1/0"}, `unknown scheme "redis"`},
		{[]string{"run", "oltp_read_only", "--target", "postgres://u@127.0.0.1:1/db"}, "connection refused"},
		{[]string{"run", "oltp_read_only", "--target", "mysql://u:secret@127.0.0.1:1/db"}, "connection refused"},
		{[]string{"run", "oltp_read_only", "--target", "postgres://u@127.0.0.1/db", "--pg-mode", "turbo"}, "--pg-mode"},
		{[]string{"run", "oltp_read_only", "--target", "sqlite:///no/such/dir/x.db"}, "does not exist"},
		{[]string{"run", "oltp_read_only", "--target", "mysql://u@127.0.0.1/db", "--transport", "epoll"}, `--transport "epoll": must be auto`},
		{[]string{"run", "oltp_read_only", "--transport", "blocking"}, "--transport blocking: SQLite runs inside dbmark"},
		{[]string{"run", "fileio", "--transport", "blocking"}, "unknown flag: --transport"},
		{[]string{"results", "show", "12345"}, "no result"},
		{[]string{"results", "export", "1", "--format", "xml"}, "--format"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			o := dbmark(t, ctx, c.args...)
			oneLineError(t, o, c.want)
			if strings.Contains(o.stderr, "secret") {
				t.Fatalf("password in output: %s", o.stderr)
			}
		})
	}
}

func TestNotPreparedSaysWhatToDo(t *testing.T) {
	dir := home(t)
	tgt := "sqlite://" + filepath.Join(dir, "bench-explicit.db")
	o := dbmark(t, context.Background(), "run", "oltp_read_only", "--target", tgt, "--time", "1")
	oneLineError(t, o, "run prepare")
}

func TestRunListShowExportDelete(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	tgt := "sqlite://" + filepath.Join(dir, "b.db")
	if o := dbmark(t, ctx, "prepare", "oltp_read_write", "--target", tgt, "--table_size", "500", "--tables", "2"); o.code != 0 {
		t.Fatalf("prepare: exit %d: %s", o.code, o.stderr)
	}
	jsonPath := filepath.Join(dir, "r.json")
	o := dbmark(t, ctx, "run", "oltp_read_write", "--target", tgt, "--table-size", "500", "--tables", "2",
		"--events", "300", "--time", "0", "--threads", "2", "--seed", "99", "--json", jsonPath, "--report-interval", "100ms")
	if o.code != 0 {
		t.Fatalf("run: exit %d: %s", o.code, o.stderr)
	}
	if !strings.Contains(o.stdout, "transactions:                        300") {
		t.Fatalf("summary lacks 300 transactions:\n%s", o.stdout)
	}
	r := readResult(t, jsonPath)
	if r.Seed != 99 || r.Status != result.StatusOK || r.Summary.Events != 300 || r.Workload.Options["table-size"] != "500" ||
		r.Workload.Options["point-selects"] != "10" || r.Target.Engine != "SQLite" || r.Target.Settings["journal_mode"] != "wal" {
		t.Fatalf("result document: seed %d status %s events %d options %v engine %s settings %v",
			r.Seed, r.Status, r.Summary.Events, r.Workload.Options, r.Target.Engine, r.Target.Settings["journal_mode"])
	}
	// The embedded engine works inside dbmark's process: its CPU is the
	// client's too, so the figure is never called client-limited.
	if c := r.Summary.Client; c == nil || c.PerEventUS <= 0 || !c.SharedMachine || !c.IncludesEngine || c.Limited ||
		!strings.Contains(o.stdout, "µs per event") || !strings.Contains(o.stdout, "(the embedded engine's work included)") {
		t.Fatalf("client CPU of an embedded run: %+v\n%s", c, o.stdout)
	}

	o = dbmark(t, ctx, "results", "list")
	if o.code != 0 || !strings.Contains(o.stdout, "oltp_read_write") || !strings.Contains(o.stdout, "ok") {
		t.Fatalf("results list: %d %s %s", o.code, o.stdout, o.stderr)
	}
	o = dbmark(t, ctx, "results", "show", r.ID[:8])
	if o.code != 0 || !strings.Contains(o.stdout, "transactions:                        300") {
		t.Fatalf("results show by uuid prefix: %d %s %s", o.code, o.stdout, o.stderr)
	}
	o = dbmark(t, ctx, "results", "export", "1", "--format", "json")
	var back result.Result
	if o.code != 0 || json.Unmarshal([]byte(o.stdout), &back) != nil || back.ID != r.ID {
		t.Fatalf("export json: %d %s", o.code, o.stderr)
	}
	o = dbmark(t, ctx, "results", "export", "1", "--format", "csv")
	lines := strings.Split(strings.TrimSpace(o.stdout), "\n")
	if o.code != 0 || len(lines) < 2 || !strings.HasPrefix(lines[0], "t_s,duration_s,warmup,tps") {
		t.Fatalf("export csv: %d %q", o.code, o.stdout)
	}
	o = dbmark(t, ctx, "results", "delete", "1")
	if o.code != 0 {
		t.Fatalf("delete: %d %s", o.code, o.stderr)
	}
	o = dbmark(t, ctx, "results", "show", "1")
	oneLineError(t, o, "no result")
}

func TestEmbeddedDefaultPreparesOnFirstUse(t *testing.T) {
	dir := home(t)
	o := dbmark(t, context.Background(), "run", "oltp_point_select", "--time", "300ms", "--table-size", "1000")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "bench.db")); err != nil {
		t.Fatalf("no embedded database in the data directory: %v", err)
	}
	if !strings.Contains(o.stderr, "preparing the embedded database") {
		t.Fatalf("no note about preparing: %s", o.stderr)
	}
	// The second run finds it prepared.
	o = dbmark(t, context.Background(), "run", "oltp_point_select", "--time", "300ms", "--table-size", "1000")
	if o.code != 0 || strings.Contains(o.stderr, "preparing") {
		t.Fatalf("second run: exit %d: %s", o.code, o.stderr)
	}
	// More tables than were prepared: the embedded database is prepared again.
	o = dbmark(t, context.Background(), "run", "oltp_point_select", "--time", "300ms", "--table-size", "1000", "--tables", "2")
	if o.code != 0 || !strings.Contains(o.stderr, "preparing") {
		t.Fatalf("run with more tables: exit %d: %s", o.code, o.stderr)
	}
}

// cancelOnLive cancels when the run prints its first live line, so the
// interrupt lands mid-run however long the setup took.
type cancelOnLive struct {
	bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnLive) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(" tps: ")) {
		w.cancel()
	}
	return w.Buffer.Write(p)
}

func TestInterruptKeepsThePartialResult(t *testing.T) {
	home(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOnLive{cancel: cancel}
	var errb bytes.Buffer
	code := cli.Main(ctx, []string{"run", "oltp_point_select", "--time", "60", "--table-size", "1000", "--report-interval", "200ms"}, out, &errb)
	if code != 130 {
		t.Fatalf("exit %d, want 130: %s", code, errb.String())
	}
	o := dbmark(t, context.Background(), "results", "list", "--status", "interrupted")
	if !strings.Contains(o.stdout, "interrupted") {
		t.Fatalf("interrupted run not stored: %s", o.stdout)
	}
}

func TestVersion(t *testing.T) {
	o := dbmark(t, context.Background(), "version")
	if o.code != 0 || !strings.HasPrefix(o.stdout, "dbmark ") || !strings.Contains(o.stdout, "revision") {
		t.Fatalf("version: %d %q", o.code, o.stdout)
	}
}

// Server tests: real PostgreSQL and MariaDB when the test command started them.

func serverURL(t *testing.T, env string) *url.URL {
	raw := os.Getenv(env)
	if raw == "" {
		t.Skipf("%s not set (make test starts the servers)", env)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestServerErrors(t *testing.T) {
	home(t)
	ctx := context.Background()
	t.Run("postgres missing database", func(t *testing.T) {
		u := serverURL(t, "DBMARK_TEST_POSTGRES")
		u.Path = "/no_such_db_dbmark"
		oneLineError(t, dbmark(t, ctx, "run", "oltp_read_only", "--target", u.String()), `database "no_such_db_dbmark" does not exist`)
	})
	t.Run("mysql wrong password", func(t *testing.T) {
		u := serverURL(t, "DBMARK_TEST_MYSQL")
		u.User = url.UserPassword(u.User.Username(), "wrong-secret")
		o := dbmark(t, ctx, "run", "oltp_read_only", "--target", u.String())
		oneLineError(t, o, "access denied")
		if strings.Contains(o.stderr, "wrong-secret") {
			t.Fatal("password in output")
		}
	})
	t.Run("mysql missing database", func(t *testing.T) {
		u := serverURL(t, "DBMARK_TEST_MYSQL")
		u.Path = "/no_such_db_dbmark"
		oneLineError(t, dbmark(t, ctx, "run", "oltp_read_only", "--target", u.String()), "does not exist")
	})
}

func TestServersEndToEnd(t *testing.T) {
	for _, env := range []string{"DBMARK_TEST_POSTGRES", "DBMARK_TEST_POSTGRES_SOCKET", "DBMARK_TEST_MYSQL", "DBMARK_TEST_MYSQL_SOCKET"} {
		t.Run(env, func(t *testing.T) {
			dir := home(t)
			u := serverURL(t, env)
			ctx := context.Background()
			// Tables of their own so parallel test packages do not collide.
			args := []string{"--target", u.String(), "--tables", "3", "--table-size", "2000", "--threads", "3"}
			prepared(t, "oltp_read_write", args...)
			jsonPath := filepath.Join(dir, "r.json")
			// 3 s: the run's edges (each client's first and last event)
			// and a loaded machine's stalls weigh a third as much on
			// events/s x mean latency as in a 1 s run.
			o := dbmark(t, ctx, append([]string{"run", "oltp_read_write", "--time", "3", "--json", jsonPath}, args...)...)
			if o.code != 0 {
				t.Fatalf("run: exit %d: %s", o.code, o.stderr)
			}
			r := readResult(t, jsonPath)
			b, _ := os.ReadFile(jsonPath)
			if r.Summary.Events == 0 || len(r.Target.Settings) < 50 || r.Target.Version == "" {
				t.Fatalf("events %d, %d settings, version %q", r.Summary.Events, len(r.Target.Settings), r.Target.Version)
			}
			if pw, ok := u.User.Password(); ok && strings.Contains(string(b), ":"+pw+"@") {
				t.Fatal("password in the result document")
			}
			// Little's law: the clients were all in flight.
			if c := r.Summary.Concurrency; c < 2.7 || len(r.Summary.Warnings) > 0 {
				t.Fatalf("effective concurrency %.2f of 3 clients, warnings %q", c, r.Summary.Warnings)
			}
			// The test servers run on this machine (loopback, socket).
			if c := r.Summary.Client; c == nil || c.PerEventUS <= 0 || !c.SharedMachine || c.IncludesEngine ||
				c.Limited != (c.MachineShare > result.ClientLimitedShare) {
				t.Fatalf("client CPU: %+v", c)
			}
			// Rate-limited point selects: open loop, with lag reported.
			o = dbmark(t, ctx, append([]string{"run", "oltp_point_select", "--time", "1", "--rate", "300", "--json", jsonPath}, args...)...)
			if o.code != 0 || !strings.Contains(o.stdout, "Schedule lag") {
				t.Fatalf("rate run: exit %d: %s %s", o.code, o.stdout, o.stderr)
			}
			// The transport ran is recorded: the engine's choice by default
			// (blocking to a MySQL server on this machine and to
			// PostgreSQL's socket for 3 clients, the poller transport to
			// PostgreSQL over TCP), another one when asked, with every client in flight on
			// it too.
			chosen, other, otherSays := "poller transport (auto)", "blocking", "blocking transport"
			switch {
			case strings.Contains(env, "MYSQL"):
				chosen, other, otherSays = "blocking transport (auto)", "go", "Go transport"
			case strings.HasSuffix(env, "_SOCKET"):
				chosen, other, otherSays = "blocking transport (auto)", "poller", "poller transport"
			}
			if r.Workload.Options["transport"] != "auto" || !strings.Contains(r.Target.Driver, chosen) {
				t.Fatalf("default transport recorded as %q, driver %q, want auto and %q", r.Workload.Options["transport"], r.Target.Driver, chosen)
			}
			// On the blocking transport each client has a processor of the
			// Go scheduler to itself, and two to spare; on the others, the
			// default.
			procs := func(r *result.Result, blocking bool) {
				t.Helper()
				if blocking && r.Environment.GoMaxProcs < 3+2 || !blocking && os.Getenv("GOMAXPROCS") == "" && r.Environment.GoMaxProcs != r.Environment.CPUs {
					t.Fatalf("GOMAXPROCS %d on %d CPUs for 3 clients, blocking transport %v", r.Environment.GoMaxProcs, r.Environment.CPUs, blocking)
				}
			}
			procs(r, strings.HasPrefix(chosen, "blocking"))
			// Beyond a few clients a processor (4 on PostgreSQL, 8 on
			// MySQL), auto's is the poller there too, with the runtime's
			// own processors, and every client in flight.
			if strings.HasPrefix(chosen, "blocking") {
				many := 4*runtime.NumCPU() + 1
				if strings.Contains(env, "MYSQL") {
					many = 8*runtime.NumCPU() + 1
				}
				o = dbmark(t, ctx, append(append([]string{"run", "oltp_point_select", "--time", "1", "--json", jsonPath}, args...), "--threads", strconv.Itoa(many))...)
				if o.code != 0 {
					t.Fatalf("%d clients: exit %d: %s", many, o.code, o.stderr)
				}
				r := readResult(t, jsonPath)
				if !strings.Contains(r.Target.Driver, "poller transport (auto)") || r.Run.Threads != many {
					t.Fatalf("%d clients: driver %q, %d clients recorded", many, r.Target.Driver, r.Run.Threads)
				}
				if c := r.Summary.Concurrency; c < 0.9*float64(many) {
					t.Fatalf("%d clients on the poller: effective concurrency %.2f", many, c)
				}
				if os.Getenv("GOMAXPROCS") == "" && r.Environment.GoMaxProcs != r.Environment.CPUs {
					t.Fatalf("%d clients on the poller: GOMAXPROCS %d on %d CPUs", many, r.Environment.GoMaxProcs, r.Environment.CPUs)
				}
			}
			o = dbmark(t, ctx, append([]string{"run", "oltp_point_select", "--time", "1", "--transport", other, "--json", jsonPath}, args...)...)
			if o.code != 0 {
				t.Fatalf("%s run: exit %d: %s", other, o.code, o.stderr)
			}
			r = readResult(t, jsonPath)
			if r.Workload.Options["transport"] != other || !strings.Contains(r.Target.Driver, otherSays) || strings.Contains(r.Target.Driver, "(auto)") {
				t.Fatalf("%s transport recorded as %q, driver %q", other, r.Workload.Options["transport"], r.Target.Driver)
			}
			if c := r.Summary.Concurrency; c < 2.7 || len(r.Summary.Warnings) > 0 {
				t.Fatalf("%s transport: effective concurrency %.2f of 3 clients, warnings %q", other, c, r.Summary.Warnings)
			}
			procs(r, other == "blocking")
		})
	}
}

func TestPostgresWrongPassword(t *testing.T) {
	home(t)
	u := serverURL(t, "DBMARK_TEST_POSTGRES")
	u.User = url.UserPassword(u.User.Username(), "wrong-secret")
	o := dbmark(t, context.Background(), "run", "oltp_read_only", "--target", u.String())
	oneLineError(t, o, "authentication failed")
	if strings.Contains(o.stderr, "wrong-secret") {
		t.Fatal("password in output")
	}
}

// ownDatabase makes database db afresh on u's server (drop is the
// engine's statement that drops it), drops it when the test ends, and
// gives u on it: what the test then finds by database is its own runs'
// alone, whatever other packages' tests run beside it.
func ownDatabase(t *testing.T, u *url.URL, db, drop string) *url.URL {
	t.Helper()
	admin := connect(t, u.String())
	for _, s := range []string{drop, "CREATE DATABASE " + db} {
		if err := admin.Exec(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = admin.Exec(context.Background(), drop) })
	own := *u
	own.Path = "/" + db
	return &own
}

// TestLostConnectionsReconnect kills the workers' sessions mid-run: the run
// reconnects, counts it, and finishes degraded, with exit code 0 (as
// README.md says) and the reconnect wait in its summary.
func TestLostConnectionsReconnect(t *testing.T) {
	// Each engine's run is in a database of its own: the victims are
	// found by database, and other packages' tests run beside this one.
	const db = "dbmark_reconnect"
	cases := []struct {
		env, victims, kill, drop string
	}{
		{"DBMARK_TEST_POSTGRES",
			"SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'SELECT c FROM sbtest%'",
			"SELECT pg_terminate_backend(%s)", "DROP DATABASE IF EXISTS " + db + " WITH (FORCE)"},
		{"DBMARK_TEST_MYSQL",
			"SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND id <> CONNECTION_ID() AND command = 'Execute'",
			"KILL CONNECTION %s", "DROP DATABASE IF EXISTS " + db},
	}
	for _, c := range cases {
		t.Run(c.env, func(t *testing.T) {
			dir := home(t)
			u := ownDatabase(t, serverURL(t, c.env), db, c.drop)
			ctx := context.Background()
			args := []string{"--target", u.String(), "--tables", "2", "--table-size", "1000"}
			prepared(t, "oltp_point_select", args...)

			app := cli.NewApp(io.Discard, io.Discard, nil)
			tg, err := app.Targets.Open(ctx, u.String(), target.Options{})
			if err != nil {
				t.Fatal(err)
			}
			killer, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer killer.Close()
			stop := make(chan struct{})
			killed := make(chan int, 1)
			go func() {
				n := 0
				defer func() { killed <- n }()
				time.Sleep(700 * time.Millisecond)
				for i := 0; i < 20 && n == 0; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if id, ok, err := killer.QueryRow(ctx, c.victims); err == nil && ok {
						if killer.Exec(ctx, fmt.Sprintf(c.kill, id)) == nil {
							n++
						}
					}
					time.Sleep(50 * time.Millisecond)
				}
			}()
			jsonPath := filepath.Join(dir, "r.json")
			o := dbmark(t, ctx, append([]string{"run", "oltp_point_select", "--threads", "2", "--time", "2", "--json", jsonPath}, args...)...)
			close(stop)
			if n := <-killed; n == 0 {
				t.Skip("no worker session was found to kill")
			}
			if o.code != 0 {
				t.Fatalf("run: exit %d: %s", o.code, o.stderr)
			}
			r := readResult(t, jsonPath)
			if r.Summary.Reconnects == 0 || r.Status != result.StatusDegraded || r.Summary.Events == 0 || len(r.Summary.Disconnects) == 0 {
				t.Fatalf("reconnects %d status %s events %d disconnects %v; want a reconnect and a degraded run", r.Summary.Reconnects, r.Status, r.Summary.Events, r.Summary.Disconnects)
			}
			for _, want := range []string{"status: degraded", "Reconnect wait (ms", "Latency including reconnects", "Disconnected clients"} {
				if !strings.Contains(o.stdout, want) {
					t.Errorf("the summary lacks %q:\n%s", want, o.stdout)
				}
			}
		})
	}
}

// TestPgbenchAliasHelp checks that each pgbench short flag is named once in
// its flag's help, whether or not the common flag's help already names it.
func TestPgbenchAliasHelp(t *testing.T) {
	home(t)
	o := dbmark(t, context.Background(), "run", "tpcb", "--help")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	for _, short := range []string{"-M", "-c", "-P"} {
		var line string
		for _, l := range strings.Split(o.stdout, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), short+", ") {
				line = l
			}
		}
		if n := strings.Count(line, "(pgbench's "+short+")"); n != 1 {
			t.Errorf("help for %s names pgbench's flag %d times: %q", short, n, line)
		}
	}
}

package compat

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbmark/dbmark/internal/cli"
)

// pgbench builds its tables in pgbenchDB, dbmark in tpcbDB, on the same
// server; the tests compare what each built.
const (
	pgbenchDB = "dbmark_pgbench"
	tpcbDB    = "dbmark_compat_tpcb"
)

type pgEnv struct {
	raw     string // the test server's URL
	pgbench string
	conn    map[string]*pgx.Conn
}

func newPGEnv(t *testing.T) *pgEnv {
	t.Helper()
	v := need(t, "PostgreSQL", "DBMARK_TEST_POSTGRES", "DBMARK_TEST_PG_HOST", "DBMARK_TEST_PG_PORT", "DBMARK_TEST_PG_USER", "DBMARK_TEST_PG_PASSWORD")
	bin, err := exec.LookPath("pgbench")
	if err != nil {
		t.Skip("pgbench is not installed")
	}
	e := &pgEnv{raw: v["DBMARK_TEST_POSTGRES"], pgbench: bin, conn: map[string]*pgx.Conn{}}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, e.raw)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, db := range []string{pgbenchDB, tpcbDB} {
		var n int
		if err := admin.QueryRow(ctx, "select count(*) from pg_database where datname = $1", db).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			if _, err := admin.Exec(ctx, "create database "+db); err != nil && !strings.Contains(err.Error(), "already exists") {
				t.Fatal(err)
			}
		}
		c, err := pgx.Connect(ctx, e.url(db))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		e.conn[db] = c
	}
	return e
}

// preparedPGEnv is newPGEnv with pgbench's tables at scale 1 built by
// each tool in its database, and a data directory of the test's own.
func preparedPGEnv(t *testing.T) *pgEnv {
	t.Helper()
	e := newPGEnv(t)
	t.Setenv("DBMARK_HOME", t.TempDir())
	e.run(t, t.TempDir(), "-i", "-q", "-s", "1")
	runDbmark(t, "prepare", "tpcb", "--target", e.url(tpcbDB), "-q", "-s", "1")
	return e
}

func (e *pgEnv) url(db string) string {
	u, _ := url.Parse(e.raw)
	u.Path = "/" + db
	return u.String()
}

// command is pgbench with args on pgbenchDB of the test server, in dir.
func (e *pgEnv) command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.pgbench, append(append([]string{"-h", os.Getenv("DBMARK_TEST_PG_HOST"), "-p", os.Getenv("DBMARK_TEST_PG_PORT"),
		"-U", os.Getenv("DBMARK_TEST_PG_USER")}, args...), pgbenchDB)...)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+os.Getenv("DBMARK_TEST_PG_PASSWORD"))
	cmd.Dir = dir
	return cmd
}

// run runs pgbench on pgbenchDB in dir.
func (e *pgEnv) run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdLimit)
	defer cancel()
	out, err := e.command(ctx, dir, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func runDbmark(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("dbmark %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	return out.String()
}

// describePgbench is what the schema of pgbench's tables is: columns with types
// and nullability, constraints, storage options, partitions, and the row
// counts and sums of the data.
func describePgbench(t *testing.T, c *pgx.Conn) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	q := func(key, sql string) {
		rows, err := c.Query(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		defer rows.Close()
		var lines []string
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, strings.TrimSpace(fmt.Sprintln(vals...)))
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		out[key] = strings.Join(lines, "\n")
	}
	q("columns", `select table_name, ordinal_position, column_name, data_type, character_maximum_length, is_nullable
		from information_schema.columns where table_name like 'pgbench%' order by 1, 2`)
	q("constraints", `select conrelid::regclass::text, conname, contype, pg_get_constraintdef(oid)
		from pg_constraint where conrelid::regclass::text like 'pgbench%' order by 1, 2`)
	q("relations", `select relname, relkind, relpersistence, coalesce(array_to_string(reloptions, ','), ''),
		coalesce(pg_get_expr(relpartbound, oid), ''), coalesce((select spcname from pg_tablespace s where s.oid = reltablespace), '')
		from pg_class where relname like 'pgbench%' order by 1`)
	q("partitioning", `select partrelid::regclass::text, partstrat, partnatts from pg_partitioned_table
		where partrelid::regclass::text like 'pgbench%' order by 1`)
	q("data", `select (select count(*) from pgbench_branches), (select count(*) from pgbench_tellers),
		(select count(*) from pgbench_accounts), (select count(*) from pgbench_history),
		(select sum(bid) from pgbench_tellers), (select sum(bid) from pgbench_accounts),
		(select count(*) from pgbench_accounts where filler = ''), (select count(*) from pgbench_tellers where filler is null),
		(select count(*) from pgbench_branches where filler is null), (select sum(abalance) from pgbench_accounts)`)
	return out
}

// TestPgbenchInitSchema builds the tables with pgbench -i and with dbmark
// prepare tpcb under the same options and compares everything about them.
func TestPgbenchInitSchema(t *testing.T) {
	e := newPGEnv(t)
	t.Setenv("DBMARK_HOME", t.TempDir())
	cases := [][]string{
		{"-s", "2"},
		{"-s", "2", "-F", "90", "--foreign-keys", "-I", "dtGvp"},
		{"-s", "2", "--partitions", "3", "--unlogged-tables"},
		{"-s", "1", "--partitions", "4", "--partition-method", "hash", "-F", "80"},
		{"-s", "20000", "-I", "dt"}, // tables only: bigint account ids
		{"-s", "1", "--tablespace", tablespaces[0], "--index-tablespace", tablespaces[1], "--foreign-keys"},
		{"-s", "1", "--tablespace", tablespaces[1], "--partitions", "2", "--index-tablespace", tablespaces[0]},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if slices.Contains(args, "--tablespace") {
				e.tablespaces(t)
			}
			e.run(t, t.TempDir(), append([]string{"-i", "-q"}, args...)...)
			runDbmark(t, append([]string{"prepare", "tpcb", "--target", e.url(tpcbDB), "-q"}, args...)...)
			want, got := describePgbench(t, e.conn[pgbenchDB]), describePgbench(t, e.conn[tpcbDB])
			for k := range want {
				if want[k] != got[k] {
					t.Errorf("%s differ:\npgbench:\n%s\ndbmark:\n%s", k, want[k], got[k])
				}
			}
			if !reflect.DeepEqual(want, got) {
				return
			}
			if !strings.Contains(want["columns"], "pgbench_accounts 1 aid") || !strings.Contains(want["relations"], "pgbench_tellers") {
				t.Fatalf("nothing compared: %v", want)
			}
		})
	}
}

// tablespaces are the names the init tests give tables and indexes; the
// second needs quoting.
var tablespaces = []string{"dbmark_tables", `dbmark "index" space`}

// tablespaces creates the test's tablespaces if missing, in place (inside
// the server's data directory, PostgreSQL 15's developer option), so no
// directory need be made for the server's user. It skips the test where
// that is not allowed.
func (e *pgEnv) tablespaces(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	c := e.conn[pgbenchDB]
	for _, name := range tablespaces {
		var n int
		if err := c.QueryRow(ctx, "select count(*) from pg_tablespace where spcname = $1", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			continue
		}
		if _, err := c.Exec(ctx, "set allow_in_place_tablespaces = on"); err != nil {
			t.Skipf("no in-place tablespaces on this server: %v", err)
		}
		if _, err := c.Exec(ctx, "create tablespace "+pgx.Identifier{name}.Sanitize()+" location ''"); err != nil {
			t.Skipf("cannot create tablespace %q: %v", name, err)
		}
	}
}

// TestPgbenchShowScript compares what pgbench prints for -b list and
// --show-script (on its standard error) with what dbmark prints (on its
// standard output).
func TestPgbenchShowScript(t *testing.T) {
	bin, err := exec.LookPath("pgbench")
	if err != nil {
		t.Skip("pgbench is not installed")
	}
	t.Setenv("DBMARK_HOME", t.TempDir())
	for _, args := range [][]string{{"-b", "list"}, {"--show-script=tpcb-like"}, {"--show-script", "sel"}, {"--show-script=simple-update"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cmd := exec.Command(bin, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("pgbench %v: %v\n%s", args, err, stderr.String())
			}
			want := stderr.String()
			if !strings.Contains(want, "<builtin: ") {
				t.Fatalf("pgbench printed no builtin: %q", want)
			}
			if got := runDbmark(t, append([]string{"run", "tpcb"}, args...)...); got != want {
				t.Fatalf("dbmark printed:\n%q\npgbench:\n%q", got, want)
			}
		})
	}
}

var logLine = regexp.MustCompile(`^\d+ \d+ (\d+|failed|skipped|serialization|deadlock) \d+ \d{10} \d{1,6}((?: \d+)*)$`)

// logShape is a log file set as its shape: per file suffix, per client,
// the transaction numbers and the count of optional columns.
func logShape(t *testing.T, dir, prefix string) map[string]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, prefix+".*"))
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		suffix := regexp.MustCompile(`^\d+`).ReplaceAllString(strings.TrimPrefix(filepath.Base(f), prefix+"."), "PID")
		var shape []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			m := logLine.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("%s: %q is not a transaction line", f, l)
			}
			fields := strings.Fields(l)
			shape = append(shape, fmt.Sprintf("client %s tx %s script %s extra %d", fields[0], fields[1], fields[3], len(strings.Fields(m[2]))))
		}
		slices.Sort(shape) // clients' lines interleave by timing
		out[suffix] = strings.Join(shape, "; ")
	}
	return out
}

// TestPgbenchLogFormat runs pgbench and dbmark with -l under the same
// options and compares the files' names, and each line's client,
// transaction number and columns.
func TestPgbenchLogFormat(t *testing.T) {
	e := preparedPGEnv(t)
	for _, args := range [][]string{
		{"-S", "-c", "3", "-j", "2", "-t", "4"},
		{"-S", "-c", "2", "-t", "3", "--max-tries", "3"},
		{"-S", "-c", "2", "-t", "3", "-R", "1000", "--max-tries", "2"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			pd, dd := t.TempDir(), t.TempDir()
			e.run(t, pd, append([]string{"-n", "-l", "--log-prefix", "x"}, args...)...)
			runDbmark(t, append([]string{"run", "tpcb", "--target", e.url(tpcbDB), "-n", "-l", "--log-prefix", filepath.Join(dd, "x"), "--no-store", "-q"}, args...)...)
			want, got := logShape(t, pd, "x"), logShape(t, dd, "x")
			if len(want) == 0 || !reflect.DeepEqual(want, got) {
				t.Fatalf("logs differ:\npgbench: %v\ndbmark:  %v", want, got)
			}
		})
	}
}

// TestPgbenchAggregateLog compares --aggregate-interval lines' columns.
func TestPgbenchAggregateLog(t *testing.T) {
	e := preparedPGEnv(t)
	args := []string{"-S", "-c", "2", "-T", "2", "-R", "300", "-L", "5", "-l", "--aggregate-interval", "1", "--log-prefix", "a", "-n"}
	pd, dd := t.TempDir(), t.TempDir()
	e.run(t, pd, args...)
	runDbmark(t, append(append([]string{"run", "tpcb", "--target", e.url(tpcbDB), "--no-store", "-q"}, args[:len(args)-3]...),
		"--log-prefix", filepath.Join(dd, "a"), "-n")...)
	fields := func(dir string) []int {
		files, _ := filepath.Glob(filepath.Join(dir, "a.*"))
		var n []int
		for _, f := range files {
			b, _ := os.ReadFile(f)
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				fs := strings.Fields(l)
				if len(fs) == 0 || len(fs[0]) != 10 {
					t.Fatalf("%s: %q", f, l)
				}
				n = append(n, len(fs))
			}
		}
		return n
	}
	want, got := fields(pd), fields(dd)
	if len(want) == 0 || len(got) == 0 || want[0] != got[0] {
		t.Fatalf("aggregate columns: pgbench %v, dbmark %v", want, got)
	}
}

// retryScripts make pgbench's two clients collide once: both read the
// same row in a repeatable-read snapshot and then update it (one of them
// gets a serialization failure), or both lock two rows in opposite orders
// (the server picks one as a deadlock's victim). The sleeps keep the
// clients' steps in that order on a loaded machine; the one at the start
// of the deadlock's transaction lets the other client finish before the
// victim's retry takes its first lock again (without it, the retry may win
// that row back and deadlock a second time, as it may in pgbench).
var retryScripts = map[string]string{
	"serialization": `\set aid 1
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
SELECT pg_sleep(0.5);
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
END;
`,
	"deadlock": `\set first 1 + :client_id
\set second 2 - :client_id
BEGIN;
SELECT pg_sleep(0.3);
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :first;
SELECT pg_sleep(0.5);
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :second;
END;
`,
}

// retryCounts are the lines of pgbench's summary that count transactions
// and their failures and retries.
var retryCounts = regexp.MustCompile(`(?m)^(number of transactions actually processed|number of failed transactions|number of serialization failures|number of deadlock failures|number of transactions retried|total number of retries): (\S+)`)

func countsOf(out string) map[string]string {
	m := map[string]string{}
	for _, g := range retryCounts.FindAllStringSubmatch(out, -1) {
		m[g[1]] = g[2]
	}
	return m
}

// TestPgbenchRetriesCollidingClients runs pgbench and dbmark with the
// same colliding two-client script, with a retry allowed and without,
// and compares the transactions processed, failed and retried. Each run
// is bounded: a client that waits forever fails the test instead of
// hanging it.
func TestPgbenchRetriesCollidingClients(t *testing.T) {
	e := preparedPGEnv(t)
	for _, name := range []string{"serialization", "deadlock"} {
		for _, tries := range []string{"2", "1"} {
			// Both tools over TLS too, as servers are usually reached.
			for _, sslmode := range []string{"disable", "require"} {
				t.Run(name+"/max-tries "+tries+"/sslmode "+sslmode, func(t *testing.T) {
					t.Setenv("PGSSLMODE", sslmode) // pgbench's
					u, _ := url.Parse(e.url(tpcbDB))
					q := u.Query()
					q.Set("sslmode", sslmode)
					u.RawQuery = q.Encode()
					dir := t.TempDir()
					file := filepath.Join(dir, name+".sql")
					if err := os.WriteFile(file, []byte(retryScripts[name]), 0o644); err != nil {
						t.Fatal(err)
					}
					args := []string{"-n", "-c", "2", "-t", "1", "--max-tries", tries, "-f", file}
					want := countsOf(e.run(t, dir, args...))
					got := countsOf(runDbmarkWithin(t, cmdLimit, append([]string{"run", "tpcb", "--target", u.String(), "--no-store"}, args...)...))
					if !reflect.DeepEqual(want, got) {
						t.Fatalf("counts differ:\npgbench: %v\ndbmark:  %v", want, got)
					}
					// The clients did collide: once, retried or failed.
					key := "number of transactions retried"
					if tries == "1" {
						key = "number of failed transactions"
					}
					if want[key] != "1" {
						t.Fatalf("%s = %q in pgbench's summary, want 1: the clients did not collide (%v)", key, want[key], want)
					}
				})
			}
		}
	}
}

// runDbmarkWithin is runDbmark bounded by limit: the run is cancelled at
// the limit, and a run that does not return soon after fails the test.
func runDbmarkWithin(t *testing.T, limit time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	type res struct {
		code     int
		out, err string
	}
	done := make(chan res, 1)
	go func() {
		var out, errb bytes.Buffer
		code := cli.Main(ctx, args, &out, &errb)
		done <- res{code, out.String(), errb.String()}
	}()
	select {
	case r := <-done:
		if ctx.Err() != nil {
			t.Fatalf("dbmark %s: still running after %v: hung\n%s%s", strings.Join(args, " "), limit, r.out, r.err)
		}
		if r.code != 0 {
			t.Fatalf("dbmark %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.out, r.err)
		}
		return r.out
	case <-time.After(limit + 10*time.Second):
		t.Fatalf("dbmark %s: still running %v after it was cancelled at %v: hung", strings.Join(args, " "), 10*time.Second, limit)
	}
	return ""
}

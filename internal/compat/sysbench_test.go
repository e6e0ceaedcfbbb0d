package compat

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/result"
)

// The compat tests work in a database of their own, created and dropped
// here, so that no other test's sbtestN tables are touched.
const (
	compatDB  = "dbmark_compat"
	tables    = 2
	tableSize = 2000
	events    = 200
	cmdLimit  = 60 * time.Second // per sysbench or dbmark invocation
)

// sysbench 1.0 does not class a statement by its text: a statement that
// returns rows is a read, and any other one is a write if it changed rows
// and "other" if it did not (drv_mysql.c and drv_pgsql.c: rs->counter =
// nrows > 0 ? SB_CNT_WRITE : SB_CNT_OTHER). BEGIN and COMMIT are therefore
// "other", and so is an UPDATE or DELETE that finds no row. The counts are
// only comparable when every DML statement's outcome is certain, so the
// tests run in two states:
//
//   - fullTableTests on the tables as prepared, where every id in
//     [1, --table-size] exists: every UPDATE, DELETE and INSERT changes
//     one row. oltp_delete is not among them: it removes rows, so which
//     of its DELETEs find a row depends on the random draws (two sysbench
//     runs disagree with each other), and it would make later tests' rows
//     go missing too.
//   - noRowTests on emptied tables, where no UPDATE or DELETE finds a row.
//
// bulk_insert is left out: its writes are multi-row INSERTs sent each time
// a 512 KiB buffer fills, so its writes per event depend on how many events
// run, not only on the test.
var (
	fullTableTests = []string{
		"oltp_read_only", "oltp_read_write", "oltp_write_only", "oltp_point_select",
		"oltp_insert", "oltp_update_index", "oltp_update_non_index",
		"select_random_points", "select_random_ranges",
	}
	noRowTests = []string{"oltp_delete", "oltp_update_index", "oltp_update_non_index"}
)

// singleTable are the tests sysbench runs on sbtest1 only (their Lua asserts --tables == 1).
var singleTable = map[string]bool{"select_random_points": true, "select_random_ranges": true}

// engine is one server both tools are pointed at.
type engine struct {
	name     string
	target   string   // dbmark's --target, in compatDB
	sysbench []string // sysbench's driver and connection options, in compatDB
	// connect opens a connection to database db as the test user.
	connect func(ctx context.Context, db string) (conn, error)
	// adminDB is the existing database the admin connection uses.
	adminDB string
	// lockSQL serialises concurrent runs of this test on the admin connection.
	lockSQL          string
	createDB, dropDB string
	// describe lists, per aspect ("columns sbtest1", ...), what the schema
	// and data of compatDB look like, in a form that must be equal after
	// either tool's prepare.
	describe map[string]string // aspect (with %d for the table number) -> query (with %s for the table)
}

// conn is the little the test needs from a database connection.
type conn interface {
	Exec(ctx context.Context, q string) error
	Rows(ctx context.Context, q string) ([][]string, error)
	Close() error
}

func TestSysbenchMariaDB(t *testing.T) {
	env := need(t, "MariaDB", "DBMARK_TEST_MYSQL", "DBMARK_TEST_MY_HOST", "DBMARK_TEST_MY_PORT",
		"DBMARK_TEST_MY_USER", "DBMARK_TEST_MY_PASSWORD")
	host, port, user, pass := env["DBMARK_TEST_MY_HOST"], env["DBMARK_TEST_MY_PORT"], env["DBMARK_TEST_MY_USER"], env["DBMARK_TEST_MY_PASSWORD"]
	e := &engine{
		name:    "MariaDB",
		target:  withDB(t, env["DBMARK_TEST_MYSQL"], compatDB),
		adminDB: dbOf(t, env["DBMARK_TEST_MYSQL"]),
		sysbench: []string{"--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port,
			"--mysql-user=" + user, "--mysql-password=" + pass, "--mysql-db=" + compatDB},
		connect: func(ctx context.Context, db string) (conn, error) {
			cfg := mysql.NewConfig()
			cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, pass, "tcp", net.JoinHostPort(host, port), db
			return openSQL(ctx, "mysql", cfg.FormatDSN())
		},
		lockSQL:  "SELECT GET_LOCK('" + compatDB + "', 120)",
		createDB: "CREATE DATABASE " + compatDB,
		dropDB:   "DROP DATABASE IF EXISTS " + compatDB,
		describe: map[string]string{
			"table sbtest%d": `SELECT ENGINE, TABLE_COLLATION, ROW_FORMAT, COALESCE(CREATE_OPTIONS, '')
				FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '%s'`,
			"columns sbtest%d": `SELECT COLUMN_NAME, ORDINAL_POSITION, COLUMN_TYPE, IS_NULLABLE,
				COALESCE(COLUMN_DEFAULT, 'NULL'), EXTRA, COLUMN_KEY,
				COALESCE(CHARACTER_SET_NAME, ''), COALESCE(COLLATION_NAME, '')
				FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '%s'
				ORDER BY ORDINAL_POSITION`,
			"indexes sbtest%d": `SELECT INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE, INDEX_TYPE,
				COALESCE(SUB_PART, ''), COALESCE(COLLATION, '')
				FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '%s'
				ORDER BY INDEX_NAME, SEQ_IN_INDEX`,
			"data sbtest%d": `SELECT COUNT(*), MIN(id), MAX(id),
				SUM(k BETWEEN 1 AND ` + strconv.Itoa(tableSize) + `),
				SUM(c REGEXP '^[0-9]{11}(-[0-9]{11}){9}$'),
				SUM(pad REGEXP '^[0-9]{11}(-[0-9]{11}){4}$')
				FROM %s`,
		},
	}
	testEngine(t, e)
}

func TestSysbenchPostgres(t *testing.T) {
	env := need(t, "PostgreSQL", "DBMARK_TEST_POSTGRES", "DBMARK_TEST_PG_HOST", "DBMARK_TEST_PG_PORT")
	host, port := env["DBMARK_TEST_PG_HOST"], env["DBMARK_TEST_PG_PORT"]
	// User and password: the plain values if set, else those of the URL.
	base, err := url.Parse(env["DBMARK_TEST_POSTGRES"])
	if err != nil {
		t.Fatalf("DBMARK_TEST_POSTGRES: %v", err)
	}
	user, pass := os.Getenv("DBMARK_TEST_PG_USER"), os.Getenv("DBMARK_TEST_PG_PASSWORD")
	if user == "" {
		user = base.User.Username()
		pass, _ = base.User.Password()
	}
	e := &engine{
		name:    "PostgreSQL",
		target:  withDB(t, env["DBMARK_TEST_POSTGRES"], compatDB),
		adminDB: dbOf(t, env["DBMARK_TEST_POSTGRES"]),
		sysbench: []string{"--db-driver=pgsql", "--pgsql-host=" + host, "--pgsql-port=" + port,
			"--pgsql-user=" + user, "--pgsql-password=" + pass, "--pgsql-db=" + compatDB},
		connect: func(ctx context.Context, db string) (conn, error) {
			u := url.URL{Scheme: "postgres", User: url.UserPassword(user, pass), Host: net.JoinHostPort(host, port),
				Path: "/" + db, RawQuery: "sslmode=disable"}
			c, err := pgx.Connect(ctx, u.String())
			if err != nil {
				return nil, err
			}
			return pgConn{c}, nil
		},
		lockSQL:  "SELECT 1 FROM (SELECT pg_advisory_lock(hashtext('" + compatDB + "'))) l",
		createDB: "CREATE DATABASE " + compatDB,
		dropDB:   "DROP DATABASE IF EXISTS " + compatDB + " WITH (FORCE)",
		describe: map[string]string{
			"table sbtest%d": `SELECT c.relkind::text, c.relpersistence::text,
				coalesce(array_to_string(c.reloptions, ','), ''), coalesce(am.amname::text, '')
				FROM pg_class c LEFT JOIN pg_am am ON am.oid = c.relam
				WHERE c.oid = 'public.%s'::regclass`,
			"columns sbtest%d": `SELECT column_name::text, ordinal_position::text, data_type::text, udt_name::text,
				coalesce(character_maximum_length::text, ''), is_nullable::text, coalesce(column_default::text, 'NULL')
				FROM information_schema.columns WHERE table_schema = 'public' AND table_name = '%s'
				ORDER BY ordinal_position`,
			"indexes sbtest%d": `SELECT indexname::text, indexdef
				FROM pg_indexes WHERE schemaname = 'public' AND tablename = '%s'
				ORDER BY indexname`,
			"constraints sbtest%d": `SELECT conname::text, contype::text, pg_get_constraintdef(oid)
				FROM pg_constraint WHERE conrelid = 'public.%s'::regclass
				ORDER BY conname`,
			"data sbtest%d": `SELECT count(*)::text, min(id)::text, max(id)::text,
				(count(*) FILTER (WHERE k BETWEEN 1 AND ` + strconv.Itoa(tableSize) + `))::text,
				(count(*) FILTER (WHERE c::text ~ '^[0-9]{11}(-[0-9]{11}){9}$'))::text,
				(count(*) FILTER (WHERE pad::text ~ '^[0-9]{11}(-[0-9]{11}){4}$'))::text
				FROM %s`,
		},
	}
	testEngine(t, e)
}

// need returns the named environment variables, or skips the test saying
// which are missing; it also skips when sysbench is not installed.
func need(t *testing.T, what string, names ...string) map[string]string {
	t.Helper()
	env := map[string]string{}
	var missing []string
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			env[n] = v
		} else {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		t.Skipf("%s not set: no %s server to compare against (make test starts one; or scripts/testenv.sh start and eval \"$(scripts/testenv.sh env)\")",
			strings.Join(missing, ", "), what)
	}
	if _, err := sysbenchPath(); err != nil {
		t.Skipf("sysbench not found (%v): install the sysbench package to run the compatibility tests", err)
	}
	return env
}

func sysbenchPath() (string, error) {
	if p, err := exec.LookPath("sysbench"); err == nil {
		return p, nil
	}
	const p = "/usr/bin/sysbench"
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("not in PATH nor at %s", p)
	}
	return p, nil
}

// withDB returns raw with its database (the URL path) replaced by db.
func withDB(t *testing.T, raw, db string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("bad URL in the environment: %v", err)
	}
	u.Path, u.RawPath = "/"+db, ""
	return u.String()
}

// dbOf is the database named in the path of the URL raw.
func dbOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("bad URL in the environment: %v", err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

func testEngine(t *testing.T, e *engine) {
	t.Setenv("DBMARK_HOME", t.TempDir())
	ctx := t.Context()

	// The admin connection (to the default database) holds a lock for the
	// whole test so that two runs of it never share compatDB, and creates
	// and finally drops compatDB.
	actx, cancel := context.WithTimeout(ctx, 150*time.Second)
	defer cancel()
	admin, err := e.connect(actx, e.adminDB)
	if err != nil {
		t.Fatalf("%s: connect: %v", e.name, err)
	}
	t.Cleanup(func() { admin.Close() })
	if rows, err := admin.Rows(actx, e.lockSQL); err != nil || len(rows) != 1 || rows[0][0] != "1" {
		t.Fatalf("%s: lock %s: %v %v", e.name, compatDB, rows, err)
	}
	mustExec(t, admin, e.dropDB)
	mustExec(t, admin, e.createDB)
	t.Cleanup(func() {
		// t.Context is done by now.
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := admin.Exec(cctx, e.dropDB); err != nil {
			t.Errorf("%s: %s: %v", e.name, e.dropDB, err)
		}
	})

	sizes := []string{"--tables=" + strconv.Itoa(tables), "--table-size=" + strconv.Itoa(tableSize)}
	sysbench(t, ctx, e, "oltp_read_write", append(sizes, "prepare")...)
	want := describe(t, ctx, e)

	t.Run("statements", func(t *testing.T) {
		for _, test := range fullTableTests {
			t.Run(test, func(t *testing.T) { compareStatements(t, e, test, nil) })
		}
	})

	t.Run("booleans", func(t *testing.T) { testBooleans(t, e) })
	t.Run("booleans_refused", func(t *testing.T) { testRefusedBooleans(t, e) })
	t.Run("legacy_limits", func(t *testing.T) { testLegacyLimits(t, e) })
	t.Run("verbosity", func(t *testing.T) { testVerbosity(t, e) })
	t.Run("live_line", func(t *testing.T) { testLiveLine(t, e) })
	t.Run("fatal_exit", func(t *testing.T) { testFatalExit(t, e) })
	t.Run("histogram", func(t *testing.T) { testHistogram(t, e) })
	if e.name == "PostgreSQL" {
		t.Run("db_ps_mode", func(t *testing.T) { testPSModePostgres(t, e) })
		t.Run("insert", func(t *testing.T) { testInsertPostgres(t, e) })
	}

	t.Run("statements_no_rows", func(t *testing.T) {
		c, err := e.connect(ctx, compatDB)
		if err != nil {
			t.Fatalf("%s: connect to %s: %v", e.name, compatDB, err)
		}
		for n := 1; n <= tables; n++ {
			mustExec(t, c, "DELETE FROM sbtest"+strconv.Itoa(n))
		}
		c.Close()
		for _, test := range noRowTests {
			t.Run(test, func(t *testing.T) { compareStatements(t, e, test, nil, "--allow-empty") })
		}
	})

	t.Run("schema", func(t *testing.T) {
		sysbench(t, ctx, e, "oltp_read_write", append(sizes, "cleanup")...)
		dbmark(t, ctx, "prepare", "oltp_read_write", "--target", e.target, "-q",
			"--tables", strconv.Itoa(tables), "--table-size", strconv.Itoa(tableSize))
		got := describe(t, ctx, e)
		for _, aspect := range slices.Sorted(maps.Keys(want)) {
			if !reflect.DeepEqual(got[aspect], want[aspect]) {
				t.Errorf("%s %s after prepare differs:\n  sysbench: %v\n  dbmark:   %v", e.name, aspect, want[aspect], got[aspect])
			} else {
				t.Logf("%-22s same: %v", aspect, got[aspect])
			}
		}
		dbmark(t, ctx, "cleanup", "oltp_read_write", "--target", e.target, "-q", "--tables", strconv.Itoa(tables))
	})

	t.Run("schema_booleans", func(t *testing.T) {
		compareSchema(t, e, "--auto_inc=off", "--create_secondary=off")
		if e.name == "MariaDB" {
			compareSchema(t, e, "--secondary=on", "--create_secondary=on")
			return
		}
		// On PostgreSQL sysbench 1.0.20 sends MySQL's KEY clause for
		// --secondary and fails; dbmark builds the index (docs/oltp.md).
		args := []string{"--tables=1", "--table-size=" + strconv.Itoa(tableSize), "--secondary=on"}
		if out, code := sysbenchCode(t, ctx, e, "oltp_read_write", append(args, "prepare")...); code == 0 {
			t.Errorf("sysbench prepare --secondary=on succeeded on %s; docs/oltp.md says it fails:\n%s", e.name, out)
		}
		sysbench(t, ctx, e, "oltp_read_write", append(args, "cleanup")...)
		dbmark(t, ctx, append([]string{"prepare", "oltp_read_write", "--target", e.target, "-q"}, args...)...)
		dbmark(t, ctx, append([]string{"cleanup", "oltp_read_write", "--target", e.target, "-q"}, args...)...)
	})
}

// counts are one run's statement counts, in sysbench's classes.
type counts struct {
	events, read, write, other, errors int64
}

func (c counts) String() string {
	return fmt.Sprintf("%d events, read/write/other %d/%d/%d (%s/%s/%s per event), %d errors", c.events, c.read, c.write, c.other,
		perEvent(c.read, c.events), perEvent(c.write, c.events), perEvent(c.other, c.events), c.errors)
}

func perEvent(n, events int64) string {
	if events == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(n)/float64(events), 'f', -1, 64)
}

// compareStatements runs test with both tools and requires the same reads,
// writes and others per transaction (sysbench 1.0 counts one transaction
// per event, and so does dbmark). both go to both tools, as written;
// dbmarkOpts go to dbmark only.
func compareStatements(t *testing.T, e *engine, test string, both []string, dbmarkOpts ...string) {
	ctx := t.Context()
	n := tables
	if singleTable[test] {
		n = 1
	}
	opts := []string{"--tables=" + strconv.Itoa(n), "--table-size=" + strconv.Itoa(tableSize),
		"--threads=1", "--events=" + strconv.Itoa(events), "--time=0"}
	opts = append(opts, both...)

	// sysbench seeds its threads the same way on every start unless told
	// otherwise; two runs in a row would then write the same values, and an
	// UPDATE that writes a row's current value changes nothing and counts
	// as "other". A fresh seed per run keeps the comparison exact.
	seed := "--rand-seed=" + strconv.FormatInt(time.Now().UnixNano()%1_000_000_007+1, 10)
	sb := parseSysbench(t, sysbench(t, ctx, e, test, append(opts, seed, "run")...))

	jsonPath := filepath.Join(t.TempDir(), "result.json")
	dbmark(t, ctx, append(append([]string{"run", test, "--target", e.target, "--no-store", "-q", "--json", jsonPath}, opts...), dbmarkOpts...)...)
	res := readResult(t, jsonPath)
	db := counts{events: res.Summary.Events, read: res.Summary.Queries.Read, write: res.Summary.Queries.Write,
		other: res.Summary.Queries.Other, errors: res.Summary.ErrorsTotal}
	if res.Status != result.StatusOK {
		t.Errorf("dbmark status %q (%s)", res.Status, res.Error)
	}

	t.Logf("sysbench: %v", sb)
	t.Logf("dbmark:   %v", db)
	if sb.events != events || db.events != events {
		t.Errorf("events: sysbench %d, dbmark %d, want %d each", sb.events, db.events, events)
	}
	if sb.errors != 0 || db.errors != 0 {
		t.Errorf("errors: sysbench %d, dbmark %d, want none", sb.errors, db.errors)
	}
	for _, c := range []struct {
		class  string
		sb, db int64
	}{{"read", sb.read, db.read}, {"write", sb.write, db.write}, {"other", sb.other, db.other}} {
		// Exact: a/b == c/d as a*d == c*b.
		if sb.events == 0 || db.events == 0 || c.sb*db.events != c.db*sb.events {
			t.Errorf("%s %s statements per transaction: sysbench %d/%d = %s, dbmark %d/%d = %s",
				e.name, c.class, c.sb, sb.events, perEvent(c.sb, sb.events), c.db, db.events, perEvent(c.db, db.events))
		}
	}
}

var (
	reRead         = regexp.MustCompile(`(?m)^\s*read:\s+(\d+)\s*$`)
	reWrite        = regexp.MustCompile(`(?m)^\s*write:\s+(\d+)\s*$`)
	reOther        = regexp.MustCompile(`(?m)^\s*other:\s+(\d+)\s*$`)
	reTransactions = regexp.MustCompile(`(?m)^\s*transactions:\s+(\d+)\s`)
	reIgnored      = regexp.MustCompile(`(?m)^\s*ignored errors:\s+(\d+)\s`)
)

// parseSysbench reads the "SQL statistics" part of sysbench's report.
func parseSysbench(t *testing.T, out string) counts {
	t.Helper()
	get := func(re *regexp.Regexp) int64 {
		m := re.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("sysbench report has no match for %s:\n%s", re, out)
		}
		v, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return counts{events: get(reTransactions), read: get(reRead), write: get(reWrite), other: get(reOther), errors: get(reIgnored)}
}

// sysbench runs the sysbench binary with e's connection options and returns its output.
func sysbench(t *testing.T, ctx context.Context, e *engine, test string, args ...string) string {
	t.Helper()
	out, code := sysbenchCode(t, ctx, e, test, args...)
	if code != 0 {
		t.Fatalf("sysbench %s %s: exit code %d\n%s", test, strings.Join(redact(args), " "), code, out)
	}
	return out
}

// sysbenchCode runs the sysbench binary with e's connection options and
// returns its output (stdout and stderr) and exit code (128 + the signal
// when a signal killed it, as a shell gives it).
func sysbenchCode(t *testing.T, ctx context.Context, e *engine, test string, args ...string) (string, int) {
	t.Helper()
	path, err := sysbenchPath()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, cmdLimit)
	defer cancel()
	argv := append(append([]string{test}, e.sysbench...), args...)
	out, err := exec.CommandContext(ctx, path, argv...).CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee) && ee.Exited():
		return string(out), ee.ExitCode()
	case errors.As(err, &ee):
		// Killed by a signal (sysbench crashes on some mistakes): the
		// shell's code for it.
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ctx.Err() == nil {
			return string(out) + "\n(" + ws.Signal().String() + ")", 128 + int(ws.Signal())
		}
	}
	t.Fatalf("sysbench %s: %v\n%s", strings.Join(redact(argv), " "), err, out)
	return "", 0
}

// dbmark runs dbmark in-process and returns its standard output.
func dbmark(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	o := dbmarkCode(t, ctx, args...)
	if o.code != cli.ExitOK {
		t.Fatalf("dbmark %s: exit code %d\nstdout:\n%s\nstderr:\n%s", strings.Join(redact(args), " "), o.code, o.stdout, o.stderr)
	}
	return o.stdout
}

// dbmarkOut is what one dbmark command printed and its exit code.
type dbmarkOut struct {
	stdout, stderr string
	code           int
}

// dbmarkCode runs dbmark in-process.
func dbmarkCode(t *testing.T, ctx context.Context, args ...string) dbmarkOut {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, cmdLimit)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, args, &stdout, &stderr)
	return dbmarkOut{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

func redact(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case strings.HasSuffix(strings.SplitN(a, "=", 2)[0], "-password"):
			out[i] = strings.SplitN(a, "=", 2)[0] + "=xxxxx"
		case strings.Contains(a, "://"):
			if u, err := url.Parse(a); err == nil {
				out[i] = u.Redacted()
				continue
			}
			out[i] = "(url)"
		default:
			out[i] = a
		}
	}
	return out
}

func readResult(t *testing.T, path string) *result.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("dbmark's --json file: %v", err)
	}
	defer f.Close()
	res, err := result.Read(f)
	if err != nil {
		t.Fatalf("dbmark's --json file: %v", err)
	}
	return res
}

// describe runs e's describe queries on both tables of compatDB.
func describe(t *testing.T, ctx context.Context, e *engine) map[string][][]string {
	t.Helper()
	c, err := e.connect(ctx, compatDB)
	if err != nil {
		t.Fatalf("%s: connect to %s: %v", e.name, compatDB, err)
	}
	defer c.Close()
	out := map[string][][]string{}
	for n := 1; n <= tables; n++ {
		for aspect, q := range e.describe {
			rows, err := c.Rows(ctx, fmt.Sprintf(q, "sbtest"+strconv.Itoa(n)))
			if err != nil {
				t.Fatalf("%s: describe %s: %v", e.name, fmt.Sprintf(aspect, n), err)
			}
			if len(rows) == 0 {
				t.Fatalf("%s: describe %s: nothing found", e.name, fmt.Sprintf(aspect, n))
			}
			out[fmt.Sprintf(aspect, n)] = rows
		}
	}
	return out
}

func mustExec(t *testing.T, c conn, q string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := c.Exec(ctx, q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// sqlConn is one pinned database/sql connection (session state such as
// GET_LOCK belongs to a connection, not to the pool).
type sqlConn struct {
	db *sql.DB
	c  *sql.Conn
}

func openSQL(ctx context.Context, driver, dsn string) (conn, error) {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, err
	}
	c, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &sqlConn{db: db, c: c}, nil
}

func (s *sqlConn) Exec(ctx context.Context, q string) error {
	_, err := s.c.ExecContext(ctx, q)
	return err
}

func (s *sqlConn) Rows(ctx context.Context, q string) ([][]string, error) {
	rows, err := s.c.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

func (s *sqlConn) Close() error {
	s.c.Close()
	return s.db.Close()
}

type pgConn struct{ c *pgx.Conn }

func (p pgConn) Exec(ctx context.Context, q string) error {
	_, err := p.c.Exec(ctx, q)
	return err
}

func (p pgConn) Rows(ctx context.Context, q string) ([][]string, error) {
	rows, err := p.c.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = "NULL"
			if v != nil {
				row[i] = fmt.Sprint(v)
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

func (p pgConn) Close() error { return p.c.Close(context.Background()) }

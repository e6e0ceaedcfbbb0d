// Package workloadtest is the suite every SQL workload passes on every
// engine, through the command a user runs: cleanup, prepare, a short run on
// two clients, its check where it has one, and cleanup, after which a run
// is refused (where the workload has a Prepare). A new workload passes it from its own test file by naming
// itself in a Case; nothing else needs an edit.
package workloadtest

import (
	"context"
	"database/sql"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
	mysqltarget "github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/sqlite"
	"github.com/dbmark/dbmark/internal/workload"
)

// Case is one workload under test.
type Case struct {
	// Workload is the registered name.
	Workload string
	// Register adds the workload to the command's registry; nil for one
	// dbmark registers itself.
	Register func(r *workload.Registry)
	// Prepare, Run and Check are the options of each step, on top of
	// the suite's (the target; two clients and 40 events for the run):
	// small data, so the suite stays quick.
	Prepare, Run, Check []string
	// SelfLimited says the run ends by itself (its own options limit it),
	// so the suite gives no --events.
	SelfLimited bool
}

// Engine is one database the suite runs on.
type Engine struct {
	Name, URL string
}

// Engines are the databases of the suite: a new SQLite file, and the
// private PostgreSQL and MariaDB servers of the test environment
// (scripts/testenv.sh) where their variables are set, each in a database
// of its own named db, created when missing, so that suites of several
// packages running at once never share tables.
func Engines(t *testing.T, db string) []Engine {
	t.Helper()
	out := []Engine{{"sqlite", "sqlite://" + filepath.Join(t.TempDir(), db+".db")}}
	if raw := os.Getenv("DBMARK_TEST_POSTGRES"); raw != "" {
		out = append(out, Engine{"postgres", PostgresDB(t, raw, db)})
	}
	if raw := os.Getenv("DBMARK_TEST_MYSQL"); raw != "" {
		out = append(out, Engine{"mariadb", MariaDB(t, raw, db)})
	}
	if os.Getenv("CI") != "" && len(out) < 3 {
		t.Fatalf("CI runs every engine: DBMARK_TEST_POSTGRES and DBMARK_TEST_MYSQL must be set (scripts/testenv.sh env)")
	}
	return out
}

// Target is one of the suite's databases, opened.
type Target struct {
	Name string
	target.Target
}

// Targets are Engines opened as targets, for tests that drive a workload
// without the command; each is closed when the test ends.
func Targets(t *testing.T, db string, opts target.Options) []Target {
	t.Helper()
	reg := target.NewRegistry()
	postgres.Register(reg)
	mysqltarget.Register(reg)
	sqlite.Register(reg)
	var out []Target
	for _, e := range Engines(t, db) {
		tg, err := reg.Open(context.Background(), e.URL, opts)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		t.Cleanup(func() { tg.Close() })
		out = append(out, Target{e.Name, tg})
	}
	return out
}

// Run runs the suite for c on every engine.
func Run(t *testing.T, c Case) {
	for _, e := range Engines(t, "dbmark_wl_"+strings.ReplaceAll(c.Workload, "-", "_")) {
		t.Run(e.Name, func(t *testing.T) { runOn(t, c, e) })
	}
}

func runOn(t *testing.T, c Case, e Engine) {
	t.Setenv("DBMARK_HOME", t.TempDir())
	t.Setenv("DBMARK_TARGET", "")
	t.Setenv("DBMARK_STORE", "")
	ctx := context.Background()
	reg := workload.NewRegistry()
	dbmark := func(args ...string) (int, string) {
		var out, errb strings.Builder
		code := cli.Main(ctx, args, &out, &errb, func(a *cli.App) {
			if c.Register != nil {
				c.Register(a.Workloads)
			}
			reg = a.Workloads
		})
		return code, out.String() + errb.String()
	}
	at := []string{"--target", e.URL}
	// A clean slate: an earlier suite may have left tables behind.
	if code, out := dbmark(append([]string{"cleanup", c.Workload}, at...)...); code != 0 {
		t.Fatalf("cleanup before: exit %d: %s", code, out)
	}
	spec, ok := reg.New(c.Workload)
	if !ok {
		t.Fatalf("workload %s is not registered", c.Workload)
	}
	if spec.Load == nil || spec.Hooks.Cleanup == nil {
		t.Fatalf("workload %s must declare Load and Cleanup to run on a database", c.Workload)
	}
	// A workload without a Prepare makes its tables in its Load (iibench).
	if spec.Hooks.Prepare != nil {
		if code, out := dbmark(append(append([]string{"prepare", c.Workload}, at...), c.Prepare...)...); code != 0 {
			t.Fatalf("prepare: exit %d: %s", code, out)
		}
	}
	js := filepath.Join(t.TempDir(), "run.json")
	run := append(append([]string{"run", c.Workload}, at...), "--threads", "2", "--no-store", "--json", js)
	if !c.SelfLimited {
		run = append(run, "--events", "40", "--time", "0")
	}
	if code, out := dbmark(append(run, c.Run...)...); code != 0 {
		t.Fatalf("run: exit %d: %s", code, out)
	}
	res, err := result.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != result.StatusOK || res.Summary.Events == 0 {
		t.Fatalf("run: status %s (%s), %d events: want ok and some events", res.Status, res.Error, res.Summary.Events)
	}
	if !c.SelfLimited && res.Summary.Events != 40 {
		t.Errorf("run: %d events, want the 40 asked for", res.Summary.Events)
	}
	if res.Target.Kind == "" || res.Target.Engine == "" {
		t.Errorf("the result does not say which engine ran: %+v", res.Target)
	}
	if spec.Hooks.Check != nil {
		if code, out := dbmark(append(append([]string{"check", c.Workload}, at...), c.Check...)...); code != 0 {
			t.Fatalf("check: exit %d: %s", code, out)
		}
	}
	if code, out := dbmark(append([]string{"cleanup", c.Workload}, at...)...); code != 0 {
		t.Fatalf("cleanup: exit %d: %s", code, out)
	}
	if spec.Hooks.Prepared != nil && spec.Hooks.Prepare != nil {
		if code, out := dbmark(append(run, c.Run...)...); code == 0 {
			t.Errorf("a run after cleanup succeeded (want a refusal naming prepare): %s", out)
		} else if !strings.Contains(out, "prepare") {
			t.Errorf("a run after cleanup was refused without naming prepare: %s", out)
		}
	}
}

// Exec runs sqls on the database of rawURL (an engine's URL as Engines
// gives it), behind a workload's back: rows deleted under a run, say.
func Exec(t *testing.T, rawURL string, sqls ...string) {
	t.Helper()
	reg := target.NewRegistry()
	postgres.Register(reg)
	mysqltarget.Register(reg)
	sqlite.Register(reg)
	ctx := context.Background()
	tg, err := reg.Open(ctx, rawURL, target.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, s := range sqls {
		if err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// PostgresDB creates db on the PostgreSQL server of raw if missing and
// returns raw pointed at it.
func PostgresDB(t *testing.T, raw, db string) string {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, raw)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, "select count(*) from pg_database where datname = $1", db).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		if _, err := c.Exec(ctx, "create database "+db); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("create database %s on PostgreSQL: %v", db, err)
		}
	}
	return withDB(raw, db)
}

// MariaDB creates db on the MariaDB server of raw if missing and returns
// raw pointed at it.
func MariaDB(t *testing.T, raw, db string) string {
	t.Helper()
	conn := OpenMariaDB(t, withDB(raw, ""))
	defer conn.Close()
	if _, err := conn.Exec("create database if not exists " + db); err != nil {
		t.Fatalf("create database %s on MariaDB: %v", db, err)
	}
	return withDB(raw, db)
}

// OpenMariaDB opens the MariaDB server of the mysql:// URL raw, in its
// database where it names one, through database/sql, for a test's own
// statements.
func OpenMariaDB(t *testing.T, raw string) *sql.DB {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", u.Host, strings.TrimPrefix(u.Path, "/")
	conn, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

func withDB(raw, db string) string {
	u, _ := url.Parse(raw)
	u.Path = "/" + db
	return u.String()
}

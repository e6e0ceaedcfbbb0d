package script_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/sqlite"
	"github.com/dbmark/dbmark/internal/workload/tpcb/script"
)

// testDB is the database these tests create and use on the servers.
const testDB = "dbmark_script"

type engine struct {
	name string
	open func(t *testing.T) target.Target
}

// inDB opens the server at the URL in envVar, creates testDB there if
// missing and returns a target on it.
func inDB(t *testing.T, envVar string, open target.Opener, opts target.Options) target.Target {
	t.Helper()
	raw := os.Getenv(envVar)
	if raw == "" {
		t.Skipf("%s is not set: no server to test against (make test starts one)", envVar)
	}
	ctx := context.Background()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := open(ctx, u, opts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := admin.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(ctx, "CREATE DATABASE "+testDB); err != nil && !strings.Contains(err.Error(), "exists") {
		t.Fatalf("create database: %v", err)
	}
	c.Close()
	u.Path = "/" + testDB
	tg, err := open(ctx, u, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func engines() []engine {
	es := []engine{{"sqlite", func(t *testing.T) target.Target {
		return sqlite.New(filepath.Join(t.TempDir(), "script.db"))
	}}}
	for _, m := range []string{postgres.ModePrepared, postgres.ModeExtended, postgres.ModeSimple} {
		es = append(es, engine{"postgres/" + m, func(t *testing.T) target.Target {
			return inDB(t, "DBMARK_TEST_POSTGRES", postgres.Open, target.Options{PGMode: m})
		}})
	}
	for _, m := range []string{mysql.PSAuto, mysql.PSDisable} {
		es = append(es, engine{"mysql/" + m, func(t *testing.T) target.Target {
			return inDB(t, "DBMARK_TEST_MYSQL", mysql.Open, target.Options{PSMode: m})
		}})
	}
	return es
}

// tpcbTables creates pgbench's tables with 1 branch, 10 tellers and a few
// accounts.
func tpcbTables(t *testing.T, c target.Conn) {
	t.Helper()
	for _, s := range []string{
		"DROP TABLE IF EXISTS pgbench_history", "DROP TABLE IF EXISTS pgbench_accounts",
		"DROP TABLE IF EXISTS pgbench_tellers", "DROP TABLE IF EXISTS pgbench_branches",
		"CREATE TABLE pgbench_history (tid INT, bid INT, aid BIGINT, delta INT, mtime TIMESTAMP, filler CHAR(22))",
		"CREATE TABLE pgbench_tellers (tid INT NOT NULL PRIMARY KEY, bid INT, tbalance INT, filler CHAR(84))",
		"CREATE TABLE pgbench_accounts (aid BIGINT NOT NULL PRIMARY KEY, bid INT, abalance INT, filler CHAR(84))",
		"CREATE TABLE pgbench_branches (bid INT NOT NULL PRIMARY KEY, bbalance INT, filler CHAR(88))",
		"INSERT INTO pgbench_branches (bid, bbalance) VALUES (1, 0)",
	} {
		mustExec(t, c, s)
	}
	for i := 1; i <= 10; i++ {
		n := string(rune('0' + i%10)) // 1..9, 0
		if i == 10 {
			n = "10"
		}
		mustExec(t, c, "INSERT INTO pgbench_tellers (tid, bid, tbalance) VALUES ("+n+", 1, 0)")
		mustExec(t, c, "INSERT INTO pgbench_accounts (aid, bid, abalance) VALUES ("+n+", 1, 0)")
	}
}

func mustExec(t *testing.T, c target.Conn, sql string) {
	t.Helper()
	if err := c.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func query(t *testing.T, c target.Conn, sql string) string {
	t.Helper()
	v, _, err := c.QueryRow(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// tally counts the commands a Recorder is given, timed and not.
type tally struct {
	all            bool // Wants every command
	timed, counted map[int]int
	found          map[int][2]int // by command: reads that must find a row that did, and that did not
}

func newTally(all bool) *tally {
	return &tally{all: all, timed: map[int]int{}, counted: map[int]int{}}
}

func (c *tally) Begin() time.Duration              { return time.Duration(time.Now().UnixNano()) }
func (c *tally) Now() time.Duration                { return time.Duration(time.Now().UnixNano()) }
func (c *tally) Wants(int) bool                    { return c.all }
func (c *tally) Command(i int, _, _ time.Duration) { c.timed[i]++ }
func (c *tally) Count(i int)                       { c.counted[i]++ }
func (c *tally) Found(i int, ok bool) {
	if c.found == nil {
		c.found = map[int][2]int{}
	}
	n := c.found[i]
	if ok {
		n[0]++
	} else {
		n[1]++
	}
	c.found[i] = n
}

// TestClientOnEngines runs builtin and custom scripts on every engine and
// checks what they did to the tables and to the variables.
func TestClientOnEngines(t *testing.T) {
	ctx := context.Background()
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			tg := e.open(t)
			defer tg.Close()
			conn, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			tpcbTables(t, conn)

			sh := &script.Shared{Scale: 1, RandomSeed: 7, Clients: 1, Vars: map[string]string{"limit": "10"}}
			c, err := script.NewClient(sh, 0, conn, tg.Dialect())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()

			// tpcb-like: 1 branch and 10 tellers keep the TPC-B balances equal.
			tpcb, err := script.Builtin("tpcb")
			if err != nil {
				t.Fatal(err)
			}
			// Half the transactions time every command (-r); the other
			// half time only the last and count the rest.
			every, last := newTally(true), newTally(false)
			for i := range 30 {
				rec := every
				if i%2 == 1 {
					rec = last
				}
				if err := c.Run(ctx, tpcb, rec); err != nil {
					t.Fatalf("tpcb-like: %v", err)
				}
			}
			if got := query(t, conn, "SELECT COUNT(*) FROM pgbench_history"); got != "30" {
				t.Errorf("history rows = %s, want 30", got)
			}
			hist := query(t, conn, "SELECT SUM(delta) FROM pgbench_history")
			for _, q := range []string{"SELECT SUM(tbalance) FROM pgbench_tellers", "SELECT SUM(bbalance) FROM pgbench_branches"} {
				if got := query(t, conn, q); got != hist {
					t.Errorf("%s = %s; history's deltas sum to %s", q, got, hist)
				}
			}
			n := len(tpcb.Commands)
			for i := range n {
				if every.timed[i] != 15 || every.counted[i] != 0 {
					t.Errorf("wanting all, command %d timed %d and counted %d times; want 15 and 0", i, every.timed[i], every.counted[i])
				}
				wantTimed, wantCounted := 0, 15
				if i == n-1 {
					wantTimed, wantCounted = 15, 0
				}
				if last.timed[i] != wantTimed || last.counted[i] != wantCounted {
					t.Errorf("wanting none, command %d timed %d and counted %d times; want %d and %d", i, last.timed[i], last.counted[i], wantTimed, wantCounted)
				}
			}

			// Its read of the account must find a row: of 10 accounts,
			// the aids drawn up to 100000 x scale almost never do.
			for i, f := range every.found {
				if tpcb.Commands[i].Text != "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;" || f[0]+f[1] != 15 || f[1] < 14 {
					t.Errorf("command %d %q: found %d, missed %d; want only the account read, 15 reads, nearly all missed", i, tpcb.Commands[i].Text, f[0], f[1])
				}
			}
			if len(every.found) != 1 || len(last.found) != 1 {
				t.Errorf("reads that must find a row: %v and %v, want the account read", every.found, last.found)
			}

			// \gset, \aset, \if and -D variables against real rows.
			s, err := script.Parse("vars.sql", `\set aid random(1, :limit)
SELECT aid AS got, abalance
  FROM pgbench_accounts
  WHERE aid = :aid \gset p_
\if :p_got <> :aid
\set bad 1
\elif :p_got = :aid
\set good 1
\else
\set bad 2
\endif
SELECT COUNT(*) AS n FROM pgbench_accounts WHERE aid <= :aid;
\gset
SELECT 1 AS never FROM pgbench_accounts WHERE aid < 0 \aset
\set check :n - :aid
`)
			if err != nil {
				t.Fatal(err)
			}
			for range 5 {
				if err := c.Run(ctx, s, nil); err != nil {
					t.Fatalf("vars.sql: %v", err)
				}
				aid, _ := c.Var("aid")
				got, _ := c.Var("p_got")
				check, _ := c.Var("check")
				if got != aid || check != "0" {
					t.Errorf("aid %s, p_got %s, check %s; want p_got = aid and check 0", aid, got, check)
				}
				if _, ok := c.Var("bad"); ok {
					t.Error(`\if took the wrong branch`)
				}
				if v, ok := c.Var("good"); !ok || v != "1" {
					t.Error(`\elif branch did not run`)
				}
				if _, ok := c.Var("never"); ok {
					t.Error(`\aset set a variable from no rows`)
				}
			}

			// A pipeline: pipelined on PostgreSQL, in order elsewhere,
			// refused in -M simple. An undefined variable is NULL.
			s, err = script.Parse("pipe.sql", `\set x 99
\startpipeline
INSERT INTO pgbench_history (tid, bid, aid, delta) VALUES (:x, 1, 1, 5);
INSERT INTO pgbench_history (tid, bid, aid, delta) VALUES (:x, 1, 2, :nosuch);
\endpipeline
SELECT COUNT(*) AS n, COUNT(delta) AS d FROM pgbench_history WHERE tid = :x \gset
`)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Run(ctx, s, nil)
			if e.name == "postgres/simple" {
				if err == nil || !strings.Contains(err.Error(), "cannot use pipeline mode with the simple query protocol") {
					t.Errorf("pipeline in -M simple: %v; want pgbench's refusal", err)
				}
			} else {
				n, _ := c.Var("n")
				d, _ := c.Var("d")
				if err != nil || n != "2" || d != "1" {
					t.Errorf("pipeline: %v, %s rows, %s non-NULL deltas; want 2 rows, 1 (the undefined variable is NULL)", err, n, d)
				}
			}

			// \gset needs exactly one row.
			s, _ = script.Parse("gset.sql", "SELECT aid FROM pgbench_accounts WHERE aid <= 2 \\gset\n")
			var re *script.RuntimeError
			if err := c.Run(ctx, s, nil); !asRuntime(err, &re) || !strings.Contains(re.Msg, "expected one row, got 2") || re.Line != 1 {
				t.Errorf("gset on 2 rows: %v; want a RuntimeError at line 1 saying so", err)
			}
		})
	}
}

func asRuntime(err error, re **script.RuntimeError) bool {
	return errors.As(err, re)
}

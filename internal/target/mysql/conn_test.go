package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/targettest"
)

// cliRow runs sql with the mariadb (or mysql) command-line client, a
// text-protocol client of its own, and returns the first row's fields as
// it prints them in raw batch mode (NULL as "NULL").
func cliRow(t *testing.T, raw, sql string) []string {
	t.Helper()
	cli, err := exec.LookPath("mariadb")
	if err != nil {
		if cli, err = exec.LookPath("mysql"); err != nil {
			t.Skip("no mariadb or mysql command-line client to compare with")
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	args := []string{"--batch", "--raw", "--skip-column-names", "-u", u.User.Username(), "-D", strings.TrimPrefix(u.Path, "/"), "-e", sql}
	if pw != "" {
		args = append(args, "-p"+pw)
	}
	if sock := u.Query().Get("socket"); sock != "" {
		args = append(args, "-S", sock)
	} else {
		args = append(args, "-h", u.Hostname(), "-P", u.Port(), "--protocol=tcp")
	}
	out, err := exec.Command(cli, args...).Output()
	if err != nil {
		t.Fatalf("%s -e %q: %v", cli, sql, err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.Split(line, "\t")
}

// TestRunRowPrintsValuesAsTheTextProtocol: the last row RunRow keeps is,
// value for value, what a text-protocol client prints for the same row,
// for every common column type and in both --db-ps-mode modes (binary
// results, text results).
func TestRunRowPrintsValuesAsTheTextProtocol(t *testing.T) {
	raw := serverURL(t, "DBMARK_TEST_MYSQL")
	ctx := context.Background()
	c := connect(t, open(t, raw, target.Options{}))
	table := fmt.Sprintf("dbmark_types_%d", time.Now().UnixNano()%1_000_000_000)
	mustExec(t, c, "SET time_zone = '+00:00'")
	mustExec(t, c, `CREATE TABLE `+table+` (
		id INT PRIMARY KEY, ti TINYINT, si SMALLINT UNSIGNED, i INT, bi BIGINT, bu BIGINT UNSIGNED,
		de DECIMAL(12,3), fl FLOAT, fd FLOAT(7,2), db DOUBLE, dd DOUBLE(12,4),
		da DATE, dt DATETIME, dt3 DATETIME(3), ts TIMESTAMP NULL, ts6 TIMESTAMP(6) NULL, tm TIME, tm2 TIME(2), yr YEAR,
		vc VARCHAR(40), ch CHAR(4), bl BLOB, tx TEXT, en ENUM('a','b'), nu INT)`)
	t.Cleanup(func() { _ = c.Exec(context.Background(), "DROP TABLE "+table) })
	mustExec(t, c, `INSERT INTO `+table+` VALUES
		(1, -128, 65535, -2147483648, -9223372036854775808, 18446744073709551615,
		 -123456789.125, 0.1, 12.5, 0.30000000000000004, 3.14159,
		 '2024-02-29', '1999-12-31 23:59:59', '2000-01-01 00:00:00.125', '2038-01-19 03:14:07', '2020-06-01 12:00:00.000001',
		 '-838:59:59', '12:34:56.78', 2155, 'it''s text', 'ab', 'blob\\0data', '', 'b', NULL),
		(2, 0, 0, 0, 0, 0, 0, 123456789, -0.01, 1e300, 0, '0000-00-00', '0000-00-00 00:00:00', '1000-01-01 00:00:00.000',
		 NULL, NULL, '00:00:00', '-00:00:01.50', 1901, '', '', '', 'x', 'a', 7),
		(3, 127, 1, 1, 1, 9223372036854775808, 0.001, 1e-7, 99999.99, 1.5e15, -1.25, '9999-12-31', '9999-12-31 23:59:59',
		 '9999-12-31 23:59:59.999', '1970-01-02 00:00:00', '1970-01-02 00:00:00.5', '838:59:59', '100:00:00', 0, 'ü€', 'abcd',
		 X'00FF', 'ü', 'a', -1)`)
	exprs := "SELECT 1.5e0, 1e15, 1e-16, 2/3, CAST(0.1 AS FLOAT), -0.0e0, 1.0, NULL, 18446744073709551615, CURRENT_DATE - INTERVAL 0 DAY < '1000-01-01'"
	for _, mode := range []string{mysql.PSAuto, mysql.PSDisable} {
		t.Run(mode, func(t *testing.T) {
			mc := connect(t, open(t, raw, target.Options{PSMode: mode}))
			mustExec(t, mc, "SET time_zone = '+00:00'")
			check := func(stmt string, args []target.Value, cliSQL string) {
				t.Helper()
				st, err := mc.Prepare(ctx, stmt)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				row, err := st.(target.RowStmt).RunRow(ctx, args)
				if err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
				if row.Rows != 1 {
					t.Fatalf("%s: %d rows, want 1", stmt, row.Rows)
				}
				want := cliRow(t, raw, "SET time_zone = '+00:00'; "+cliSQL)
				if len(want) != len(row.Values) {
					t.Fatalf("%s: %d values, the text protocol has %d: %q", stmt, len(row.Values), len(want), want)
				}
				for i, v := range row.Values {
					got := string(v)
					if v == nil {
						got = "NULL"
					}
					if got != want[i] {
						t.Errorf("%s, column %s: RunRow %q, text protocol %q", cliSQL, row.Columns[i], got, want[i])
					}
				}
			}
			for id := 1; id <= 3; id++ {
				check("SELECT * FROM "+table+" WHERE id = ?", []target.Value{target.IntVal(int64(id))},
					fmt.Sprintf("SELECT * FROM %s WHERE id = %d", table, id))
			}
			check(exprs, nil, exprs)
		})
	}
}

// TestConnectionsOverlap: eight connections, each used by its own
// goroutine, have their statements in flight at once: two server-side
// sleeps of 0.2 s each take 0.4 s in all, where one statement at a time
// would take 3.2 s.
func TestConnectionsOverlap(t *testing.T) {
	tg := open(t, serverURL(t, "DBMARK_TEST_MYSQL"), target.Options{})
	ctx := context.Background()
	stmts := make([]target.Stmt, 8)
	for i := range stmts {
		st, err := connect(t, tg).Prepare(ctx, "SELECT SLEEP(0.2)")
		if err != nil {
			t.Fatal(err)
		}
		stmts[i] = st
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, st := range stmts {
		wg.Go(func() {
			for range 2 {
				if n, err := st.Run(ctx, nil); err != nil || n != 1 {
					t.Errorf("SELECT SLEEP(0.2): %d rows, %v", n, err)
				}
			}
		})
	}
	wg.Wait()
	if took := time.Since(start); took >= 1200*time.Millisecond {
		t.Fatalf("8 connections x 2 sleeps of 0.2 s took %v; want under 1.2 s (in flight at once: 0.4 s)", took)
	}
}

// TestKilledConnectionIsReconnect: a statement in flight on a connection
// whose server thread is killed, and the next one on it, fail with errors
// Classify calls reconnect.
func TestKilledConnectionIsReconnect(t *testing.T) {
	tg := open(t, serverURL(t, "DBMARK_TEST_MYSQL"), target.Options{})
	ctx := context.Background()
	killer := connect(t, tg)
	victim := connect(t, tg)
	id, _, err := victim.QueryRow(ctx, "SELECT CONNECTION_ID()")
	if err != nil {
		t.Fatal(err)
	}
	st, err := victim.Prepare(ctx, "SELECT SLEEP(?)")
	if err != nil {
		t.Fatal(err)
	}
	killed := make(chan error, 1)
	time.AfterFunc(300*time.Millisecond, func() { killed <- killer.Exec(ctx, "KILL "+id) })
	start := time.Now()
	_, err = st.Run(ctx, []target.Value{target.IntVal(30)})
	if kerr := <-killed; kerr != nil {
		t.Fatalf("KILL %s: %v", id, kerr)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the killed statement returned after %v", took)
	}
	if err == nil {
		t.Fatal("a statement on a killed connection succeeded")
	}
	if info := tg.Classify(err); info.Class != target.Reconnect {
		t.Fatalf("Classify(%v) = %v %q; want reconnect", err, info.Class, info.Code)
	}
	_, err = st.Run(ctx, []target.Value{target.IntVal(0)})
	if info := tg.Classify(err); err == nil || info.Class != target.Reconnect {
		t.Fatalf("the next statement on the killed connection: %v, classed %v; want a reconnect error", err, info.Class)
	}
	if err := st.Close(); err != nil {
		t.Errorf("closing a statement of a lost connection: %v", err)
	}
}

// connectErr connects to the target at raw and returns the error, which
// must be one line naming addr, and how long it took.
func connectErr(t *testing.T, raw, addr string) (error, time.Duration) {
	t.Helper()
	tg := open(t, raw, target.Options{})
	start := time.Now()
	c, err := tg.Connect(context.Background())
	took := time.Since(start)
	if err == nil {
		c.Close()
		t.Fatal("connected")
	}
	if msg := err.Error(); !strings.Contains(msg, addr) || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming %s", msg, addr)
	}
	return err, took
}

// TestConnectTimesOut: a listener that accepts and never answers does not
// hold a connect beyond the URL's ?timeout=, or 10 s without one.
func TestConnectTimesOut(t *testing.T) {
	var mu sync.Mutex
	var held []net.Conn
	addr := targettest.Listen(t, func(c net.Conn) {
		mu.Lock()
		held = append(held, c) // open and silent until the test ends
		mu.Unlock()
	})
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	for _, tc := range []struct {
		param    string
		min, max time.Duration
	}{
		{"?timeout=1s", time.Second, 5 * time.Second},
		{"", mysql.DefaultConnectTimeout, mysql.DefaultConnectTimeout + 5*time.Second},
	} {
		t.Run("timeout="+strings.TrimPrefix(tc.param, "?timeout="), func(t *testing.T) {
			t.Parallel()
			err, took := connectErr(t, "mysql://u:p@"+addr+"/db"+tc.param, addr)
			if took < tc.min-50*time.Millisecond || took > tc.max {
				t.Errorf("connect failed after %v; want after %v, within %v", took, tc.min, tc.max)
			}
			if !strings.Contains(err.Error(), "no answer within") {
				t.Errorf("error %q: want it to say there was no answer", err)
			}
		})
	}
}

// TestConnectToAnotherService: a service that answers as something other
// than MySQL is named as such, in one line, at once.
func TestConnectToAnotherService(t *testing.T) {
	for name, reply := range map[string]string{
		"http":            "HTTP/1.1 400 Bad Request\r\n\r\n",
		"short greeting":  "\x01\x00\x00\x00\x0a",
		"closes silently": "",
	} {
		t.Run(name, func(t *testing.T) {
			addr := targettest.Listen(t, func(c net.Conn) {
				defer c.Close()
				_, _ = io.WriteString(c, reply)
				time.Sleep(50 * time.Millisecond)
			})
			err, took := connectErr(t, "mysql://u:p@"+addr+"/db?timeout=5s", addr)
			want := "the server at " + addr + " did not answer as MySQL does (is it another service?)"
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q: want %q", err, want)
			}
			if took > 3*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// TestCancelEndsAStatement: the caller's context reaches the driver,
// which ends the statement; the error is the context's.
func TestCancelEndsAStatement(t *testing.T) {
	tg := open(t, serverURL(t, "DBMARK_TEST_MYSQL"), target.Options{})
	c := connect(t, tg)
	st, err := c.Prepare(context.Background(), "SELECT SLEEP(?)")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = st.Run(ctx, []target.Value{target.IntVal(10)})
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("the cancelled statement returned after %v", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) || tg.Classify(err).Class != target.Canceled {
		t.Fatalf("cancelled statement: %v; want the context's deadline, classed canceled", err)
	}
}

// TestProcedureResults: RunRow keeps the last row of a procedure's last
// result set, past the OK that ends its answer; Run counts every row.
func TestProcedureResults(t *testing.T) {
	raw := serverURL(t, "DBMARK_TEST_MYSQL")
	ctx := context.Background()
	c := connect(t, open(t, raw, target.Options{}))
	proc := fmt.Sprintf("dbmark_proc_%d", time.Now().UnixNano()%1_000_000_000)
	mustExec(t, c, "CREATE PROCEDURE "+proc+"(n INT) BEGIN SELECT 1 AS a; SELECT n AS b, 'x' AS c UNION ALL SELECT n + 1, 'y'; END")
	t.Cleanup(func() { _ = c.Exec(context.Background(), "DROP PROCEDURE "+proc) })
	for _, mode := range []string{mysql.PSAuto, mysql.PSDisable} {
		t.Run(mode, func(t *testing.T) {
			mc := connect(t, open(t, raw, target.Options{PSMode: mode}))
			st, err := mc.Prepare(ctx, "CALL "+proc+"(?)")
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			row, err := st.(target.RowStmt).RunRow(ctx, []target.Value{target.IntVal(41)})
			if err != nil || row.Rows != 2 || strings.Join(row.Columns, ",") != "b,c" || string(row.Values[0]) != "42" || string(row.Values[1]) != "y" {
				t.Fatalf("RunRow(CALL) = %d rows, columns %q, values %q, %v; want b=42, c=y of 2 rows", row.Rows, row.Columns, row.Values, err)
			}
			if n, err := st.Run(ctx, []target.Value{target.IntVal(1)}); err != nil || n != 3 {
				t.Fatalf("Run(CALL) = %d rows, %v; want 3", n, err)
			}
			// The connection is in step after the procedure's answer.
			if v, _, err := mc.QueryRow(ctx, "SELECT 5"); err != nil || v != "5" {
				t.Fatalf("after CALL: %q, %v", v, err)
			}
		})
	}
}

func mustExec(t *testing.T, c target.Conn, sql string) {
	t.Helper()
	if err := c.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// BenchmarkPointSelect runs a prepared one-row select on one connection,
// the statement of sysbench's oltp_point_select, in both modes.
func BenchmarkPointSelect(b *testing.B) {
	raw := os.Getenv("DBMARK_TEST_MYSQL")
	if raw == "" {
		b.Skip("DBMARK_TEST_MYSQL is not set")
	}
	for _, mode := range []string{mysql.PSAuto, mysql.PSDisable} {
		b.Run(mode, func(b *testing.B) {
			u, _ := url.Parse(raw)
			tg, err := mysql.Open(context.Background(), u, target.Options{PSMode: mode})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			c, err := tg.Connect(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			st, err := c.Prepare(ctx, "SELECT ? + 1, 'abc'")
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			rs := st.(target.RowStmt)
			args := make([]target.Value, 1)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				args[0].SetInt(int64(i))
				if _, err := rs.RunRow(ctx, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A timeout in the URL that is negative or not a duration is refused in
// one line: the driver took -5s and waited by the default instead.
func TestBadTimeoutIsRefused(t *testing.T) {
	for _, q := range []string{"timeout=-5s", "timeout=soon", "readTimeout=-1s", "writeTimeout=5", "timeout=-5s&socket=/x"} {
		u, err := url.Parse("mysql://u:p@127.0.0.1:1/db?" + q)
		if err != nil {
			t.Fatal(err)
		}
		_, err = mysql.Open(context.Background(), u, target.Options{})
		if err == nil || !errors.Is(err, target.ErrBadURL) || !strings.Contains(err.Error(), "imeout") || strings.Contains(err.Error(), "\n") {
			t.Errorf("?%s: %v; want a one-line refusal naming the timeout", q, err)
		}
	}
	for _, q := range []string{"timeout=5s", "timeout=0", "readTimeout=30s&writeTimeout=1m"} {
		u, _ := url.Parse("mysql://u:p@127.0.0.1:1/db?" + q)
		if _, err := mysql.Open(context.Background(), u, target.Options{}); err != nil {
			t.Errorf("?%s refused: %v", q, err)
		}
	}
}

// TestOneRowReaderServesEveryRead: counting, QueryRow and Query read rows
// through one reader on one connection, in any order: a count of a wide
// result, then the first value of a narrower one (whose text forms the
// count did not size), then a
// procedure's two result sets tallied by Query (the last one kept).
func TestOneRowReaderServesEveryRead(t *testing.T) {
	raw := serverURL(t, "DBMARK_TEST_MYSQL")
	ctx := context.Background()
	c := connect(t, open(t, raw, target.Options{}))
	proc := fmt.Sprintf("dbmark_reads_%d", time.Now().UnixNano()%1_000_000_000)
	mustExec(t, c, "CREATE PROCEDURE "+proc+"() BEGIN SELECT 1 AS a; SELECT 40 AS b, 'x' AS c UNION ALL SELECT 43, NULL; END")
	t.Cleanup(func() { _ = c.Exec(context.Background(), "DROP PROCEDURE "+proc) })
	for range 2 {
		if n, err := c.ExecRows(ctx, "SELECT 1, 2, 3, 4 UNION ALL SELECT 5, 6, 7, 8"); err != nil || n != 2 {
			t.Fatalf("ExecRows of 2 rows of 4 columns = %d, %v", n, err)
		}
		if v, ok, err := c.QueryRow(ctx, "SELECT 2.50, 'b'"); err != nil || !ok || v != "2.50" {
			t.Fatalf("QueryRow(2.50, 'b') = %q, %v, %v; want 2.50", v, ok, err)
		}
		if v, ok, err := c.QueryRow(ctx, "SELECT 1 FROM DUAL WHERE 1 = 0"); err != nil || ok || v != "" {
			t.Fatalf("QueryRow of no row = %q, %v, %v", v, ok, err)
		}
		var seen []string
		tl, err := c.Query(ctx, "CALL "+proc+"()", target.QueryOptions{Each: func(vals [][]byte) error {
			for _, v := range vals {
				if v == nil {
					seen = append(seen, "NULL")
				} else {
					seen = append(seen, string(v))
				}
			}
			return nil
		}})
		if err != nil || tl.Rows != 2 || strings.Join(tl.Columns, ",") != "b,c" || !tl.SumValid || tl.Sum != 83 || tl.Bytes != 5 {
			t.Fatalf("Query(CALL) = %+v, %v; want the last set: 2 rows of b,c summing to 83, 5 bytes", tl, err)
		}
		if got := strings.Join(seen, " "); got != "1 40 x 43 NULL" {
			t.Fatalf("Query(CALL) handed rows %q, want every set's rows", got)
		}
	}
}

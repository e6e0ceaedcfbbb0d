package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	my "github.com/go-sql-driver/mysql"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/targettest"
)

func connect(t *testing.T, mode string) target.Conn {
	t.Helper()
	raw := os.Getenv("DBMARK_TEST_MYSQL")
	if raw == "" {
		t.Skip("DBMARK_TEST_MYSQL is not set: no MySQL server to test against (make test starts one)")
	}
	_, c := targettest.Dial(t, mysql.Open, raw, target.Options{PSMode: mode})
	if !mysql.OnWire(c) {
		t.Fatal("statements do not go on the wire on a plain connection")
	}
	return c
}

func mustExec(t *testing.T, c target.Conn, sqls ...string) {
	t.Helper()
	for _, s := range sqls {
		if err := c.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func runRow(t *testing.T, c target.Conn, sql string, args ...target.Value) target.Row {
	t.Helper()
	st, err := c.Prepare(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	row, err := st.(target.RowStmt).RunRow(context.Background(), args)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return row
}

// A prepared statement's row arrives in the binary protocol and is turned
// into text here; it must read exactly as the server's own text for a
// query, for every column type.
func TestBinaryRowsReadAsTheServersText(t *testing.T) {
	bin, txt := connect(t, mysql.PSAuto), connect(t, mysql.PSDisable)
	mustExec(t, bin, "DROP TABLE IF EXISTS wire_types", `CREATE TABLE wire_types (
		ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED, mi MEDIUMINT, mu MEDIUMINT UNSIGNED,
		i INT, iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED, f FLOAT, d DOUBLE, dec10 DECIMAL(10,3),
		dt DATE, dtm DATETIME, dtm6 DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME, tm3 TIME(3), y YEAR,
		vc VARCHAR(10), ch CHAR(3), bl BLOB, tx TEXT, en ENUM('a','b'), bits BIT(8), js JSON, nul INT)`)
	t.Cleanup(func() { mustExec(t, bin, "DROP TABLE IF EXISTS wire_types") })
	mustExec(t, bin, `INSERT INTO wire_types VALUES
		(-128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
		 1.5, 0.1, -1234.5, '2024-02-29', '1999-12-31 23:59:59', '2000-01-01 00:00:00.000001', '2038-01-19 03:14:07.5',
		 '-838:59:59', '12:34:56.789', 2155, '', 'ab', x'00ff', 'ünï', 'b', b'10100101', '{"a": [1, 2]}', NULL),
		(1, 0, 2, 0, 3, 0, 4, 0, 5, 0, -3.25e-5, 6.02214076e23, 0.001, '0001-01-01', '2024-01-01 00:00:00',
		 '2024-01-01 10:00:00.5', NULL, '00:00:00', '-00:00:01.001', 1901, 'ten chars!', '', '', '', 'a', b'0', 'null', 7)`)
	// Floating point values on both sides of where the text turns to
	// exponents, and with more digits than a FLOAT keeps.
	for i, fd := range [][2]string{{"1.5e15", "1.5e-16"}, {"1e14", "1.5e-15"}, {"-1.2345678", "-1.2345678901234567e-300"},
		{"999999.5", "123456.7890123"}, {"3.4e38", "1.7976931348623157e308"}, {"1.17549435e-38", "4.9e-324"}, {"0", "-0.1"}} {
		mustExec(t, bin, fmt.Sprintf("INSERT INTO wire_types (ti, f, d) VALUES (%d, %s, %s)", 10+i, fd[0], fd[1]))
	}
	for _, where := range []string{"ti = -128", "ti = 1", "ti = 10", "ti = 11", "ti = 12", "ti = 13", "ti = 14", "ti = 15", "ti = 16"} {
		sql := "SELECT * FROM wire_types WHERE " + where
		want, got := runRow(t, txt, sql), runRow(t, bin, sql)
		if strings.Join(got.Columns, ",") != strings.Join(want.Columns, ",") || got.Rows != 1 || want.Rows != 1 {
			t.Fatalf("%s: columns %v (%d rows), want %v (%d rows)", where, got.Columns, got.Rows, want.Columns, want.Rows)
		}
		for i, col := range want.Columns {
			if (got.Values[i] == nil) != (want.Values[i] == nil) || string(got.Values[i]) != string(want.Values[i]) {
				t.Errorf("%s: %s = %q (null %v), the server's text is %q (null %v)", where, col,
					got.Values[i], got.Values[i] == nil, want.Values[i], want.Values[i] == nil)
			}
		}
	}
}

// Answers larger than the read buffer, one row split over several
// packets (more than 16 MiB), and a command of 16 MiB that must be split
// itself all arrive whole.
func TestLargeAnswersAndCommands(t *testing.T) {
	ctx := context.Background()
	c := connect(t, mysql.PSAuto)

	st, err := c.Prepare(ctx, "SELECT seq FROM seq_1_to_200000 WHERE seq <= ?")
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.Run(ctx, []target.Value{target.IntVal(150_000)})
	if err != nil || n != 150_000 {
		t.Fatalf("150,000 rows: counted %d, %v", n, err)
	}

	row := runRow(t, c, "SELECT REPEAT('a', ?) AS a, REPEAT('b', ?) AS b, 'end' AS e",
		target.IntVal(9_000_000), target.IntVal(9_000_000))
	if len(row.Values) != 3 || len(row.Values[0]) != 9_000_000 || len(row.Values[1]) != 9_000_000 ||
		row.Values[0][8_999_999] != 'a' || row.Values[1][0] != 'b' || string(row.Values[2]) != "end" {
		t.Fatalf("a row of 18 MB came back wrong: %d values", len(row.Values))
	}

	// A payload of exactly 2^24-1 bytes is followed by an empty packet
	// (one byte more is more than the server takes by default).
	for _, payload := range []int{1<<24 - 1} {
		head, tail := "SELECT LENGTH('", "') AS n"
		fill := payload - 1 - len(head) - len(tail) // 1: the command byte
		got, ok, err := c.QueryRow(ctx, head+strings.Repeat("x", fill)+tail)
		if err != nil || !ok || got != strconv.Itoa(fill) {
			t.Fatalf("a command of %d bytes: %q, %v, %v; want %d", payload, got, ok, err, fill)
		}
	}
	if got, _, err := c.QueryRow(ctx, "SELECT 'still in step'"); err != nil || got != "still in step" {
		t.Fatalf("after the large commands: %q, %v", got, err)
	}
}

// The server's errors keep their number and state and leave the
// connection usable; a procedure's several result sets are all read.
func TestErrorsAndSeveralResults(t *testing.T) {
	ctx := context.Background()
	c := connect(t, mysql.PSAuto)
	err := c.Exec(ctx, "SELEC 1")
	var me *my.MySQLError
	if !errors.As(err, &me) || me.Number != 1064 || string(me.SQLState[:]) != "42000" {
		t.Fatalf("syntax error: %v, want error 1064 (42000)", err)
	}
	if _, err := c.Prepare(ctx, "SELECT * FROM no_such_table_here"); !errors.As(err, &me) || me.Number != 1146 {
		t.Fatalf("prepare of a missing table: %v, want error 1146", err)
	}

	mustExec(t, c, "DROP PROCEDURE IF EXISTS wire_two", "CREATE PROCEDURE wire_two() BEGIN SELECT 1 UNION SELECT 2; SELECT 'x' AS last; END")
	t.Cleanup(func() { mustExec(t, c, "DROP PROCEDURE IF EXISTS wire_two") })
	for _, sql := range []string{"CALL wire_two()", "CALL wire_two()"} {
		st, err := c.Prepare(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		n, err := st.Run(ctx, nil)
		if err != nil || n != 3 {
			t.Fatalf("%s: %d rows, %v; want 3", sql, n, err)
		}
		row, err := st.(target.RowStmt).RunRow(ctx, nil)
		if err != nil || string(row.Values[0]) != "x" || row.Columns[0] != "last" {
			t.Fatalf("%s: last row %q %v, %v", sql, row.Values, row.Columns, err)
		}
		st.Close()
	}
	if got, _, err := c.QueryRow(ctx, "SELECT 42"); err != nil || got != "42" {
		t.Fatalf("after the errors: %q, %v", got, err)
	}
}

// MariaDB describes a prepared statement's columns once; when the table
// changes under it, it describes them again, and the rows read as the new
// columns.
func TestStatementSeesItsTableChange(t *testing.T) {
	ctx := context.Background()
	c := connect(t, mysql.PSAuto)
	mustExec(t, c, "DROP TABLE IF EXISTS wire_alter", "CREATE TABLE wire_alter (id INT PRIMARY KEY, v INT)", "INSERT INTO wire_alter VALUES (1, 10)")
	t.Cleanup(func() { mustExec(t, c, "DROP TABLE IF EXISTS wire_alter") })
	st, err := c.Prepare(ctx, "SELECT * FROM wire_alter WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	rs := st.(target.RowStmt)
	args := []target.Value{target.IntVal(1)}
	for range 2 {
		row, err := rs.RunRow(ctx, args)
		if err != nil || strings.Join(row.Columns, ",") != "id,v" || string(row.Values[1]) != "10" {
			t.Fatalf("before: %v %q, %v", row.Columns, row.Values, err)
		}
	}
	mustExec(t, c, "ALTER TABLE wire_alter MODIFY v VARCHAR(10), ADD w DATE DEFAULT '2020-02-02'")
	row, err := rs.RunRow(ctx, args)
	if err != nil || strings.Join(row.Columns, ",") != "id,v,w" || string(row.Values[1]) != "10" || string(row.Values[2]) != "2020-02-02" {
		t.Fatalf("after: %v %q, %v", row.Columns, row.Values, err)
	}
}

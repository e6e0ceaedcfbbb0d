package targettest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/target"
)

// queryTallies checks Conn.Query's counts on a generated series: rows,
// the first column's sum, the text's bytes, the columns, each row handed
// over, and the rows a statement that returns none affected.
func (s *suite) queryTallies(t *testing.T) {
	ctx, c, d := context.Background(), s.c, s.d
	const n = 1000
	ser := d.Series("i", n)
	for _, q := range ser.Setup {
		mustExec(t, c, q)
	}
	sql := fmt.Sprintf("%sSELECT i, 'x' AS s FROM %s ORDER BY i", ser.With, ser.From)
	var seen int
	tl, err := c.Query(ctx, sql, target.QueryOptions{Each: func(vals [][]byte) error {
		seen++
		if len(vals) != 2 || string(vals[1]) != "x" {
			return fmt.Errorf("row %d: %q", seen, vals)
		}
		return nil
	}})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	// The digits of 1..1000 (9*1 + 90*2 + 900*3 + 4) and one byte of 'x' a row.
	wantBytes := int64(9 + 180 + 2700 + 4 + n)
	if !tl.Returned || tl.Rows != n || seen != n || !tl.SumValid || tl.Sum != n*(n+1)/2 || tl.Bytes != wantBytes {
		t.Errorf("tally %+v (each saw %d): want %d rows returned, sum %d, %d bytes", tl, seen, n, n*(n+1)/2, wantBytes)
	}
	if len(tl.Columns) != 2 || !strings.EqualFold(tl.Columns[0], "i") || tl.Columns[1] != "s" {
		t.Errorf("columns %q: want i and s", tl.Columns)
	}
	// Counted without a look at the values, the same bytes and sum.
	if tl, err = c.Query(ctx, sql, target.QueryOptions{}); err != nil || tl.Rows != n || tl.Sum != n*(n+1)/2 || tl.Bytes != wantBytes {
		t.Errorf("tally without Each %+v, %v: want %d rows, sum %d, %d bytes", tl, err, n, n*(n+1)/2, wantBytes)
	}
	if tl, err = c.Query(ctx, "SELECT -12345 AS n, 0 AS z", target.QueryOptions{}); err != nil || tl.Sum != -12345 || tl.Bytes != 7 {
		t.Errorf("a negative number: %+v, %v: want sum -12345 and 7 bytes (-12345 and 0)", tl, err)
	}
	tl, err = c.Query(ctx, "SELECT 'a' AS s, 1 AS n", target.QueryOptions{})
	if err != nil || tl.Rows != 1 || tl.SumValid {
		t.Errorf("a text first column: %+v, %v: want one row and no sum", tl, err)
	}
	own := s.table + "_q"
	mustExec(t, c, "DROP TABLE IF EXISTS "+own)
	mustExec(t, c, fmt.Sprintf("CREATE TABLE %s (id INTEGER NOT NULL PRIMARY KEY, k INTEGER NOT NULL)", own))
	defer mustExec(t, c, "DROP TABLE "+own)
	mustExec(t, c, fmt.Sprintf("INSERT INTO %s (id, k) VALUES (1, 1), (2, 2), (3, 3)", own))
	tl, err = c.Query(ctx, fmt.Sprintf("UPDATE %s SET k = k + 1 WHERE id > 1", own), target.QueryOptions{})
	if err != nil || tl.Returned || tl.Rows != 2 {
		t.Errorf("update: %+v, %v: want 2 rows affected", tl, err)
	}
	tl, err = c.Query(ctx, "SELECT nosuchcolumn FROM "+own, target.QueryOptions{})
	if err == nil {
		t.Errorf("a failing query returned %+v and no error", tl)
	}
	if _, err := c.Query(ctx, "SELECT 1", target.QueryOptions{}); err != nil {
		t.Errorf("the connection does not go on after a failed query: %v", err)
	}
}

// queryTimeout checks that SetQueryTimeout has the engine end a long
// statement, leaving the connection usable, and that 0 lifts the limit.
func (s *suite) queryTimeout(t *testing.T) {
	ctx, c := context.Background(), s.c
	if err := c.SetQueryTimeout(ctx, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := c.Query(ctx, s.e.SleepSQL(10), target.QueryOptions{})
	took := time.Since(start)
	if err == nil {
		t.Fatalf("a 10 s statement under a 300 ms timeout ended without an error after %v", took)
	}
	if took > 5*time.Second {
		t.Errorf("the timeout ended the statement after %v, want about 300 ms", took)
	}
	if class := s.tg.Classify(err).Class; class == target.Reconnect {
		t.Errorf("the timeout's error (%v) is classed as a lost connection", err)
	}
	if _, err := c.Query(ctx, "SELECT 1", target.QueryOptions{}); err != nil {
		t.Errorf("the connection does not go on after a timeout: %v", err)
	}
	if err := c.SetQueryTimeout(ctx, 0); err != nil {
		t.Fatal(err)
	}
	// Longer than the timeout was: a computing sleep (SQLite's) runs
	// several times its seconds.
	secs := 0.4
	if s.e.SleepComputes != "" {
		secs = 0.05
	}
	if _, err := c.Query(ctx, s.e.SleepSQL(secs), target.QueryOptions{}); err != nil {
		t.Errorf("with the limit lifted, a longer statement failed: %v", err)
	}
}

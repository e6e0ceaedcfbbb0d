package sqlite_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/sqlite"
)

// withCounters opens a new database file and a counter reader on it.
func withCounters(t *testing.T) (target.Target, target.CounterReader) {
	t.Helper()
	tg := sqlite.New(filepath.Join(t.TempDir(), "cache.db"))
	r, err := tg.(target.CounterSource).OpenCounters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return tg, r
}

func counters(t *testing.T, r target.CounterReader) map[string]float64 {
	t.Helper()
	cs, err := r.ReadCounters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]float64{}
	for _, c := range cs {
		m[c.Name] = c.Value
	}
	return m
}

func connect(t *testing.T, tg target.Target) target.Conn {
	t.Helper()
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// queryTimes runs sql on c n times.
func queryTimes(t *testing.T, c target.Conn, sql string, n int) {
	t.Helper()
	for range n {
		if _, _, err := c.QueryRow(context.Background(), sql); err != nil {
			t.Fatal(err)
		}
	}
}

func exec(t *testing.T, c target.Conn, sqls ...string) {
	t.Helper()
	for _, s := range sqls {
		if err := c.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// The page cache counters are the sums over the target's connections, the
// workers' as well as any other: a scan of a table larger than a small
// cache misses, one that fits hits, and closing a connection keeps what it
// counted.
func TestPageCacheCounters(t *testing.T) {
	tg, r := withCounters(t)
	w := connect(t, tg)
	// About 400 pages of 4 KiB.
	exec(t, w, "CREATE TABLE t (id INTEGER PRIMARY KEY, pad TEXT)",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 4000) INSERT INTO t SELECT i, printf('%.300c', 'x') FROM n")
	scan := "SELECT COUNT(*) FROM t WHERE pad <> ''"

	small := connect(t, tg)
	exec(t, small, "PRAGMA cache_size = 10")
	before := counters(t, r)
	if before["connections"] != 2 || before["pages_written"] == 0 || before["cache_bytes"] == 0 || before["memory_used"] == 0 {
		t.Fatalf("after loading the table on one connection of two: %v", before)
	}
	queryTimes(t, small, scan, 3)
	after := counters(t, r)
	if d := after["blocks_read"] - before["blocks_read"]; d < 3*300 {
		t.Fatalf("3 scans of ~400 pages through a 10-page cache read %v pages from the file", d)
	}

	// The writer's cache holds the table: its scans hit.
	before = after
	queryTimes(t, w, scan, 3)
	after = counters(t, r)
	if d := after["blocks_hit"] - before["blocks_hit"]; d < 3*300 {
		t.Fatalf("3 scans in a warm cache hit %v pages", d)
	}

	before = after
	if err := small.Close(); err != nil {
		t.Fatal(err)
	}
	after = counters(t, r)
	if after["connections"] != 1 || after["blocks_read"] < before["blocks_read"] || after["blocks_hit"] < before["blocks_hit"] {
		t.Fatalf("closing a connection: before %v, after %v", before, after)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// A connection running a long statement holds its mutex; reading the
// counters does not wait for the statement to end: the sum holds what the
// connection counted up to its last statement, and only grows.
func TestPageCacheCountersDoNotWaitForAStatement(t *testing.T) {
	ctx := context.Background()
	tg, r := withCounters(t)
	c := connect(t, tg)
	defer c.Close()
	exec(t, c, "CREATE TABLE t (id INTEGER PRIMARY KEY)")
	queryTimes(t, c, "SELECT COUNT(*) FROM t", 10)
	before := counters(t, r) // the connection is idle: read at once
	if before["pages_written"] == 0 || before["blocks_hit"] == 0 {
		t.Fatalf("counters of an idle connection: %v", before)
	}
	stmtCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		// Far longer than the test: the cancel below ends it.
		_, _, err := c.QueryRow(stmtCtx, "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i < 1e12) SELECT COUNT(*) FROM r")
		done <- err
	}()
	defer func() { stop(); <-done }()
	time.Sleep(100 * time.Millisecond) // lets the statement start
	last := before["blocks_hit"]
	for range 5 {
		began := time.Now()
		m := counters(t, r)
		if d := time.Since(began); d > time.Second {
			t.Fatalf("reading took %v: it waited for the statement", d)
		}
		if m["connections"] != 1 || m["blocks_hit"] < last || m["pages_written"] == 0 {
			t.Fatalf("counters during a statement: %v (blocks_hit before: %v)", m, last)
		}
		last = m["blocks_hit"]
	}
	select {
	case err := <-done:
		t.Fatalf("the statement ended before the counters were read: %v", err)
	default:
	}
}

// Clients that keep the database busy (readers and writers on their own
// connections, the writers waiting on each other for the write lock) do
// not keep the counters from being read: every read gives a sample at
// once, and the hits move between samples as the clients work.
func TestPageCacheCountersOfBusyClients(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	tg, r := withCounters(t)
	setup := connect(t, tg)
	exec(t, setup, "CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, pad TEXT)",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000) INSERT INTO t SELECT i, i, printf('%.100c', 'x') FROM n")
	setup.Close()
	var wg sync.WaitGroup
	for i := range 4 {
		c := connect(t, tg)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			write, err := c.Prepare(ctx, "UPDATE t SET k = k + 1 WHERE id = ?")
			if err != nil {
				t.Error(err)
				return
			}
			defer write.Close()
			read, err := c.Prepare(ctx, "SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ?")
			if err != nil {
				t.Error(err)
				return
			}
			defer read.Close()
			for n := int64(0); ctx.Err() == nil; n++ {
				id := target.Value{Int: n%2000 + 1}
				if i%2 == 0 {
					_ = c.Exec(ctx, "BEGIN IMMEDIATE")
					_, _ = write.Run(ctx, []target.Value{id})
					_ = c.Exec(ctx, "COMMIT")
				} else {
					_, _ = read.Run(ctx, []target.Value{id, {Int: n%2000 + 100}})
				}
			}
		}()
	}
	defer func() { stop(); wg.Wait() }()
	time.Sleep(100 * time.Millisecond)
	const samples = 20
	prev := counters(t, r)
	moved := 0
	for range samples {
		time.Sleep(100 * time.Millisecond)
		began := time.Now()
		cs, err := r.ReadCounters(context.Background())
		if err != nil {
			t.Fatalf("reading the counters of busy clients: %v", err)
		}
		if d := time.Since(began); d > 500*time.Millisecond {
			t.Errorf("a read took %v", d)
		}
		m := map[string]float64{}
		for _, c := range cs {
			m[c.Name] = c.Value
		}
		if m["blocks_hit"] < prev["blocks_hit"] || m["pages_written"] < prev["pages_written"] {
			t.Fatalf("the sums went down: %v after %v", m, prev)
		}
		if m["blocks_hit"] > prev["blocks_hit"] {
			moved++
		}
		prev = m
	}
	// A loaded machine may leave the clients unscheduled for a while.
	if moved < samples/2 {
		t.Errorf("the hits moved in %d of %d samples", moved, samples)
	}
}

// Package targettest is the conformance suite every target passes: the same
// statements, bulk loads, error classes and cancellation behaviour on every
// engine, against a real server or file.
package targettest

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/testsrv"
)

// Engine describes the engine-specific bits the suite needs.
type Engine struct {
	// Open returns a fresh target; it is closed by the suite.
	Open func(t *testing.T) target.Target
	// SleepSQL is a statement that runs for about the given seconds
	// (fractions included).
	SleepSQL func(seconds float64) string
	// SleepComputes, if set, says why SleepSQL keeps a CPU busy instead
	// of waiting on the server (SQLite has no sleep); the test that N
	// clients wait at once is skipped with it.
	SleepComputes string
	// UniqueViolation is the error code of a duplicate primary key.
	UniqueViolation string
	// KillSQL, if set, returns a statement that, run from another
	// connection, ends the session whose ID BackendIDSQL returned.
	BackendIDSQL string
	KillSQL      func(id string) string
	// NoticeThenCloseSQL, if set, is a statement that sends the client a
	// notice (or warning) and then has the server end the session.
	NoticeThenCloseSQL string
	// NoticeThenSleepSQL, if set, is a statement that sends the client a
	// notice (or a first result) and then sleeps on the server for about
	// the given seconds; the suite ends its session meanwhile (KillSQL).
	NoticeThenSleepSQL func(seconds float64) string
	// OwnServer, if set, opens a target as Open does (the same kind of
	// connection) but on a server of the test's own (testsrv), which the
	// suite kills and starts again. The target is closed by the suite.
	OwnServer func(t *testing.T) (target.Target, *testsrv.Server)
	// Conflict, if set, provokes an error that must be classed retryable
	// (a deadlock, a serialization failure, SQLITE_BUSY) on c1 or c2.
	Conflict func(ctx context.Context, t *testing.T, c1, c2 target.Conn, table string) error
	// LockWaiters says the engine's counters count the sessions waiting on
	// another's lock (lock_waiters): the cause a dip's counters name.
	LockWaiters bool
}

// suite is what the cases of Run share: the engine, its target, one
// connection and a table of the suite's own.
type suite struct {
	e     Engine
	tg    target.Target
	c     target.Conn
	d     target.Dialect
	table string
}

// Run runs the suite: each case is a method of suite (cases.go) or a
// function of its own (clients.go) where it needs clients of its own.
func Run(t *testing.T, e Engine) {
	ctx := context.Background()
	tg := e.Open(t)
	t.Cleanup(func() { tg.Close() })
	d := tg.Dialect()
	table := fmt.Sprintf("dbmark_conf_%d", time.Now().UnixNano()%1_000_000_000)

	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	mustExec(t, c, "DROP TABLE IF EXISTS "+table)
	mustExec(t, c, fmt.Sprintf("CREATE TABLE %s (%s, k INTEGER NOT NULL, c VARCHAR(120) NOT NULL)", table, d.AutoIncrementPK("id")))
	t.Cleanup(func() {
		if cc, err := tg.Connect(context.Background()); err == nil {
			_ = cc.Exec(context.Background(), "DROP TABLE IF EXISTS "+table)
			cc.Close()
		}
	})

	s := &suite{e: e, tg: tg, c: c, d: d, table: table}
	t.Run("Redacted", s.redacted)
	t.Run("InsertSelectUpdate", s.insertSelectUpdate)
	t.Run("RunRowKeepsTheLastRow", s.runRowKeepsTheLastRow)
	t.Run("NullArguments", s.nullArguments)
	t.Run("Pipeline", s.pipeline)
	t.Run("Transaction", s.transaction)
	t.Run("UniqueViolationIsFatal", s.uniqueViolationIsFatal)
	t.Run("BulkInsert", s.bulkInsert)
	t.Run("DeleteOne", s.deleteOne)
	t.Run("QueryTallies", s.queryTallies)
	t.Run("QueryTimeout", s.queryTimeout)
	t.Run("Inspect", s.inspect)
	t.Run("Facts", s.facts)
	t.Run("Counters", s.counters)
	if e.LockWaiters {
		t.Run("LockWaitersCounted", s.lockWaitersCounted)
	}
	t.Run("CancelInterruptsWithinASecond", s.cancelInterruptsWithinASecond)

	t.Run("ConnOutlivesItsContexts", func(t *testing.T) { connOutlivesItsContexts(t, tg) })
	t.Run("ClientsWaitAtOnce", func(t *testing.T) { clientsWaitAtOnce(t, tg, e) })
	t.Run("LittlesLaw", func(t *testing.T) { littlesLaw(t, tg) })
	if e.KillSQL != nil {
		t.Run("KilledSessionIsReconnect", func(t *testing.T) { killedSession(t, tg, e) })
	}
	if e.NoticeThenCloseSQL != "" || e.NoticeThenSleepSQL != nil {
		t.Run("NoticeThenClose", func(t *testing.T) { noticeThenClose(t, tg, e) })
	}
	if e.OwnServer != nil {
		t.Run("ServerRestart", func(t *testing.T) { serverRestart(t, e) })
	}

	if e.Conflict != nil {
		t.Run("ConflictIsRetryable", s.conflictIsRetryable)
	}

	t.Run("ClassifyCanceledContext", s.classifyCanceledContext)
}

// Dial opens the target at raw with open and connects once; the
// connection is closed when the test ends.
func Dial(t *testing.T, open target.Opener, raw string, opts target.Options) (target.Target, target.Conn) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := open(context.Background(), u, opts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return tg, c
}

func mustExec(t *testing.T, c target.Conn, sql string) {
	t.Helper()
	if err := c.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// counter yields rows (i, i*2, a string with characters that need escaping).
type counter struct {
	i, n int64
	buf  []byte
}

func (s *counter) Next(dst []target.Value) bool {
	if s.i >= s.n {
		return false
	}
	s.i++
	dst[0].SetInt(s.i)
	dst[1].SetInt(s.i * 2)
	s.buf = append(s.buf[:0], "tab\there 'quoted' back\\slash "...)
	s.buf = strconv.AppendInt(s.buf, s.i, 10)
	dst[2].SetStr(s.buf)
	return true
}

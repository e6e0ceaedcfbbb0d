package cli_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/dips"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/testsrv"
	"github.com/dbmark/dbmark/internal/workload/workloadtest"
)

// dipCase is one way of making a dip on purpose during a run.
type dipCase struct {
	engine, source string
	// url is the target; private cases start a server of their own.
	url func(t *testing.T) string
	// provoke makes the dip on the target and returns when it is over;
	// the dip is looked for between its start and its end plus slack.
	provoke func(t *testing.T, ctx context.Context, url string)
	slack   time.Duration
	// before runs before the run; at is when the dip is made (5 s in) and
	// runFor the run's length (11 s).
	before     func(t *testing.T, ctx context.Context, url string)
	at, runFor time.Duration
	// movers: one of the counters named for the dip must begin with one
	// of these (nil: any or none; a lock shows in no counter for sure).
	movers []string
}

// holdFor runs take, waits d and runs release, each a list of
// statements, on a connection of its own.
func holdFor(take, release []string, d time.Duration) func(t *testing.T, ctx context.Context, url string) {
	return func(t *testing.T, ctx context.Context, url string) {
		c := connect(t, url)
		for _, stmt := range take {
			if err := c.Exec(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		time.Sleep(d)
		for _, stmt := range release {
			if err := c.Exec(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	}
}

// burst writes rows from another connection, a statement of 20,000 rows
// after another, for d, then runs after.
func burst(setup []string, insert string, d time.Duration, after ...string) func(t *testing.T, ctx context.Context, url string) {
	return func(t *testing.T, ctx context.Context, url string) {
		c := connect(t, url)
		for _, stmt := range setup {
			if err := c.Exec(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		for end := time.Now().Add(d); time.Now().Before(end); {
			if err := c.Exec(ctx, insert); err != nil {
				t.Fatalf("%s: %v", insert, err)
			}
		}
		for _, stmt := range after {
			if err := c.Exec(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	}
}

// freeze stops the private server's processes for d (SIGSTOP, SIGCONT).
func freeze(srv func(testing.TB) *testsrv.Server, d time.Duration) func(t *testing.T, ctx context.Context, url string) {
	return func(t *testing.T, _ context.Context, _ string) {
		thaw, err := srv(t).Freeze()
		if err != nil {
			t.Fatal(err)
		}
		defer thaw()
		time.Sleep(d)
	}
}

// TestDipFound makes dips on purpose during a run, one run a case, and
// checks each is found where it was made, with the counters that tell
// what happened, said in the summary and kept in the result. By default
// it runs one case an engine (CI's time is short): a table lock held by
// another connection on SQLite, the server stopped by SIGSTOP for 2.5 s
// on a private PostgreSQL, FLUSH TABLES ... WITH READ LOCK on a private
// MariaDB (the counters of a server that other packages' tests use move
// with their work: another test's inserts outranked the lock's waiters).
// DBMARK_TEST_DIPS=all runs every source on every engine where it
// applies: the lock, a batch of writes from another connection, a
// CHECKPOINT on a PostgreSQL whose disk cannot keep up (checkpointCase),
// and SIGSTOP of a private MariaDB too (about 130 s more).
func TestDipFound(t *testing.T) {
	home(t)
	ctx := context.Background()
	all := os.Getenv("DBMARK_TEST_DIPS") == "all"
	engines := map[string]string{}
	for _, e := range workloadtest.Engines(t, "dbmark_dips") {
		engines[e.Name] = e.URL
	}
	shared := func(name string) func(*testing.T) string {
		return func(t *testing.T) string {
			u, ok := engines[name]
			if !ok {
				t.Skipf("no %s test server (scripts/testenv.sh env)", name)
			}
			return u
		}
	}
	pgSrv, mySrv := testsrv.Lazy(t, testsrv.Postgres), testsrv.Lazy(t, testsrv.MariaDB)
	private := func(srv func(testing.TB) *testsrv.Server, setup ...string) func(*testing.T) string {
		return func(t *testing.T) string {
			s := srv(t)
			for _, stmt := range setup {
				if err := connect(t, s.TCP).Exec(context.Background(), stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			return s.TCP
		}
	}
	const hold = 2500 * time.Millisecond
	// A batch job from another connection: every row of the run's table
	// updated again and again in one transaction, whose row locks hold
	// the run's updates until it commits.
	batch := burst([]string{"BEGIN"}, "UPDATE sbtest1 SET k = k + 1", hold, "COMMIT")
	writes := []string{"db.rows_updated", "db.handler_update", "db.row_lock_", "db.wal_", "db.log_", "db.pages_flushed", "db.dirty_pages",
		"db.buffers_alloc", "db.backend_buffers", "db.io_", "db.fsyncs", "db.threads_running", "os.disk.", "os.mem.dirty"}
	// What a FLUSH TABLES ... WITH READ LOCK moves, from run to run: the
	// sessions it holds wait (lock_waiters, threads_running), the flush writes the
	// table's pages (pages flushed, dirty pages down, the kernel's dirty
	// memory up, disk writes, fsyncs), and the server answers late; on a
	// quiet machine whose flush is quick, only the CPUs left idle while
	// every session waits.
	flushed := []string{"db.lock_waiters", "db.threads_running", "db.pages_flushed", "db.dirty_pages", "db.fsyncs", "db.status_read_ms", "os.disk.", "os.mem.dirty", "os.cpu.idle"}
	cases := []dipCase{
		{engine: "sqlite", source: "lock", url: shared("sqlite"), provoke: holdFor([]string{"BEGIN IMMEDIATE"}, []string{"COMMIT"}, hold)},
		{engine: "postgres", source: "SIGSTOP", url: private(pgSrv), provoke: freeze(pgSrv, hold), movers: []string{"db.status_read_ms"}},
		{engine: "mariadb", source: "FLUSH TABLES WITH READ LOCK", url: private(mySrv),
			provoke: holdFor([]string{"FLUSH TABLES sbtest1 WITH READ LOCK"}, []string{"UNLOCK TABLES"}, hold), movers: flushed},
	}
	if all {
		cases = append(cases,
			dipCase{engine: "postgres", source: "lock", url: shared("postgres"),
				provoke: holdFor([]string{"BEGIN", "LOCK TABLE sbtest1 IN ACCESS EXCLUSIVE MODE"}, []string{"COMMIT"}, hold)},
			dipCase{engine: "mariadb", source: "lock", url: shared("mariadb"),
				provoke: holdFor([]string{"LOCK TABLES sbtest1 WRITE"}, []string{"UNLOCK TABLES"}, hold)},
			dipCase{engine: "postgres", source: "batch of writes", url: shared("postgres"), provoke: batch, movers: writes},
			dipCase{engine: "mariadb", source: "batch of writes", url: shared("mariadb"), provoke: batch, movers: writes},
			checkpointCase(),
			dipCase{engine: "mariadb", source: "SIGSTOP", url: private(mySrv), provoke: freeze(mySrv, hold), movers: []string{"db.status_read_ms"}},
		)
	}
	for _, c := range cases {
		t.Run(c.engine+"/"+c.source, func(t *testing.T) {
			url := c.url(t)
			size := []string{"--target", url, "--tables", "1", "--table-size", "1000"}
			prepared(t, "oltp_update_non_index", size...)
			if c.before != nil {
				c.before(t, ctx, url)
			}
			at, runFor := cmp.Or(c.at, 5*time.Second), cmp.Or(c.runFor, 11*time.Second)
			doc := filepath.Join(t.TempDir(), "r.json")
			done := make(chan outcome)
			go func() {
				done <- dbmark(t, ctx, append([]string{"run", "oltp_update_non_index", "--threads", "2", "--time", runFor.String(),
					"--report-interval", "1s", "--json", doc}, size...)...)
			}()
			time.Sleep(at)
			began := time.Now()
			c.provoke(t, ctx, url)
			ended := time.Now().Add(c.slack)
			o := <-done
			if o.code != 0 {
				t.Fatalf("run: exit %d: %s", o.code, o.stderr)
			}
			r := readResult(t, doc)
			from, to := began.Sub(r.StartedAt).Seconds(), ended.Sub(r.StartedAt).Seconds()
			var found *result.Dip
			for i, d := range r.Summary.Dips {
				// The dip's intervals overlap the time it was made.
				if d.FromS < to && d.ToS > from && d.Change < -0.25 {
					found = &r.Summary.Dips[i]
					break
				}
			}
			if found == nil {
				var tps []string
				for _, iv := range r.Series {
					tps = append(tps, fmt.Sprintf("%.1f:%.0f", iv.T, iv.EventsPerS))
				}
				t.Fatalf("no dip found while it was made (%.1f-%.1f s): %+v\nthroughput %s", from, to, r.Summary.Dips, strings.Join(tps, " "))
			}
			t.Logf("%s", dips.Line(*found, r.Summary.HeadlineUnit))
			if c.movers != nil && !namesOneOf(found.Movers, c.movers) {
				t.Errorf("the dip names none of %v: %s", c.movers, dips.Line(*found, r.Summary.HeadlineUnit))
			}
			if !strings.Contains(o.stdout, "Dips (throughput well below its running median") {
				t.Errorf("the summary does not say it:\n%s", o.stdout)
			}
		})
	}
}

// namesOneOf says whether a mover's name begins with one of prefixes.
func namesOneOf(ms []result.Mover, prefixes []string) bool {
	for _, m := range ms {
		for _, p := range prefixes {
			if strings.HasPrefix(m.Name, p) {
				return true
			}
		}
	}
	return false
}

// checkpointCase is a CHECKPOINT on a private PostgreSQL whose data and
// WAL are on a disk made slow on purpose (a loop device whose writes the
// kernel holds to 20 MiB/s): a fast disk absorbs a checkpoint's writes
// without a dip, so a dip here needs a disk that does not keep up. The
// server syncs (fsync, full_page_writes, synchronous_commit on), and a
// burst of writes before the run, written back before the limit is set,
// leaves some 50 MB of dirty pages in shared_buffers for the checkpoint:
// its sync phase holds the disk for seconds, and the clients' commits,
// whose WAL flushes queue behind it, stall. Where no disk can be slowed
// (not root, no cgroup v1 blkio throttling) the case is skipped, saying
// so.
func checkpointCase() dipCase {
	var (
		disk *testsrv.SlowDisk
		srv  *testsrv.Server
	)
	exec := func(t *testing.T, ctx context.Context, url string, stmts ...string) {
		t.Helper()
		c := connect(t, url)
		for _, stmt := range stmts {
			if err := c.Exec(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	}
	return dipCase{engine: "postgres", source: "CHECKPOINT on a slow disk",
		url: func(t *testing.T) string {
			d := testsrv.StartSlowDisk(t, 2<<30)
			disk, srv = d, testsrv.Start(t, testsrv.PostgresOn(d))
			exec(t, context.Background(), srv.TCP, "ALTER SYSTEM SET fsync = on", "ALTER SYSTEM SET full_page_writes = on",
				"ALTER SYSTEM SET synchronous_commit = on", "ALTER SYSTEM SET shared_buffers = '512MB'")
			if err := srv.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			return srv.TCP
		},
		before: func(t *testing.T, ctx context.Context, url string) {
			exec(t, ctx, url, "CHECKPOINT", "CREATE TABLE dip_burst (a int, b text)",
				"INSERT INTO dip_burst SELECT g, repeat('x', 200) FROM generate_series(1, 200000) g")
			if err := disk.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := disk.Throttle(20 << 20); err != nil {
				t.Fatal(err)
			}
		},
		provoke: holdFor([]string{"CHECKPOINT"}, nil, 0), at: 6 * time.Second, runFor: 16 * time.Second, slack: 2 * time.Second,
		movers: []string{"db.checkpoint"},
	}
}

// TestNoDipSteady checks the detector's other side on real runs: a steady,
// light run reports no dip, on every engine at once. The run is an open
// loop at 300 point selects a second, far under what a loaded machine
// serves, so each 1 s interval's throughput is the rate's Poisson count
// (300 ± 17) whatever the load: the 25% a dip needs is more than four of
// its standard deviations. Only a client that fell behind its schedule
// makes one, by a stall of a quarter of an interval at least, which then
// shows in the schedule's lag (the late events' mean lag in the interval
// they complete in is 25 ms or more; a steady run's is a few ms, up to 40
// on a machine at load 30 in an interval without a dip): such a dip is
// the machine's, not a false alarm, and the test is skipped saying so.
// The engines run at once, so the test takes one run's 13 s.
func TestNoDipSteady(t *testing.T) {
	home(t)
	for _, e := range workloadtest.Engines(t, "dbmark_steady") {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			size := []string{"--target", e.URL, "--tables", "1", "--table-size", "1000"}
			prepared(t, "oltp_point_select", size...)
			doc := filepath.Join(t.TempDir(), "r.json")
			o := dbmark(t, ctx, append([]string{"run", "oltp_point_select", "--threads", "2", "--rate", "300", "--time", "12s",
				"--report-interval", "1s", "--json", doc}, size...)...)
			if o.code != 0 {
				t.Fatalf("run: exit %d: %s", o.code, o.stderr)
			}
			r := readResult(t, doc)
			var tps []string
			for _, iv := range r.Series {
				tps = append(tps, fmt.Sprintf("%.0f:%.0f(lag %.1f ms)", iv.T, iv.EventsPerS, iv.LagMeanMS))
			}
			if len(r.Series) < 10 {
				t.Fatalf("%d intervals, fewer than the detector needs: %s", len(r.Series), strings.Join(tps, " "))
			}
			for _, d := range r.Summary.Dips {
				if lag := lagAround(r.Series, d); lag >= 25 {
					t.Skipf("the client fell behind its schedule (%.0f ms of lag) at %s: not a steady run", lag, dips.Line(d, r.Summary.HeadlineUnit))
				}
				t.Errorf("a dip on a steady run: %s\nthroughput %s", dips.Line(d, r.Summary.HeadlineUnit), strings.Join(tps, " "))
			}
			if strings.Contains(o.stdout, "Dips (") {
				t.Errorf("the summary names dips:\n%s", o.stdout)
			}
			t.Logf("throughput %s", strings.Join(tps, " "))
		})
	}
}

// lagAround is the highest mean schedule lag (ms) of d's intervals and the
// one after, where the events a stall delayed complete.
func lagAround(series []result.Interval, d result.Dip) float64 {
	var out float64
	for i, iv := range series {
		if iv.T > d.FromS && iv.T-iv.DurationS < d.ToS {
			out = max(out, iv.LagMeanMS)
			if i+1 < len(series) {
				out = max(out, series[i+1].LagMeanMS)
			}
		}
	}
	return out
}

package runner_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/mux"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/workload"
)

// TestServerGoneEndsTheRunInBoundedTime closes a database to new
// connections and ends the workers' sessions: the workers try to reconnect
// for ReconnectFor, then the run fails with what it measured.
func TestServerGoneEndsTheRunInBoundedTime(t *testing.T) {
	raw := os.Getenv("DBMARK_TEST_POSTGRES")
	if raw == "" {
		t.Skip("DBMARK_TEST_POSTGRES not set (make test starts the servers)")
	}
	ctx := context.Background()
	admin := open(t, raw)
	ac, err := admin.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	db := fmt.Sprintf("dbmark_gone_%d", time.Now().UnixNano()%1_000_000)
	if err := ac.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = ac.Exec(ctx, "ALTER DATABASE "+db+" ALLOW_CONNECTIONS true")
		_ = ac.Exec(ctx, "DROP DATABASE "+db+" WITH (FORCE)")
	}()
	u, _ := url.Parse(raw)
	u.Path = "/" + db
	tg := open(t, u.String())
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)", "INSERT INTO counter VALUES (1, 0)"} {
		if err := c.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()

	time.AfterFunc(500*time.Millisecond, func() {
		_ = ac.Exec(ctx, "ALTER DATABASE "+db+" ALLOW_CONNECTIONS false")
		_ = ac.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '"+db+"'")
	})
	cfg := runner.Config{Threads: 2, Duration: time.Minute, MaxTries: 1, Percentiles: []float64{50}, ReconnectFor: time.Second}
	start := time.Now()
	out := runner.Run(ctx, cfg, tg, script(func(int64) []string {
		return []string{"BEGIN", "UPDATE counter SET n = n + 1 WHERE id = 1", "COMMIT"}
	}), nil, quiet)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the run took %v after the server went away", took)
	}
	if out.Status != result.StatusFailed || out.Err == nil {
		t.Fatalf("status %s (%v), want failed", out.Status, out.Err)
	}
	if out.Summary.Events == 0 || out.Summary.Reconnects == 0 {
		t.Fatalf("events %d reconnects %d: the partial result must keep both", out.Summary.Events, out.Summary.Reconnects)
	}
}

func open(t *testing.T, raw string) target.Target {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	opener := postgres.Open
	if u.Scheme == "mysql" {
		opener = mysql.Open
	}
	tg, err := opener(context.Background(), u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestJobsServeTheirWorkersFromOneThreadEach: with Jobs on a target whose
// connections can wait in a loop, every worker runs in a mux task and
// job j's workers (pgbench's contiguous split, the first ones one more)
// share one OS thread; with SQLite, whose statements cannot, each worker
// is a goroutine of its own.
func TestJobsServeTheirWorkersFromOneThreadEach(t *testing.T) {
	raw := os.Getenv("DBMARK_TEST_POSTGRES")
	if raw == "" {
		t.Skip("DBMARK_TEST_POSTGRES not set (make test starts the servers)")
	}
	const threads, jobs = 5, 2
	var mu sync.Mutex
	tids := map[int]map[int]bool{} // worker -> threads it ran on
	inTask := map[int]bool{}
	load := &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, id int, conn target.Conn, h *metrics.Handle) (workload.Worker, error) {
			return workerFunc(func(ctx context.Context) error {
				if err := conn.Exec(ctx, "SELECT 1"); err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				if tids[id] == nil {
					tids[id] = map[int]bool{}
				}
				tids[id][unix.Gettid()] = true
				inTask[id] = mux.From(ctx) != nil
				return nil
			}), nil
		},
	}
	cfg := runner.Config{Threads: threads, Jobs: jobs, Events: 500, MaxTries: 1, Percentiles: []float64{50}}
	out := runner.Run(context.Background(), cfg, open(t, raw), load, nil, quiet)
	if out.Err != nil || out.Summary.Events != 500 || out.Loops != jobs {
		t.Fatalf("run: %v, %d events, %d loops", out.Err, out.Summary.Events, out.Loops)
	}
	thread := map[int]int{} // worker -> its one thread
	for id := 0; id < threads; id++ {
		if len(tids[id]) != 1 || !inTask[id] {
			t.Fatalf("worker %d ran on threads %v, in a task: %v; want one thread, in a task", id, tids[id], inTask[id])
		}
		for tid := range tids[id] {
			thread[id] = tid
		}
	}
	// Workers 0-2 are job 0's, 3-4 job 1's.
	if thread[0] != thread[1] || thread[1] != thread[2] || thread[3] != thread[4] || thread[0] == thread[3] {
		t.Fatalf("workers' threads %v: want 0-2 on one, 3-4 on another", thread)
	}

	clear(inTask)
	out = runner.Run(context.Background(), runner.Config{Threads: 2, Jobs: 1, Events: 20, MaxTries: 1, Percentiles: []float64{50}}, counterTable(t, ""), load, nil, quiet)
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	if inTask[0] || inTask[1] || out.Loops != 0 {
		t.Fatalf("SQLite's workers ran in mux tasks (%d loops)", out.Loops)
	}
}

// TestSpreadPinsEachLoopToItsOwnCPU: with Affinity spread, job j's
// workers run on a thread that may use the j-th allowed CPU alone, and the
// outcome says which; with none they may run anywhere the process may.
func TestSpreadPinsEachLoopToItsOwnCPU(t *testing.T) {
	raw := os.Getenv("DBMARK_TEST_POSTGRES")
	if raw == "" {
		t.Skip("DBMARK_TEST_POSTGRES not set (make test starts the servers)")
	}
	all := twoCPUs(t)
	var allowed []int
	for c := 0; len(allowed) < all.Count(); c++ {
		if all.IsSet(c) {
			allowed = append(allowed, c)
		}
	}
	var mu sync.Mutex
	sets := map[int]unix.CPUSet{} // worker -> its thread's affinity
	load := &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, id int, conn target.Conn, h *metrics.Handle) (workload.Worker, error) {
			return workerFunc(func(ctx context.Context) error {
				var set unix.CPUSet
				if err := unix.SchedGetaffinity(0, &set); err != nil {
					return err
				}
				mu.Lock()
				sets[id] = set
				mu.Unlock()
				return conn.Exec(ctx, "SELECT 1")
			}), nil
		},
	}
	for _, a := range []runner.Affinity{runner.AffinitySpread, runner.AffinityNone} {
		clear(sets)
		cfg := runner.Config{Threads: 4, Jobs: 2, Affinity: a, Events: 40, MaxTries: 1, Percentiles: []float64{50}}
		out := runner.Run(context.Background(), cfg, open(t, raw), load, nil, quiet)
		if out.Err != nil || out.Loops != 2 {
			t.Fatalf("%s: run: %v, %d loops", a, out.Err, out.Loops)
		}
		if a == runner.AffinityNone {
			first, last := sets[0], sets[3]
			if out.LoopCPUs != nil || first != all || last != all {
				t.Errorf("none: loops pinned to %v; workers 0 and 3 may use %d and %d CPUs, want %d", out.LoopCPUs, first.Count(), last.Count(), all.Count())
			}
			continue
		}
		// In turn over the allowed CPUs, from wherever the run started.
		want := out.LoopCPUs
		if len(want) != 2 {
			t.Fatalf("spread: loops pinned to %v, want two CPUs", want)
		}
		if i := slices.Index(allowed, want[0]); i < 0 || want[1] != allowed[(i+1)%len(allowed)] {
			t.Fatalf("spread: loops pinned to %v, want two allowed CPUs in turn (%v)", want, allowed)
		}
		// Workers 0-1 are job 0's, 2-3 job 1's.
		for id, cpu := range []int{want[0], want[0], want[1], want[1]} {
			if set := sets[id]; set.Count() != 1 || !set.IsSet(cpu) {
				t.Errorf("spread: worker %d may run on %d CPUs (CPU %d: %v), want CPU %d alone", id, set.Count(), cpu, set.IsSet(cpu), cpu)
			}
		}
	}
	// The threads went back to the runtime with their affinity restored.
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil || after != all {
		t.Errorf("after the runs this thread may use %d CPUs (%v), want %d", after.Count(), err, all.Count())
	}
}

// TestDefaultJobsFollowTheTarget: when --jobs is the workload's default,
// MySQL's connections each get a goroutine (the target prefers a thread
// per connection) and PostgreSQL's go to loops; a --jobs the user gave
// serves MySQL's from loops too.
func TestDefaultJobsFollowTheTarget(t *testing.T) {
	pgURL, myURL := os.Getenv("DBMARK_TEST_POSTGRES"), os.Getenv("DBMARK_TEST_MYSQL")
	if pgURL == "" || myURL == "" {
		t.Skip("DBMARK_TEST_POSTGRES or DBMARK_TEST_MYSQL not set (make test starts the servers)")
	}
	my := open(t, myURL)
	var mu sync.Mutex
	inTask := map[int]bool{}
	load := &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, id int, conn target.Conn, h *metrics.Handle) (workload.Worker, error) {
			return workerFunc(func(ctx context.Context) error {
				mu.Lock()
				inTask[id] = mux.From(ctx) != nil
				mu.Unlock()
				return conn.Exec(ctx, "SELECT 1")
			}), nil
		},
	}
	for _, c := range []struct {
		name        string
		tg          target.Target
		byDefault   bool
		loops       int
		wantInATask bool
	}{
		{"mysql, default --jobs", my, true, 0, false},
		{"mysql, --jobs given", my, false, 2, true},
		{"postgres, default --jobs", open(t, pgURL), true, 2, true},
	} {
		clear(inTask)
		cfg := runner.Config{Threads: 4, Jobs: 2, JobsDefault: c.byDefault, Events: 40, MaxTries: 1, Percentiles: []float64{50}}
		out := runner.Run(context.Background(), cfg, c.tg, load, nil, quiet)
		if out.Err != nil || out.Loops != c.loops {
			t.Fatalf("%s: %v, %d loops; want %d", c.name, out.Err, out.Loops, c.loops)
		}
		for id := 0; id < 4; id++ {
			if inTask[id] != c.wantInATask {
				t.Fatalf("%s: worker %d in a loop's task: %v, want %v", c.name, id, inTask[id], c.wantInATask)
			}
		}
	}
}

type workerFunc func(ctx context.Context) error

func (f workerFunc) Event(ctx context.Context, retry bool) (metrics.Op, error) { return 0, f(ctx) }
func (f workerFunc) Close() error                                              { return nil }

// TestFollowMovesEachWorkerToItsBackendsCPU: with Follow, a worker whose
// PostgreSQL backend runs on another loop's CPU moves to that loop. Each
// worker pins its backend to the CPU of a loop other than its own (which
// needs the right to set the backend's affinity: root or the server's
// user), so every worker must move once, and ends on its backend's CPU.
func TestFollowMovesEachWorkerToItsBackendsCPU(t *testing.T) {
	raw := os.Getenv("DBMARK_TEST_POSTGRES")
	if raw == "" {
		t.Skip("DBMARK_TEST_POSTGRES not set (make test starts the servers)")
	}
	twoCPUs(t)
	const threads = 4
	var (
		mu       sync.Mutex
		loopCPU  = map[int]int{} // worker -> the CPU of the loop it ran its last event on
		pinnedTo = map[int]int{} // worker -> the CPU its backend was pinned to
		pinErr   error
	)
	load := &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, id int, conn target.Conn, h *metrics.Handle) (workload.Worker, error) {
			return workerFunc(func(ctx context.Context) error {
				var set unix.CPUSet
				if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() != 1 {
					return fmt.Errorf("the loop's thread may use %d CPUs (%v), want one", set.Count(), err)
				}
				here := -1
				for c := 0; c < 1024; c++ {
					if set.IsSet(c) {
						here = c
						break
					}
				}
				// Not held across the statement: the loop's other tasks
				// run while this one waits.
				mu.Lock()
				loopCPU[id] = here
				if _, done := pinnedTo[id]; !done {
					// Another loop's CPU, once a worker has reported one.
					for _, c := range loopCPU {
						if c != here {
							var one unix.CPUSet
							one.Set(c)
							if err := unix.SchedSetaffinity(conn.(target.ServerProcess).ServerPID(), &one); err != nil {
								pinErr = err
							} else {
								pinnedTo[id] = c
							}
							break
						}
					}
				}
				mu.Unlock()
				return conn.Exec(ctx, "SELECT 1")
			}), nil
		},
	}
	cfg := runner.Config{Threads: threads, Jobs: 2, Affinity: runner.AffinityFollow, Follow: true, Duration: 1500 * time.Millisecond, MaxTries: 1, Percentiles: []float64{50}}
	out := runner.Run(context.Background(), cfg, open(t, raw), load, nil, quiet)
	if pinErr != nil {
		t.Skipf("cannot set a backend's CPU affinity (run as root or as the server's user): %v", pinErr)
	}
	if out.Err != nil || !out.Following {
		t.Fatalf("run: %v; following: %v", out.Err, out.Following)
	}
	for id := range threads {
		to, ok := pinnedTo[id]
		if !ok || loopCPU[id] != to {
			t.Errorf("worker %d: backend pinned to CPU %d (%v), last event on the loop on CPU %d; want that CPU", id, to, ok, loopCPU[id])
		}
	}
	if out.Moves < threads {
		t.Errorf("%d moves, want at least one per worker (%d)", out.Moves, threads)
	}
}

// twoCPUs returns the CPUs the test may use, and skips it unless there
// are two or more for loops to be pinned to.
func twoCPUs(t *testing.T) unix.CPUSet {
	t.Helper()
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	if all.Count() < 2 {
		t.Skip("one CPU: no two loops to pin")
	}
	return all
}

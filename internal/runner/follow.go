package runner

import (
	"bytes"
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbmark/dbmark/internal/mux"
	"github.com/dbmark/dbmark/internal/target"
)

// follower moves each worker to the loop pinned to the CPU its server
// process last ran on (--affinity follow). A pinned loop's answers from a
// backend on another CPU each cost a cross-CPU wake-up, and which CPU a
// backend settles on is decided by the kernel in a run's first moments:
// pgbench's unpinned threads and dbmark's pinned loops both had runs with
// and without such wake-ups, 20% apart in rate (bench/README.md). A
// worker that follows its backend keeps their wake-ups on one CPU.
type follower struct {
	byCPU map[int]*mux.Loop
	// idle ends when no worker is left to arrive: the run stopped, or
	// every worker has finished. Tasks waiting for a worker wait on it.
	idle    context.Context
	endIdle context.CancelFunc
	live    atomic.Int64
	moves   atomic.Int64
}

// followEvery is how often a worker looks where its server process ran,
// and followAfter how many looks in a row must find it on another loop's
// CPU before the worker moves: a backend woken once elsewhere is not
// followed.
const (
	followEvery = 50 * time.Millisecond
	followAfter = 2
)

// newFollower returns a follower for workers workers on loops, or nil
// unless they are pinned (mux.Loop.Pin) to two CPUs or more.
func newFollower(stop context.Context, loops []*mux.Loop, workers int) *follower {
	f := &follower{byCPU: map[int]*mux.Loop{}}
	for _, l := range loops {
		if cpu, ok := l.CPU(); ok {
			if _, taken := f.byCPU[cpu]; !taken {
				f.byCPU[cpu] = l
			}
		}
	}
	if len(f.byCPU) < 2 {
		return nil
	}
	f.idle, f.endIdle = context.WithCancel(stop)
	f.live.Store(int64(workers))
	return f
}

// finished counts a worker that will not run again.
func (f *follower) finished() {
	if f != nil && f.live.Add(-1) == 0 {
		f.endIdle()
	}
}

// destination returns the loop wk should move to, or nil to stay, and
// says when to look again.
func (f *follower) destination(ctx context.Context, wk *worker) *mux.Loop {
	m := &wk.moves
	m.next = wk.last.Add(followEvery)
	cpu, ok := m.serverCPU(wk.conn)
	if !ok {
		m.next = wk.last.Add(time.Hour) // nothing to follow on this connection
		return nil
	}
	to := f.byCPU[cpu]
	t := mux.From(ctx)
	if to == nil || t == nil || to == t.Loop() {
		m.strikes = 0
		return nil
	}
	if m.strikes++; m.strikes < followAfter {
		return nil
	}
	m.strikes = 0
	f.moves.Add(1)
	return to
}

// moveState is a worker's view of its server process.
type moveState struct {
	next    time.Time // when to look next
	strikes int       // looks in a row that found it elsewhere
	pid     int       // whose stat is open
	stat    int       // /proc/pid/stat
	open    bool      // stat is open
	buf     [1024]byte
}

// serverCPU returns the CPU the connection's server process last ran on.
func (m *moveState) serverCPU(c target.Conn) (int, bool) {
	sp, ok := c.(target.ServerProcess)
	if !ok {
		return 0, false
	}
	pid := sp.ServerPID()
	if pid <= 0 {
		return 0, false
	}
	if pid != m.pid {
		m.close()
		fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, false // not on this machine, or gone
		}
		m.pid, m.stat, m.open = pid, fd, true
	}
	n, err := unix.Pread(m.stat, m.buf[:], 0)
	if err != nil {
		return 0, false
	}
	return statCPU(m.buf[:n])
}

func (m *moveState) close() {
	if m.open {
		_ = unix.Close(m.stat)
	}
	m.pid, m.stat, m.open = 0, 0, false
}

// statCPU reads the processor field (the 39th) of a /proc/pid/stat line.
// The command name, second, is in parentheses and may hold spaces and
// parentheses itself, so fields are counted from the last ')'. It
// allocates nothing: every worker reads it 20 times a second.
func statCPU(line []byte) (int, bool) {
	i := bytes.LastIndexByte(line, ')')
	if i < 0 {
		return 0, false
	}
	rest := line[i+1:]
	for field := 2; ; field++ { // the ')' ends the second
		rest = bytes.TrimLeft(rest, " ")
		end := bytes.IndexAny(rest, " \n")
		if end < 0 {
			end = len(rest)
		}
		if end == 0 {
			return 0, false
		}
		if field+1 == 39 {
			cpu, err := strconv.Atoi(string(rest[:end]))
			return cpu, err == nil
		}
		rest = rest[end:]
	}
}

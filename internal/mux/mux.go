// Package mux runs many tasks on one locked OS thread. Each task is a
// coroutine; when it must wait for its socket or for a moment, it hands
// the thread back to the loop, which waits for all of them in one ppoll()
// and resumes the tasks that can go on, in order.
//
// This is how a pgbench thread serves its clients. Goroutines waiting in
// Go's network poller cost more: one thread waits in epoll_wait for every
// connection, runs one goroutine and wakes a second thread through a
// futex for the next, and the scheduler's monitor takes processors back
// from threads in system calls. On a 2-core machine that left 3 to 10% of
// the CPU idle while the server waited for the client (bench/README.md).
package mux

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Loop is one thread's tasks. Add them, then Run.
type Loop struct {
	tasks   []*Task
	pfds    []unix.PollFd
	waiting []waiter // the wait behind each pfds entry after the first
	waker   *waker   // other goroutines wake the loop through it
	ctx     context.Context
	live    int
	base    time.Time            // the loop's clock counts from here
	running atomic.Pointer[Task] // the task on the thread now, if any
}

// waiter is one suspended wait; a task resumed for another reason and
// waiting again has a new generation, and the old entry is stale.
type waiter struct {
	t   *Task
	gen uint64
}

// Task is one coroutine of a loop. Its methods may be called only by the
// task itself, while it runs.
type Task struct {
	l     *Loop
	fn    func(context.Context)
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	ctx   context.Context // the context the task's function was given

	// What the task waits for while suspended.
	fd     int   // -1: no socket
	events int16 // unix.POLLIN or unix.POLLOUT
	until  int64 // Loop.now to wake at; 0: no time limit
	wctx   context.Context
	woke   wakeReason
	gen    uint64 // counts waits
}

type wakeReason uint8

const (
	wokeReady wakeReason = iota
	wokeTime
	wokeDone
)

// ErrClosed is returned by a wait whose loop has ended.
var ErrClosed = errors.New("mux: loop ended")

// ErrNotInTask is returned by a wait called from outside its task's own
// goroutine (a driver's helper goroutine reading the connection), which
// must not suspend the task.
var ErrNotInTask = errors.New("mux: wait from outside the task")

type taskKey struct{}

// From returns the task running the code that holds ctx, or nil when
// that code runs on an ordinary goroutine.
func From(ctx context.Context) *Task {
	t, _ := ctx.Value(taskKey{}).(*Task)
	return t
}

// Add adds a task that will run fn with Run's context, to which the task
// is attached (From finds it).
func (l *Loop) Add(fn func(ctx context.Context)) {
	l.tasks = append(l.tasks, &Task{l: l, fn: fn, fd: -1})
}

// Run runs the tasks on the calling goroutine, locked to its thread,
// until every task has returned. When ctx ends, every wait returns ctx's
// error; the tasks are expected to return then.
func (l *Loop) Run(ctx context.Context) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("creating the loop's eventfd: %w", err)
	}
	l.waker, l.ctx, l.base = &waker{fd: efd}, ctx, time.Now()
	defer l.waker.close()
	stopWake := context.AfterFunc(ctx, l.waker.wake)
	defer stopWake()

	for _, t := range l.tasks {
		t.ctx = context.WithValue(ctx, taskKey{}, t)
		t.next, t.stop = iter.Pull(t.body)
		l.live++
	}
	defer func() {
		for _, t := range l.tasks {
			t.stop()
		}
	}()
	for _, t := range l.tasks {
		l.resume(t, wokeReady)
	}
	var drain [8]byte
	for l.live > 0 {
		timeout := l.collect()
		if err := l.poll(timeout); err != nil {
			return err
		}
		if l.pfds[0].Revents != 0 {
			_, _ = unix.Read(efd, drain[:])
			l.wakeEnded()
		}
		now := int64(-1)
		for i, w := range l.waiting {
			t := w.t
			if t.gen != w.gen || (t.fd < 0 && t.until == 0) {
				continue // woken above
			}
			switch {
			case l.pfds[i+1].Revents != 0:
				l.resume(t, wokeReady)
			case t.until != 0:
				if now < 0 {
					now = l.now()
				}
				if now >= t.until {
					l.resume(t, wokeTime)
				}
			}
		}
	}
	return nil
}

// body is the coroutine: the task's function on its context.
func (t *Task) body(yield func(struct{}) bool) {
	t.yield = yield
	t.fn(t.ctx)
}

// resume runs t until it waits again or returns.
func (l *Loop) resume(t *Task, why wakeReason) {
	t.woke = why
	l.running.Store(t)
	_, ok := t.next()
	l.running.Store(nil)
	if !ok {
		t.fd, t.until = -1, 0
		l.live--
	}
}

// collect lists the waiting tasks' sockets after the eventfd and returns
// the time until the earliest timed wait (-1: none).
func (l *Loop) collect() int64 {
	l.pfds = append(l.pfds[:0], unix.PollFd{Fd: int32(l.waker.fd), Events: unix.POLLIN})
	l.waiting = l.waiting[:0]
	earliest := int64(0)
	for _, t := range l.tasks {
		if t.fd < 0 && t.until == 0 {
			continue
		}
		l.waiting = append(l.waiting, waiter{t, t.gen})
		pfd := unix.PollFd{Fd: -1}
		if t.fd >= 0 {
			pfd = unix.PollFd{Fd: int32(t.fd), Events: t.events}
		}
		l.pfds = append(l.pfds, pfd)
		if t.until != 0 && (earliest == 0 || t.until < earliest) {
			earliest = t.until
		}
	}
	if earliest == 0 {
		return -1
	}
	return max(earliest-l.now(), 0)
}

// poll waits in ppoll. The system call is made raw: the thread keeps its
// processor (the runner leaves a spare one for everything else), so the
// scheduler has nothing to hand over when it returns. A signal (the
// collector's preemption included) ends it early with EINTR, and the
// loop goes round again.
func (l *Loop) poll(timeout int64) error {
	var ts *unix.Timespec
	var t unix.Timespec
	if timeout >= 0 {
		t = unix.NsecToTimespec(timeout)
		ts = &t
	}
	_, _, errno := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&l.pfds[0])), uintptr(len(l.pfds)), uintptr(unsafe.Pointer(ts)), 0, 0, 0)
	if errno != 0 && errno != unix.EINTR {
		return fmt.Errorf("waiting for %d sockets: %w", len(l.pfds)-1, errno)
	}
	return nil
}

// wakeEnded resumes the tasks whose wait's context has ended.
func (l *Loop) wakeEnded() {
	for _, w := range l.waiting {
		t := w.t
		if t.gen == w.gen && (t.fd >= 0 || t.until != 0) && t.wctx != nil && t.wctx.Err() != nil {
			l.resume(t, wokeDone)
		}
	}
}

// waker is one Run's eventfd, written to make the loop look at its tasks'
// contexts. A context's AfterFunc may call wake after Run has returned (a
// stop that loses the race does not wait for it), and a write to a closed
// descriptor's number goes to whatever the process opened next: a server
// connection, which then reads a stray message. So wake and close take
// turns, and a closed waker stays closed even if its Loop runs again.
type waker struct {
	mu     sync.Mutex
	fd     int
	closed bool
}

// wake may be called by any goroutine at any time.
func (w *waker) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	one := [8]byte{1}
	_, _ = unix.Write(w.fd, one[:])
}

func (w *waker) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	_ = unix.Close(w.fd)
}

// WaitFD suspends the task until fd is readable (or writable, with
// write), or until ctx ends.
func (t *Task) WaitFD(ctx context.Context, fd int, write bool) error {
	ev := int16(unix.POLLIN)
	if write {
		ev = unix.POLLOUT
	}
	return t.wait(ctx, fd, ev, 0)
}

// Sleep suspends the task for d, or until ctx ends.
func (t *Task) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	return t.wait(ctx, -1, 0, t.l.now()+int64(d))
}

func (t *Task) wait(ctx context.Context, fd int, events int16, until int64) error {
	if t.l.running.Load() != t {
		return ErrNotInTask
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The loop's own context wakes it already; one derived from it needs
	// its own alarm, for this wait only.
	if ctx != t.ctx && ctx.Done() != t.l.ctx.Done() {
		stop := context.AfterFunc(ctx, t.l.waker.wake)
		defer stop()
	}
	t.fd, t.events, t.until, t.wctx = fd, events, until, ctx
	t.gen++
	ok := t.yield(struct{}{})
	t.fd, t.until, t.wctx = -1, 0, nil
	switch {
	case !ok:
		return ErrClosed
	case t.woke == wokeDone:
		return ctx.Err()
	}
	return nil
}

// Sleep waits for d or until ctx ends, in ctx's task when there is one.
func Sleep(ctx context.Context, d time.Duration) error {
	if t := From(ctx); t != nil {
		return t.Sleep(ctx, d)
	}
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// now is the loop's monotonic clock in ns, never 0 (0 means no time limit).
func (l *Loop) now() int64 { return int64(time.Since(l.base)) + 1 }

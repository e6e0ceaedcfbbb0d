// Package mux runs many tasks on one locked OS thread. Each task is a
// coroutine; when it must wait for its socket or for a moment, it hands
// the thread back to the loop, which waits for all of them in one epoll
// set and resumes the tasks that can go on.
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
	set     *epollSet // the sockets the tasks wait on, for one Run
	events  []unix.EpollEvent
	waker   *waker // other goroutines wake the loop through it
	ctx     context.Context
	live    int
	timed   int                  // tasks in a wait with a time limit
	base    time.Time            // the loop's clock counts from here
	running atomic.Pointer[Task] // the task on the thread now, if any
	cpu     int                  // the CPU the thread is pinned to, when pinned
	pinned  bool

	// Values sent to the loop from other goroutines (Send), until a task
	// takes them (Receive). The waker is set here too, under mailMu, so
	// that a Send before or after Run is safe.
	mailMu    sync.Mutex
	mail      []any
	mailWaker *waker
}

// epollSet is one Run's epoll instance. Sockets stay in it from their
// first wait until they are closed, so a wait costs no system call of its
// own, and the kernel hands back only the sockets that have something
// (a ppoll over every task's socket registered and removed each of them
// in the kernel on every wait).
//
// Sockets are edge-triggered: the kernel reports each arrival once. A task
// waits for a socket only after finding nothing to read on it (or right
// after sending, before the answer can be there), so an arrival it waits
// for is always reported after it starts waiting; one reported while the
// task waited for something else is remembered in the task (pending), and
// its next wait returns at once.
type epollSet struct{ fd int }

// Watch is a socket's membership in a loop's epoll set. The connection
// owning the socket keeps one for as long as the descriptor is open: the
// kernel drops a closed descriptor from the set by itself, and a later
// connection given the same number has a Watch of its own, which adds it
// again.
type Watch struct {
	fd   int
	set  *epollSet
	task int32 // the index of the task the set reports the socket to
	out  bool  // the set reports the socket's write space too
}

// NewWatch returns a Watch for fd, in no set yet.
func NewWatch(fd int) Watch { return Watch{fd: fd, task: -1} }

// Fd returns the watched descriptor.
func (w *Watch) Fd() int { return w.fd }

// Task is one coroutine of a loop. Its methods may be called only by the
// task itself, while it runs.
type Task struct {
	l     *Loop
	idx   int32 // in l.tasks
	fn    func(context.Context)
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	ctx   context.Context // the context the task's function was given

	// What the task waits for while suspended.
	fd      int    // -1: no socket
	events  uint32 // unix.EPOLLIN or unix.EPOLLOUT
	until   int64  // Loop.now to wake at; 0: no time limit
	wctx    context.Context
	woke    wakeReason
	pending bool // a socket of the task's was reported while it waited for something else

	receiving bool // waiting in Receive
	got       any  // what Receive hands back
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

// Context returns the context the task's function was given: it lives as
// long as the task, unlike one made for a single request.
func (t *Task) Context() context.Context { return t.ctx }

// Add adds a task that will run fn with Run's context, to which the task
// is attached (From finds it).
func (l *Loop) Add(fn func(ctx context.Context)) {
	l.tasks = append(l.tasks, &Task{l: l, idx: int32(len(l.tasks)), fn: fn, fd: -1})
}

// Loop returns the loop the task runs in.
func (t *Task) Loop() *Loop { return t.l }

// CPU returns the CPU the loop's thread is pinned to, if it is.
func (l *Loop) CPU() (int, bool) { return l.cpu, l.pinned }

// Send hands v to one of the loop's tasks waiting in Receive, the first to
// wait, and wakes the loop. Any goroutine may call it, at any time: what
// no task took when Run returned is Undelivered.
func (l *Loop) Send(v any) {
	l.mailMu.Lock()
	defer l.mailMu.Unlock()
	l.mail = append(l.mail, v)
	if l.mailWaker != nil {
		l.mailWaker.wake()
	}
}

// Undelivered returns, and forgets, what was sent and not received. Call
// it after Run has returned, when nothing sends any more.
func (l *Loop) Undelivered() []any {
	l.mailMu.Lock()
	defer l.mailMu.Unlock()
	out := l.mail
	l.mail = nil
	return out
}

// Receive suspends the task until the loop hands it a value sent to the
// loop (Send), or until ctx ends.
func (t *Task) Receive(ctx context.Context) (any, error) {
	if err := t.mayWait(ctx); err != nil {
		return nil, err
	}
	if v, ok := t.l.takeMail(); ok {
		return v, nil
	}
	t.receiving = true
	err := t.wait(ctx, -1, 0, 0)
	t.receiving = false
	v := t.got
	t.got = nil
	if v != nil {
		return v, nil // handed over as the wait ended: take it, or it is lost
	}
	if err == nil {
		err = ctx.Err()
	}
	return nil, err
}

// takeMail takes the oldest value sent, if there is one.
func (l *Loop) takeMail() (any, bool) {
	l.mailMu.Lock()
	defer l.mailMu.Unlock()
	if len(l.mail) == 0 {
		return nil, false
	}
	v := l.mail[0]
	l.mail = l.mail[1:]
	return v, true
}

// deliver hands what was sent to the tasks waiting in Receive.
func (l *Loop) deliver() {
	for _, t := range l.tasks {
		if !t.receiving {
			continue
		}
		v, ok := l.takeMail()
		if !ok {
			return
		}
		t.got = v
		l.resume(t, wokeReady)
	}
}

// Pin keeps the loop's thread on one CPU while it runs. Left to the
// kernel, two loops on a 2-CPU machine shared one CPU for stretches of a
// second or more, their servers' processes on the other, and every
// answer then crossed CPUs: a rescheduling interrupt each, and up to a
// fifth fewer transactions (bench/README.md).
func (l *Loop) Pin(cpu int) { l.cpu, l.pinned = cpu, true }

// pin moves the calling (locked) thread to l's CPU and returns what puts
// its affinity back: the thread goes back to the runtime's pool after Run.
func (l *Loop) pin() (func(), error) {
	if !l.pinned {
		return func() {}, nil
	}
	var was, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		return nil, fmt.Errorf("reading the loop thread's CPU affinity: %w", err)
	}
	one.Set(l.cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		return nil, fmt.Errorf("pinning the loop thread to CPU %d: %w", l.cpu, err)
	}
	return func() { _ = unix.SchedSetaffinity(0, &was) }, nil
}

// wakerIdx marks the eventfd's events.
const wakerIdx = -1

// Run runs the tasks on the calling goroutine, locked to its thread,
// until every task has returned. When ctx ends, every wait returns ctx's
// error; the tasks are expected to return then.
func (l *Loop) Run(ctx context.Context) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	unpin, err := l.pin()
	if err != nil {
		return err
	}
	defer unpin()
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("creating the loop's epoll set: %w", err)
	}
	defer unix.Close(ep)
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("creating the loop's eventfd: %w", err)
	}
	l.waker, l.ctx, l.base, l.set = &waker{fd: efd}, ctx, time.Now(), &epollSet{fd: ep}
	defer l.waker.close()
	l.mailMu.Lock()
	l.mailWaker = l.waker
	l.mailMu.Unlock()
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, efd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: wakerIdx}); err != nil {
		return fmt.Errorf("adding the loop's eventfd to its epoll set: %w", err)
	}
	stopWake := context.AfterFunc(ctx, l.waker.wake)
	defer stopWake()
	if len(l.events) < len(l.tasks)+1 {
		l.events = make([]unix.EpollEvent, len(l.tasks)+1)
	}

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
		n, err := l.wait(l.timeout())
		if err != nil {
			return err
		}
		for _, ev := range l.events[:n] {
			if ev.Fd == wakerIdx {
				_, _ = unix.Read(efd, drain[:])
				l.wakeEnded()
				l.deliver()
				continue
			}
			t := l.tasks[ev.Fd]
			switch {
			case t.fd == int(ev.Pad) && ev.Events&(t.events|unix.EPOLLHUP|unix.EPOLLERR) != 0:
				l.resume(t, wokeReady)
			default:
				// Not what the task waits for now: remember it for its
				// next wait. The report is not repeated.
				t.pending = true
			}
		}
		if l.timed > 0 {
			now := l.now()
			for _, t := range l.tasks {
				if t.until != 0 && now >= t.until {
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

// timeout returns the time until the earliest timed wait (-1: none).
func (l *Loop) timeout() int64 {
	if l.timed == 0 {
		return -1
	}
	earliest := int64(0)
	for _, t := range l.tasks {
		if t.until != 0 && (earliest == 0 || t.until < earliest) {
			earliest = t.until
		}
	}
	if earliest == 0 {
		return -1
	}
	return max(earliest-l.now(), 0)
}

// wait waits in epoll_pwait2, which takes its timeout in nanoseconds
// (epoll_wait's milliseconds would end sleeps up to one late). The system
// call is made raw: the thread keeps its processor (the runner leaves a
// spare one for everything else), so the scheduler has nothing to hand
// over when it returns. A signal (the collector's preemption included)
// ends it early with EINTR, and the loop goes round again.
func (l *Loop) wait(timeout int64) (int, error) {
	var ts *unix.Timespec
	var t unix.Timespec
	if timeout >= 0 {
		t = unix.NsecToTimespec(timeout)
		ts = &t
	}
	n, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(l.set.fd), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), uintptr(unsafe.Pointer(ts)), 0, 0)
	switch errno {
	case 0:
		return int(n), nil
	case unix.EINTR:
		return 0, nil
	}
	return 0, fmt.Errorf("waiting for %d tasks' sockets: %w", len(l.tasks), errno)
}

// wakeEnded resumes the tasks whose wait's context has ended.
func (l *Loop) wakeEnded() {
	for _, t := range l.tasks {
		if (t.fd >= 0 || t.until != 0 || t.receiving) && t.wctx != nil && t.wctx.Err() != nil {
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

// Wait suspends the task until w's socket is readable (or writable, with
// write), or until ctx ends. Call it only after a read (or write) found
// nothing to do, or right after sending what the awaited answer answers:
// the loop is told of each arrival once (epollSet). It may return early;
// the caller tries again.
func (t *Task) Wait(ctx context.Context, w *Watch, write bool) error {
	if err := t.mayWait(ctx); err != nil {
		return err
	}
	if t.pending {
		t.pending = false
		return nil
	}
	set := t.l.set
	ev := uint32(unix.EPOLLIN)
	if write {
		ev = unix.EPOLLOUT
	}
	// Write space is watched only while a write waits for it: on a unix
	// socket it is reported each time the server reads a statement.
	if w.set != set || w.task != t.idx || w.out != write {
		if err := w.register(set, t.idx, write); err != nil {
			return err
		}
	}
	err := t.wait(ctx, w.fd, ev, 0)
	if write {
		if rerr := w.register(set, t.idx, false); err == nil {
			err = rerr
		}
	}
	return err
}

// register adds w's socket to set for the task at idx, or changes what it
// is watched for.
func (w *Watch) register(set *epollSet, idx int32, out bool) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: idx, Pad: int32(w.fd)}
	if out {
		ev.Events |= unix.EPOLLOUT
	}
	op := unix.EPOLL_CTL_MOD
	if w.set != set {
		op = unix.EPOLL_CTL_ADD
		if w.set != nil {
			// The connection moved to another loop (Loop.Send): the old
			// set would otherwise go on waking its loop for it.
			_ = unix.EpollCtl(w.set.fd, unix.EPOLL_CTL_DEL, w.fd, nil)
		}
	}
	err := unix.EpollCtl(set.fd, op, w.fd, &ev)
	if err == unix.EEXIST {
		err = unix.EpollCtl(set.fd, unix.EPOLL_CTL_MOD, w.fd, &ev)
	}
	if err != nil {
		return fmt.Errorf("watching socket %d: %w", w.fd, err)
	}
	w.set, w.task, w.out = set, idx, out
	return nil
}

// Sleep suspends the task for d, or until ctx ends.
func (t *Task) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	if err := t.mayWait(ctx); err != nil {
		return err
	}
	t.l.timed++
	defer func() { t.l.timed-- }()
	return t.wait(ctx, -1, 0, t.l.now()+int64(d))
}

// mayWait says why the calling code may not suspend the task, if it may
// not: it runs on another goroutine, or ctx has ended.
func (t *Task) mayWait(ctx context.Context) error {
	if t.l.running.Load() != t {
		return ErrNotInTask
	}
	return ctx.Err()
}

// wait suspends the task, which mayWait has allowed, until the loop
// resumes it.
func (t *Task) wait(ctx context.Context, fd int, events uint32, until int64) error {
	// The loop's own context wakes it already; one derived from it needs
	// its own alarm, for this wait only.
	if ctx != t.ctx && ctx.Done() != t.l.ctx.Done() {
		stop := context.AfterFunc(ctx, t.l.waker.wake)
		defer stop()
	}
	t.fd, t.events, t.until, t.wctx = fd, events, until, ctx
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

package mux_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbmark/dbmark/internal/mux"
)

func socketPair(t *testing.T) (int, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

// readByte waits in the task until one byte can be read from w's socket.
func readByte(ctx context.Context, w *mux.Watch) (byte, error) {
	var b [1]byte
	for {
		n, err := unix.Read(w.Fd(), b[:])
		if n == 1 {
			return b[0], nil
		}
		if err != unix.EAGAIN {
			return 0, err
		}
		if err := mux.From(ctx).Wait(ctx, w, false); err != nil {
			return 0, err
		}
	}
}

// Two tasks of one loop play ping-pong over a socket pair: each waits for
// the other's byte, which only works if a wait hands the thread over. All
// of it runs on one OS thread.
func TestTasksShareOneThreadAndWaitForSockets(t *testing.T) {
	a, b := socketPair(t)
	var l mux.Loop
	const rounds = 1000
	var tids sync.Map
	var got [2]int
	play := func(me, fd int, serve bool) func(context.Context) {
		return func(ctx context.Context) {
			tids.Store(unix.Gettid(), true)
			if mux.From(ctx) == nil {
				t.Error("From finds no task in the task's context")
				return
			}
			if serve {
				if _, err := unix.Write(fd, []byte{0}); err != nil {
					t.Error(err)
					return
				}
			}
			w := mux.NewWatch(fd)
			for i := 0; i < rounds; i++ {
				v, err := readByte(ctx, &w)
				if err != nil {
					t.Error(err)
					return
				}
				got[me]++
				if serve && i == rounds-1 {
					return
				}
				if _, err := unix.Write(fd, []byte{v + 1}); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}
	l.Add(play(0, a, true))
	l.Add(play(1, b, false))
	if err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got[0] != rounds || got[1] != rounds {
		t.Fatalf("bytes received: %v, want %d each", got, rounds)
	}
	n := 0
	tids.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Fatalf("tasks ran on %d threads, want 1", n)
	}
}

// Sleeps end in time order and no earlier than asked, even when another
// task's socket wakes the loop meanwhile.
func TestSleepsEndOnTimeWhileSocketsAreBusy(t *testing.T) {
	a, b := socketPair(t)
	var l mux.Loop
	var mu sync.Mutex
	var order []time.Duration
	start := time.Now()
	for _, d := range []time.Duration{60 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond} {
		l.Add(func(ctx context.Context) {
			if err := mux.Sleep(ctx, d); err != nil {
				t.Error(err)
			}
			if el := time.Since(start); el < d {
				t.Errorf("a %v sleep ended after %v", d, el)
			}
			mu.Lock()
			order = append(order, d)
			mu.Unlock()
		})
	}
	// A busy neighbour: bytes arrive every millisecond for 80 ms.
	go func() {
		for i := 0; i < 80; i++ {
			time.Sleep(time.Millisecond)
			unix.Write(b, []byte{1})
		}
		unix.Write(b, []byte{0})
	}()
	l.Add(func(ctx context.Context) {
		w := mux.NewWatch(a)
		for {
			v, err := readByte(ctx, &w)
			if err != nil {
				t.Error(err)
				return
			}
			if v == 0 {
				return
			}
		}
	})
	if err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 60 * time.Millisecond}
	if len(order) != 3 || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] {
		t.Fatalf("sleeps ended in order %v, want %v", order, want)
	}
}

// When the loop's context ends, tasks waiting for silent sockets and long
// sleeps get its error at once; a wait on a derived context ends with it.
func TestWaitsEndWithTheirContext(t *testing.T) {
	a, _ := socketPair(t)
	c, _ := socketPair(t)
	ctx, cancel := context.WithCancel(context.Background())
	var l mux.Loop
	errs := make([]error, 3)
	wa, wc := mux.NewWatch(a), mux.NewWatch(c)
	l.Add(func(ctx context.Context) { _, errs[0] = readByte(ctx, &wa) })
	l.Add(func(ctx context.Context) { errs[1] = mux.Sleep(ctx, time.Hour) })
	var derived time.Duration
	l.Add(func(ctx context.Context) {
		dctx, dcancel := context.WithTimeout(ctx, 30*time.Millisecond)
		defer dcancel()
		s := time.Now()
		_, errs[2] = readByte(dctx, &wc)
		derived = time.Since(s)
	})
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	if err := l.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("the loop took %v to end after its context did", el)
	}
	if !errors.Is(errs[0], context.Canceled) || !errors.Is(errs[1], context.Canceled) {
		t.Fatalf("waits ended with %v and %v, want context.Canceled", errs[0], errs[1])
	}
	if !errors.Is(errs[2], context.DeadlineExceeded) || derived > 150*time.Millisecond {
		t.Fatalf("the derived context's wait ended with %v after %v, want its deadline after 30 ms", errs[2], derived)
	}
}

// Sleep outside a loop is an ordinary sleep.
func TestSleepWithoutALoop(t *testing.T) {
	start := time.Now()
	if err := mux.Sleep(context.Background(), 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Fatalf("slept %v", el)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := mux.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on an ended context: %v", err)
	}
}

// A wait called from another goroutine while the task is suspended (a
// driver's helper reading the task's connection) fails instead of
// suspending the task from the wrong goroutine.
func TestWaitFromOutsideTheTaskFails(t *testing.T) {
	a, b := socketPair(t)
	var l mux.Loop
	var outside error
	w := mux.NewWatch(a)
	l.Add(func(ctx context.Context) {
		task := mux.From(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(20 * time.Millisecond) // the task is waiting by then
			outside = task.Wait(ctx, &w, false)
			unix.Write(b, []byte{1})
		}()
		if _, err := readByte(ctx, &w); err != nil {
			t.Error(err)
		}
		<-done
	})
	if err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(outside, mux.ErrNotInTask) {
		t.Fatalf("a wait from another goroutine returned %v, want ErrNotInTask", outside)
	}
}

// A socket's arrival reported while its task slept is not lost: the
// loop hears of each arrival once, so a wait that follows without a read
// first must still end.
func TestArrivalDuringASleepEndsTheNextWait(t *testing.T) {
	a, b := socketPair(t)
	var l mux.Loop
	var took time.Duration
	var waitErr error
	l.Add(func(ctx context.Context) {
		w := mux.NewWatch(a)
		go func() { time.Sleep(5 * time.Millisecond); unix.Write(b, []byte{1}) }()
		if _, err := readByte(ctx, &w); err != nil { // waited: a is in the set now
			t.Error(err)
			return
		}
		go func() { time.Sleep(10 * time.Millisecond); unix.Write(b, []byte{2}) }()
		if err := mux.Sleep(ctx, 50*time.Millisecond); err != nil {
			t.Error(err)
			return
		}
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		s := time.Now()
		waitErr = mux.From(ctx).Wait(wctx, &w, false)
		took = time.Since(s)
	})
	if err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if waitErr != nil || took > time.Second {
		t.Fatalf("a wait for a byte that came during a sleep ended after %v with %v, want at once", took, waitErr)
	}
}

// A closed socket leaves the set with its descriptor; a new socket given
// the same number, with a Watch of its own, is watched again.
func TestAReusedDescriptorNumberIsWatchedAgain(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var l mux.Loop
	var got []byte
	l.Add(func(ctx context.Context) {
		a, b := fds[0], fds[1]
		for round := byte(1); round <= 3; round++ {
			w := mux.NewWatch(a)
			go func() { time.Sleep(5 * time.Millisecond); unix.Write(b, []byte{round}) }()
			v, err := readByte(ctx, &w)
			if err != nil {
				t.Error(err)
				return
			}
			got = append(got, v)
			unix.Close(a)
			unix.Close(b)
			p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Error(err)
				return
			}
			if p[0] != a {
				t.Errorf("the new socket has number %d, not the closed %d's", p[0], a)
			}
			a, b = p[0], p[1]
		}
		unix.Close(a)
		unix.Close(b)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if string(got) != "\x01\x02\x03" {
		t.Fatalf("read %v, want 1 2 3", got)
	}
}

// A write that fills the socket waits for the peer to read, and the same
// socket's reads are still reported after it.
func TestWriteWaitsForSpaceThenReadsStillWake(t *testing.T) {
	a, b := socketPair(t)
	var l mux.Loop
	const total = 4 << 20
	var sent int
	var last byte
	l.Add(func(ctx context.Context) {
		w := mux.NewWatch(a)
		buf := make([]byte, 64<<10)
		for sent < total {
			n, err := unix.Write(a, buf)
			if n > 0 {
				sent += n
			}
			if err == unix.EAGAIN {
				if err := mux.From(ctx).Wait(ctx, &w, true); err != nil {
					t.Error(err)
					return
				}
			} else if err != nil {
				t.Error(err)
				return
			}
		}
		v, err := readByte(ctx, &w)
		if err != nil {
			t.Error(err)
		}
		last = v
	})
	go func() {
		buf := make([]byte, 64<<10)
		got := 0
		for got < total {
			n, err := unix.Read(b, buf)
			if n > 0 {
				got += n
			}
			if err == unix.EAGAIN {
				time.Sleep(time.Millisecond)
			} else if err != nil {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
		unix.Write(b, []byte{7})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if sent < total || last != 7 {
		t.Fatalf("wrote %d of %d bytes, then read %d, want all and 7", sent, total, last)
	}
}

// A pinned loop's tasks run on its CPU alone, and the thread gets its
// old affinity back when Run returns (the runtime reuses the thread).
func TestPinnedLoopRunsOnItsCPUAndGivesItBack(t *testing.T) {
	runtime.LockOSThread() // Run's own lock nests: this thread is Run's
	defer runtime.UnlockOSThread()
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	cpu := -1
	for c := 0; c < 1024; c++ {
		if before.IsSet(c) {
			cpu = c // the last CPU allowed: not the default CPU 0 where there are two
		}
	}
	var l mux.Loop
	l.Pin(cpu)
	var inside unix.CPUSet
	var tid int
	l.Add(func(context.Context) {
		tid = unix.Gettid()
		if err := unix.SchedGetaffinity(0, &inside); err != nil {
			t.Error(err)
		}
	})
	if err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tid != unix.Gettid() {
		t.Fatalf("the task ran on thread %d, not the locked caller's %d", tid, unix.Gettid())
	}
	if inside.Count() != 1 || !inside.IsSet(cpu) {
		t.Errorf("inside the loop the thread may run on %d CPUs (CPU %d: %v), want CPU %d alone", inside.Count(), cpu, inside.IsSet(cpu), cpu)
	}
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("after Run the thread may run on %d CPUs, want the %d it had", after.Count(), before.Count())
	}
}

// Pinning to a CPU the process may not use fails the run with a clear
// error instead of running elsewhere.
func TestPinToAForbiddenCPUFails(t *testing.T) {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Fatal(err)
	}
	cpu := 1023
	if allowed.IsSet(cpu) {
		t.Skip("every CPU is allowed")
	}
	var l mux.Loop
	l.Pin(cpu)
	l.Add(func(context.Context) { t.Error("the task ran") })
	err := l.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "pinning the loop thread to CPU 1023") {
		t.Fatalf("Run = %v, want an error about pinning to CPU 1023", err)
	}
}

// Values sent to a loop go to its tasks waiting in Receive, oldest first,
// whether sent before the loop runs or from another loop's thread while
// it runs; what no task took is Undelivered once the loop has ended.
func TestSendHandsValuesToWaitingTasksInOrder(t *testing.T) {
	var from, to mux.Loop
	to.Send(0) // before Run
	var mu sync.Mutex
	var got []int
	for range 2 {
		to.Add(func(ctx context.Context) {
			v, err := mux.From(ctx).Receive(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got = append(got, v.(int))
			mu.Unlock()
		})
	}
	from.Add(func(ctx context.Context) {
		for i := 1; i <= 3; i++ {
			to.Send(i)
		}
	})
	mux.RunTogether(t, &from, &to)
	slices.Sort(got)
	left := to.Undelivered()
	if !slices.Equal(got, []int{0, 1}) || len(left) != 2 || left[0] != 2 || left[1] != 3 {
		t.Fatalf("received %v and left %v; want 0 and 1 received, 2 and 3 left", got, left)
	}
	if again := to.Undelivered(); len(again) != 0 {
		t.Fatalf("Undelivered a second time returned %v, want nothing", again)
	}
}

// A Receive with nothing sent ends with its context, and its loop with it.
func TestReceiveEndsWithItsContext(t *testing.T) {
	var l mux.Loop
	var err error
	l.Add(func(ctx context.Context) {
		wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_, err = mux.From(ctx).Receive(wctx)
	})
	done := make(chan error, 1)
	go func() { done <- l.Run(context.Background()) }()
	select {
	case rerr := <-done:
		if rerr != nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Run: %v; Receive: %v, want the deadline", rerr, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the Receive did not end with its context")
	}
}

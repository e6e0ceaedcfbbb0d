//go:build linux

// Command timerlag measures how late a goroutine wakes for a scheduled
// start, and what the waiting costs in CPU, for each way Go can wait: the
// runner's open loop (bench/openloop.sh) chooses its way from these figures.
//
//	timerlag -way timer|sleep|spin|nanosleep|timerfd -rate 2000 -n 10000 [-clients 1]
//
// Each client waits for Poisson arrivals at its share of the rate, as the
// runner's schedule does, and does no work: the lag is the wake-up's alone.
// It prints one line: way, rate, clients, starts, the starts that had to
// wait (not already late), lag mean/p50/p99/max in µs, and the process's
// user+system CPU in µs per start and per wait.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	way := flag.String("way", "timer", "timer (a reused time.Timer), sleep (time.Sleep), spin (a timer to 1.1 ms before, then runtime.Gosched until due), nanosleep (a timer to 1.1 ms before, then clock_nanosleep), timerfd (a timerfd read through the netpoller)")
	rate := flag.Float64("rate", 2000, "waits per second, over all clients")
	n := flag.Int("n", 10000, "waits, over all clients")
	clients := flag.Int("clients", 1, "goroutines waiting")
	flag.DurationVar(&early, "early", 0, "timerfd: wake this long before the due time, and spin (runtime.Gosched) until it")
	flag.DurationVar(&spinBelow, "spin-below", 0, "timerfd: spin (runtime.Gosched) through a wait shorter than this instead of parking")
	flag.Parse()
	waiters := map[string]func() waiter{"timer": newTimer, "sleep": func() waiter { return sleeper{} }, "spin": newSpin, "nanosleep": newNanosleep, "timerfd": newTimerfd}
	mk, ok := waiters[*way]
	if !ok {
		fmt.Fprintf(os.Stderr, "timerlag: -way %q: not one of timer, sleep, spin, nanosleep, timerfd\n", *way)
		os.Exit(2)
	}
	per := *n / *clients
	lags := make([][]time.Duration, *clients)
	waited := make([]int, *clients) // the waits that were not already late
	var wg sync.WaitGroup
	cpu0 := cpuTime()
	start := time.Now().Add(10 * time.Millisecond)
	for c := range *clients {
		wg.Go(func() {
			w := mk()
			rng := rand.New(rand.NewPCG(1, uint64(c)))
			mean := float64(*clients) / *rate * 1e9
			due := start
			out := make([]time.Duration, 0, per)
			for range per {
				due = due.Add(time.Duration(rng.ExpFloat64() * mean))
				if d := time.Until(due); d > 0 {
					w.wait(due, d)
					waited[c]++
				}
				out = append(out, time.Since(due))
			}
			lags[c] = out
		})
	}
	wg.Wait()
	cpu := cpuTime() - cpu0
	var all []time.Duration
	var sum time.Duration
	nwaited := 0
	for c, l := range lags {
		nwaited += waited[c]
		all = append(all, l...)
		for _, d := range l {
			sum += d
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	q := func(p float64) time.Duration { return all[int(p*float64(len(all)-1))] }
	fmt.Printf("%s\t%g\t%d\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\n", *way, *rate, *clients, len(all), nwaited,
		us(sum/time.Duration(len(all))), us(q(0.5)), us(q(0.99)), us(all[len(all)-1]), us(cpu)/float64(len(all)), us(cpu)/float64(max(nwaited, 1)))
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A waiter returns at due or after; d is the time until due when called.
type waiter interface {
	wait(due time.Time, d time.Duration)
}

type timerWaiter struct{ t *time.Timer }

func newTimer() waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &timerWaiter{t}
}

func (w *timerWaiter) wait(_ time.Time, d time.Duration) {
	w.t.Reset(d)
	<-w.t.C
}

type sleeper struct{}

func (sleeper) wait(_ time.Time, d time.Duration) { time.Sleep(d) }

// coarse is how long before its due time a waiter that finishes the wait
// another way stops the Go timer: the netpoller rounds a timer's wait to
// whole milliseconds (epoll_wait), so it may wake up to 1 ms late.
const coarse = 1100 * time.Microsecond

type spinWaiter struct{ t *timerWaiter }

func newSpin() waiter { return &spinWaiter{newTimer().(*timerWaiter)} }

func (w *spinWaiter) wait(due time.Time, d time.Duration) {
	if d > coarse {
		w.t.wait(due, d-coarse)
	}
	for time.Now().Before(due) {
		runtime.Gosched()
	}
}

type nanosleepWaiter struct{ t *timerWaiter }

func newNanosleep() waiter { return &nanosleepWaiter{newTimer().(*timerWaiter)} }

func (w *nanosleepWaiter) wait(due time.Time, d time.Duration) {
	if d > coarse {
		w.t.wait(due, d-coarse)
	}
	if d = time.Until(due); d > 0 {
		ts := unix.NsecToTimespec(int64(d))
		_ = unix.ClockNanosleep(unix.CLOCK_MONOTONIC, 0, &ts, nil)
	}
}

// early is how long before its due time the timerfd waiter wakes
// (-early); spinBelow, the wait it spins through rather than park for.
var early, spinBelow time.Duration

type timerfdWaiter struct {
	f   *os.File // the netpoller's handle on fd
	fd  int
	buf [8]byte
}

func newTimerfd() waiter {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		panic(err)
	}
	return &timerfdWaiter{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd}
}

func (w *timerfdWaiter) wait(due time.Time, _ time.Duration) {
	if d := time.Until(due) - early; d > 0 && d >= spinBelow {
		spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
		if err := unix.TimerfdSettime(w.fd, 0, &spec, nil); err != nil {
			panic(err)
		}
		if _, err := w.f.Read(w.buf[:]); err != nil {
			panic(err)
		}
	}
	for (early > 0 || spinBelow > 0) && time.Now().Before(due) {
		runtime.Gosched()
	}
}

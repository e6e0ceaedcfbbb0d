package runner

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// timerfdAlarm waits on a timerfd of its own, read through the Go
// netpoller: the kernel's timer (a high-resolution one, without slack)
// makes the descriptor readable at its time, which wakes a runtime asleep
// in epoll_wait at once. The waiting goroutine parks as on a socket: no
// thread sleeps for it; it spins only through the wake-up's own length at
// the end (wakeLead). A wait costs two system calls more than a Go
// timer's (arming it, and the read that finds it expired).
type timerfdAlarm struct {
	f       *os.File // the netpoller's handle on fd; it owns fd
	fd      int
	buf     [8]byte       // the expiration count a read returns
	unwatch func() bool   // stops the watch on the stop context
	lead    time.Duration // how early the timer is set, the rest spun (wakeLead)
	timer   *timerAlarm   // once the timerfd failed: the fallback
}

// newAlarm returns a client's alarm for a run whose starts end with stop:
// a timerfd woken lead early (wakeLead), or a Go timer when none can be
// had.
func newAlarm(stop context.Context, lead time.Duration) alarm {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return newTimerAlarm()
	}
	a := &timerfdAlarm{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd, lead: lead}
	// A wait under way when the run stops returns at once: the read's
	// deadline passes. One watch per client, not per wait.
	a.unwatch = context.AfterFunc(stop, func() { _ = a.f.SetReadDeadline(time.Unix(1, 0)) })
	return a
}

func (a *timerfdAlarm) wait(stop context.Context, due time.Time) error {
	if a.timer != nil {
		return a.timer.wait(stop, due)
	}
	d := time.Until(due)
	if d <= 0 {
		return nil
	}
	// The timer is set early and the rest of the wait spins: a tenth of
	// the wait at most, so a client's spin is never more than a tenth of
	// its time.
	lead := min(a.lead, d/10)
	// Arming resets the expiration count, so a read returns for this
	// expiry and no earlier one.
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d - lead))}
	err := unix.TimerfdSettime(a.fd, 0, &spec, nil)
	if err == nil {
		_, err = a.f.Read(a.buf[:])
	}
	if stop.Err() != nil {
		return stop.Err()
	}
	if err == nil {
		for time.Now().Before(due) {
		}
		return nil
	}
	// The descriptor failed (which it should not): the rest of the run
	// waits on a Go timer, late as that is, rather than not at all.
	a.timer = newTimerAlarm()
	return a.timer.wait(stop, due)
}

func (a *timerfdAlarm) close() {
	a.unwatch()
	_ = a.f.Close()
	if a.timer != nil {
		a.timer.close()
	}
}

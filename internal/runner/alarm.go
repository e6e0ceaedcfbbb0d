package runner

import (
	"context"
	"time"
)

// An alarm is how an open-loop client waits for its next intended start.
// Each client owns one, so no client waits on another's alarm.
//
// Go's own timers wake late: when every processor is idle the runtime
// sleeps in epoll_wait, whose timeout is in whole milliseconds, so a timer
// fires anywhere up to about a millisecond after its time. That delay is
// the client's, but an open loop measures latency from the intended start,
// and it would be charged to the database: on an idle machine it was most
// of a fast statement's latency (bench/openloop.sh). Where the kernel
// offers a timer whose expiry wakes the netpoller itself (Linux's timerfd),
// the alarm uses it; elsewhere, or when one cannot be had, a time.Timer.
type alarm interface {
	// wait returns nil at due or soon after, or stop's error when stop
	// ends first.
	wait(stop context.Context, due time.Time) error
	close()
}

// timerAlarm waits on a reused time.Timer.
type timerAlarm struct{ t *time.Timer }

func newTimerAlarm() *timerAlarm {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &timerAlarm{t: t}
}

func (a *timerAlarm) wait(stop context.Context, due time.Time) error {
	d := time.Until(due)
	if d <= 0 {
		return nil
	}
	a.t.Reset(d)
	select {
	case <-a.t.C:
		return nil
	case <-stop.Done():
		a.t.Stop()
		return stop.Err()
	}
}

func (a *timerAlarm) close() { a.t.Stop() }

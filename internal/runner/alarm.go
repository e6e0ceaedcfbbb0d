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
//
// Waking takes tens of microseconds more (the kernel's, then the
// runtime's), most of them when the processor was idle: a timerfd alarm
// is set that much early and spins the rest (maxWakeLead). The runner
// shortens the lead as the run's rate grows (wakeLead), so all its
// clients' spins together never take more than a tenth of one processor.
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

// maxWakeLead is how early an alarm wakes at most: about the median
// wake-up of a client whose processor went idle (bench/timerlag).
const maxWakeLead = 60 * time.Microsecond

// wakeLead is how early the alarms of a run at rate events a second, in
// all, wake: maxWakeLead, or less so that the spins (one a start) add up
// to a tenth of a processor at most.
func wakeLead(rate float64) time.Duration {
	if rate <= 0 {
		return 0
	}
	return min(maxWakeLead, time.Duration(0.1*float64(time.Second)/rate))
}

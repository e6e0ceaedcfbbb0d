package runner

import (
	"context"
	"testing"
	"time"
)

// Both alarms: a wait returns at its time and not before, at once for a
// time past, and at once when the run stops, with stop's error.
func TestAlarm(t *testing.T) {
	for name, mk := range map[string]func(context.Context) alarm{
		"default": newAlarm,
		"timer":   func(context.Context) alarm { return newTimerAlarm() },
	} {
		t.Run(name, func(t *testing.T) {
			stop, cancel := context.WithCancel(context.Background())
			defer cancel()
			a := mk(stop)
			defer a.close()
			for _, d := range []time.Duration{3 * time.Millisecond, 200 * time.Microsecond, 2 * time.Millisecond} {
				due := time.Now().Add(d)
				if err := a.wait(stop, due); err != nil {
					t.Fatalf("wait %v: %v", d, err)
				}
				if now := time.Now(); now.Before(due) {
					t.Fatalf("wait %v returned %v early", d, due.Sub(now))
				}
			}
			begin := time.Now()
			if err := a.wait(stop, begin.Add(-time.Second)); err != nil || time.Since(begin) > 100*time.Millisecond {
				t.Fatalf("a time past: %v after %v", err, time.Since(begin))
			}
			time.AfterFunc(20*time.Millisecond, cancel)
			begin = time.Now()
			if err := a.wait(stop, begin.Add(time.Hour)); err == nil {
				t.Fatal("a wait ended by stop returned no error")
			}
			if took := time.Since(begin); took > 5*time.Second {
				t.Fatalf("stop ended the wait after %v", took)
			}
			if err := a.wait(stop, time.Now().Add(time.Hour)); err == nil {
				t.Fatal("a wait after stop returned no error")
			}
		})
	}
}

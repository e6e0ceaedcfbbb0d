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
		"default": func(stop context.Context) alarm { return newAlarm(stop, maxWakeLead) },
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

// The alarms of a run spin a tenth of a processor at most, all together:
// the lead shrinks as the rate grows, up to maxWakeLead.
func TestWakeLeadBoundsTheSpin(t *testing.T) {
	for rate, want := range map[float64]time.Duration{0: 0, 200: maxWakeLead, 2000: 50 * time.Microsecond, 10000: 10 * time.Microsecond, 1e6: 100 * time.Nanosecond} {
		got := wakeLead(rate)
		if got != want {
			t.Errorf("wakeLead(%g) = %v, want %v", rate, got, want)
		}
		if spun := time.Duration(rate * float64(got)); spun > 100*time.Millisecond {
			t.Errorf("at %g/s the alarms spin %v a second", rate, spun)
		}
	}
}

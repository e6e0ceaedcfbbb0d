package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
)

// TestStartAtWarnings: a clock off the server's by more than a tenth of
// the warm-up (100 ms without one) warns, and so does a warm-up cut short
// by clients ready just before the instant.
func TestStartAtWarnings(t *testing.T) {
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	cases := []struct {
		name    string
		offset  time.Duration
		warmup  time.Duration
		started time.Time // when the clients were ready
		want    string    // "" for no warning
	}{
		{"on time, clock close", 5 * time.Millisecond, 10 * time.Second, at.Add(-20 * time.Second), ""},
		{"clock off a tenth of the warm-up", -1500 * time.Millisecond, 10 * time.Second, at.Add(-20 * time.Second), "off the server's"},
		{"clock off, no warm-up", 150 * time.Millisecond, 0, at.Add(-time.Second), "off the server's"},
		{"clock a little off, no warm-up", 50 * time.Millisecond, 0, at.Add(-time.Second), ""},
		{"warm-up cut short", 0, 10 * time.Second, at.Add(-2 * time.Second), "less than the --warmup"},
		{"late", 0, 0, at.Add(300 * time.Millisecond), "after --start-at"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startFlags{clientID: "h", at: at, offset: &target.ClockOffset{Offset: c.offset, Uncertainty: time.Millisecond}}
			res := &result.Result{StartedAt: c.started}
			s.record(res, c.warmup)
			got := strings.Join(res.Summary.Warnings, "\n")
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Fatalf("warnings %q, want one naming %q", got, c.want)
			}
			if res.ClientID != "h" || res.StartAt == nil || *res.StartAt.ClockOffsetMS != float64(c.offset)/1e6 {
				t.Fatalf("recorded %q %+v", res.ClientID, res.StartAt)
			}
		})
	}
}

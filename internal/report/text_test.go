package report

import (
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
)

func TestLiveLine(t *testing.T) {
	iv := result.Interval{T: 10.000134, EventsPerS: 1234.567, ReadsPerS: 100, WritesPerS: 20, OtherPerS: 3,
		ErrorsPerS: 0.5, ReconnPerS: 0.25, Latency: []result.Percentile{{P: 50, MS: 1.234}, {P: 99.9, MS: 12.5}}}
	got := LiveLine(iv, 8)
	want := "[ 10s ] thds: 8 tps: 1234.57 qps: 123.00 (r/w/o: 100.00/20.00/3.00) lat (ms) p50/p99.9: 1.23/12.50 err/s: 0.50 reconn/s: 0.25"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	iv.Warmup, iv.T, iv.LagMeanMS = true, 0.25, 2
	if got := LiveLine(iv, 1); !strings.HasPrefix(got, "[ 0.25s warmup ]") || !strings.HasSuffix(got, "lag (ms): 2.00") {
		t.Fatalf("warm-up line: %s", got)
	}
	at := time.Date(2026, 11, 27, 8, 0, 0, 123_456_789, time.UTC)
	if got := LiveLineAt(iv, 1, at); !strings.HasPrefix(got, "[ 1795766400.123s warmup ] thds: 1") {
		t.Fatalf("stamped line: %s", got)
	}
}

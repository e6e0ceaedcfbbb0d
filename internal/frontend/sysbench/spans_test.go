package sysbench

import (
	"bytes"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
)

// TestCheckpointAndForcedShutdownReports pins the text of a checkpoint
// report and of the forced shutdown's, in sysbench 1.0.20's form (taken
// from its runs: a checkpoint at 1 s, then a forced shutdown with one
// event hung on a table lock).
func TestCheckpointAndForcedShutdownReports(t *testing.T) {
	c, code, _, _ := start(t, "oltp_point_select", "--time=1", "--forced-shutdown=1", "--report-checkpoints=1", "run")
	if code != 0 || !c.Spans() || c.Drain() != time.Second {
		t.Fatalf("exit %d, spans %v, drain %v; want spans and a drain of 1 s", code, c.Spans(), c.Drain())
	}
	var out bytes.Buffer
	c.Log.W = &out
	lat := &result.Latency{MinMS: 0.02, MeanMS: 0.62, MaxMS: 57.77, Percentiles: []result.Percentile{{P: 95, MS: 2.99}}}
	c.OnSpan(runner.Span{At: 1046500 * time.Microsecond, Seconds: 1.0465, Events: 1683, Reads: 1683, Latency: lat,
		Fairness: &result.Fairness{EventsMean: 1683, BusyMeanS: 1.0435, BusyS: 1.04349}})
	c.OnSpan(runner.Span{At: 2 * time.Second, Seconds: 0.9535, Final: true, Events: 365, Reads: 365, Unfinished: 1,
		Latency:  &result.Latency{MinMS: 0.03, MeanMS: 0.76, MaxMS: 16.47, Percentiles: []result.Percentile{{P: 95, MS: 2.32}}},
		Fairness: &result.Fairness{EventsMean: 366, BusyMeanS: 0.2777, BusyS: 0.27774, BusyStdDevS: 2.72}})
	if !c.Forced() {
		t.Fatal("a final span with an unfinished event under --forced-shutdown is not a forced shutdown")
	}
	c.ForcedReport(&result.Result{Summary: result.Summary{DurationS: 1, DrainS: 1.003}})
	want := `[ 1s ] Checkpoint report:
SQL statistics:
    queries performed:
        read:                            1683
        write:                           0
        other:                           0
        total:                           1683
    transactions:                        1683   (1608.22 per sec.)
    queries:                             1683   (1608.22 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          1.0465s
    total number of events:              1683

Latency (ms):
         min:                                    0.02
         avg:                                    0.62
         max:                                   57.77
         95th percentile:                        2.99
         sum:                                 1043.49

Threads fairness:
    events (avg/stddev):           1683.0000/0.00
    execution time (avg/stddev):   1.0435/0.00

FATAL: The --max-time limit has expired, forcing shutdown...
SQL statistics:
    queries performed:
        read:                            365
        write:                           0
        other:                           0
        total:                           365
    transactions:                        365    (382.80 per sec.)
    queries:                             365    (382.80 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

Number of unfinished transactions on forced shutdown: 1

General statistics:
    total time:                          2.0030s
    total number of events:              365

Latency (ms):
         min:                                    0.03
         avg:                                    0.76
         max:                                   16.47
         95th percentile:                        2.32
         sum:                                  277.74

Threads fairness:
    events (avg/stddev):           366.0000/0.00
    execution time (avg/stddev):   0.2777/2.72

`
	if out.String() != want {
		t.Errorf("reports:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestForcedShutdownDrain: the time the events under way get after the
// time limit, as sysbench reads --forced-shutdown.
func TestForcedShutdownDrain(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		drain time.Duration
	}{
		{[]string{"--time=10", "--forced-shutdown=20%"}, 2 * time.Second},
		{[]string{"--time=10", "--forced-shutdown=3"}, 3 * time.Second},
		{[]string{"--time=10", "--forced-shutdown=0"}, time.Millisecond}, // at the limit itself
		{[]string{"--time=10", "--forced-shutdown=off"}, 0},
		{[]string{"--time=10"}, 0},
		{[]string{"--time=0", "--events=5", "--forced-shutdown=3"}, 0}, // no time limit: no forced shutdown
	} {
		c, code, _, _ := start(t, append(tc.args, "oltp_point_select", "run")...)
		if code != 0 || c.Drain() != tc.drain || c.Spans() != (tc.drain > 0) {
			t.Errorf("%v: exit %d, drain %v, spans %v; want %v", tc.args, code, c.Drain(), c.Spans(), tc.drain)
		}
	}
}

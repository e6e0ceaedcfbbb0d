package report

import (
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbmark/dbmark/internal/result"
)

func TestLiveLine(t *testing.T) {
	iv := result.Interval{T: 10.000134, EventsPerS: 1234.567, ReadsPerS: 100, WritesPerS: 20, OtherPerS: 3,
		ErrorsPerS: 0.5, ReconnPerS: 0.25, Latency: []result.Percentile{{P: 50, MS: 1.234}, {P: 99.9, MS: 12.5}}}
	got := LiveLine(iv, 8, time.Second)
	want := "[ 10s ] thds: 8 tps: 1234.57 qps: 123.00 (r/w/o: 100.00/20.00/3.00) lat (ms,50%): 1.23 err/s: 0.50 reconn/s: 0.25 lat (ms) p99.9: 12.50"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	iv95 := iv
	iv95.Latency = []result.Percentile{{P: 50, MS: 1.234}, {P: 95, MS: 3.5}, {P: 99, MS: 7}}
	want = "[ 10s ] thds: 8 tps: 1234.57 qps: 123.00 (r/w/o: 100.00/20.00/3.00) lat (ms,95%): 3.50 err/s: 0.50 reconn/s: 0.25 lat (ms) p50/p99: 1.23/7.00"
	if got := LiveLine(iv95, 8, time.Second); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	iv95.Latency = nil // no events in the interval
	if got := LiveLine(iv95, 8, time.Second); !strings.Contains(got, " lat (ms,95%): 0.00 err/s:") {
		t.Fatalf("no events: %s", got)
	}
	late := iv
	late.T = 2.475 // a tick a loaded machine delivered late
	if got := LiveLine(late, 8, time.Second); !strings.HasPrefix(got, "[ 2s ] thds: 8") {
		t.Fatalf("late tick: %s", got)
	}
	if got := LiveLine(late, 8, 500*time.Millisecond); !strings.HasPrefix(got, "[ 2.48s ] thds: 8") {
		t.Fatalf("late tick of a half-second interval: %s", got)
	}
	iv.Warmup, iv.T, iv.LagMeanMS = true, 0.25, 2
	if got := LiveLine(iv, 1, 250*time.Millisecond); !strings.HasPrefix(got, "[ 0.25s warmup ]") || !strings.HasSuffix(got, "lag (ms): 2.00") {
		t.Fatalf("warm-up line: %s", got)
	}
	at := time.Date(2026, 11, 27, 8, 0, 0, 123_456_789, time.UTC)
	if got := LiveLineAt(iv, 1, at); !strings.HasPrefix(got, "[ 1795766400.123s warmup ] thds: 1") {
		t.Fatalf("stamped line: %s", got)
	}
}

// A file I/O result is summed up in operations and bytes, with no SQL
// words; a database's in transactions and queries. Run-time warnings and
// the drain close the summary.
func TestSummaryWords(t *testing.T) {
	var b strings.Builder
	r := &result.Result{Target: result.Target{Kind: "dir"}, Workload: result.Workload{Name: "fileio", Headline: "ops/s"},
		Summary: result.Summary{Events: 100, EventsPerS: 50, ReadMiBPerS: 0.8, DurationS: 2}}
	Summary(&b, r)
	if out := b.String(); strings.Contains(out, "SQL") || strings.Contains(out, "transactions") || !strings.Contains(out, "File I/O statistics") {
		t.Errorf("file I/O summary:\n%s", out)
	}
	b.Reset()
	r = &result.Result{Target: result.Target{Kind: "postgres"}, Workload: result.Workload{Name: "tpcb", Headline: "tps"},
		Summary: result.Summary{Events: 100, EventsPerS: 50, DurationS: 2, DrainS: 0.25, DrainEvents: 3, Concurrency: 7.9,
			Warnings: []string{"--rate 100/s was not reached"},
			Client:   &result.ClientCPU{PerEventUS: 41.5, MachineShare: 0.62, CPUs: 2, SharedMachine: true, Limited: true}}}
	r.Run.Threads = 8
	Summary(&b, r)
	out := b.String()
	for _, want := range []string{"SQL statistics", "0.2500s to finish 3 events", "7.90 of 8 clients", "warning: --rate 100/s was not reached",
		"client CPU (dbmark's process):       41.5 µs per event, 62% of 2 CPUs (the server runs on this machine too)",
		"warning: client-limited: dbmark itself used 62% of this machine's 2 CPUs"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// The histogram has sysbench's shape and buckets: values of sysbench's
// 1024 log-spaced buckets, bars scaled to 40 characters, empty buckets left
// out, a line holding one space after it.
func TestHistogram(t *testing.T) {
	h := hdr.New(1000, int64(time.Hour), 3)
	for i := 0; i < 40; i++ {
		_ = h.RecordValue(2_145_000) // 2.145 ms: sysbench's bucket 2.145
	}
	_ = h.RecordValue(1_007_000) // 1.007 ms
	for i := 0; i < 12; i++ {
		_ = h.RecordValue(1_857_000)
	}
	var b strings.Builder
	Histogram(&b, h)
	want := "Latency histogram (values are in milliseconds)\n" +
		"       value  ------------- distribution ------------- count\n" +
		"       1.007 |*                                        1\n" +
		"       1.857 |************                             12\n" +
		"       2.145 |**************************************** 40\n" +
		" \n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// A degraded run says so in its status line, and shows the reconnect
// wait, the latency including it and each client's outage.
func TestSummaryDegraded(t *testing.T) {
	var b strings.Builder
	r := &result.Result{Target: result.Target{Kind: "postgres"}, Workload: result.Workload{Name: "oltp_read_write", Headline: "tps"},
		Status: result.StatusDegraded,
		Summary: result.Summary{Events: 100, EventsPerS: 50, DurationS: 2, Reconnects: 2,
			Latency:               &result.Latency{MaxMS: 163.7},
			ReconnectWait:         &result.Latency{MeanMS: 7050, MaxMS: 7100.5},
			LatencyWithReconnects: &result.Latency{MaxMS: 7100.5},
			Disconnects: []result.Disconnect{
				{Client: 0, StartS: 8.012, BackS: 15.05, Back: true, DisconnectedS: 7.038, WaitS: 7.1005, Reconnects: 1},
				{Client: 1, StartS: 8.013, DisconnectedS: 2, Reconnects: 1},
			}}}
	Summary(&b, r)
	out := b.String()
	for _, want := range []string{
		"status: degraded (clients lost their connection",
		"Reconnect wait (ms, from the failed attempt's start to the next committed event):",
		"max:                            7100.500",
		"Latency including reconnects",
		"    0             8.012     15.050          7.038      7.101",
		"    1             8.013   not back          2.000          -",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	r.Status, r.Summary.Disconnects, r.Summary.ReconnectWait, r.Summary.LatencyWithReconnects = result.StatusOK, nil, nil, nil
	Summary(&b, r)
	if out := b.String(); strings.Contains(out, "Reconnect wait") || strings.Contains(out, "Disconnected") {
		t.Errorf("an ok run shows outages:\n%s", out)
	}
}

// Reads that must find rows and missed are counted in the SQL statistics
// and the live line; a run that missed none says nothing of them.
func TestSummaryMissedReads(t *testing.T) {
	var b strings.Builder
	r := &result.Result{Target: result.Target{Kind: "postgres"}, Workload: result.Workload{Name: "oltp_point_select", Headline: "tps"},
		Summary: result.Summary{Events: 1000, EventsPerS: 500, DurationS: 2,
			ReadCheck: &result.ReadCheck{Checked: 1000, Missed: 12}}}
	Summary(&b, r)
	if out := b.String(); !strings.Contains(out, "reads that must find rows:           1000       (12 found none or too few, 1.2%)") {
		t.Errorf("summary lacks the missed reads:\n%s", out)
	}
	b.Reset()
	r.Summary.ReadCheck.Missed = 0
	Summary(&b, r)
	if out := b.String(); strings.Contains(out, "must find") {
		t.Errorf("a run that missed no read speaks of them:\n%s", out)
	}
	iv := result.Interval{T: 1, EventsPerS: 10, Extra: map[string]float64{"missed_reads_per_s": 9}}
	if got := LiveLine(iv, 1, time.Second); !strings.HasSuffix(got, " missed reads/s: 9.00") {
		t.Errorf("live line: %s", got)
	}
	iv.Extra["missed_reads_per_s"] = 0
	if got := LiveLine(iv, 1, time.Second); strings.Contains(got, "missed") {
		t.Errorf("live line of an interval without misses: %s", got)
	}
}

// A source whose samples are missing for a while (its connection lost)
// says so once, with the spans, after the summary; one without gaps says
// nothing.
func TestSummaryNamesCounterGaps(t *testing.T) {
	r := &result.Result{Target: result.Target{Kind: "postgres"}, Workload: result.Workload{Name: "oltp_read_write", Headline: "tps"},
		Counters: &result.Counters{Series: []result.CounterSeries{
			{Name: "db.blocks_hit", Source: "db", Points: [][2]float64{{1, 5}, {6, 5}}, Gaps: [][2]float64{{2, 5.5}, {7.25, 9}}},
			{Name: "db.blocks_read", Source: "db", Points: [][2]float64{{1, 5}, {6, 5}}, Gaps: [][2]float64{{2, 5.5}, {7.25, 9}}},
			{Name: "os.cpu.user", Source: "os", Points: [][2]float64{{1, 5}, {6, 5}}},
		}}}
	var b strings.Builder
	Summary(&b, r)
	want := "db counters: no samples 2.0-5.5 s, 7.2-9.0 s (their connection was lost and made again)\n"
	if got := b.String(); strings.Count(got, "counters: no samples") != 1 || !strings.Contains(got, want) {
		t.Errorf("summary:\n%s\nwant the line %q once", got, want)
	}
}

// The settings a run changed on the server are named with what they were.
func TestSummaryNamesServerSettings(t *testing.T) {
	r := &result.Result{Target: result.Target{Kind: "mysql", ServerSet: []result.ServerSetting{
		{Name: "innodb_flush_log_at_trx_commit", Original: "1", Set: "2", ReadBack: "2"},
		{Name: "innodb_io_capacity", Original: "200", Set: "400", ReadBack: "400"},
	}}, Workload: result.Workload{Name: "oltp_update_index", Headline: "tps"}}
	var b strings.Builder
	Summary(&b, r)
	want := "server settings: innodb_flush_log_at_trx_commit=2 (read back 2, was 1), innodb_io_capacity=400 (read back 400, was 200)\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nwant %q", b.String(), want)
	}
}

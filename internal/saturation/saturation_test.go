package saturation

import (
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

func series(name, unit string, f func(t float64) float64) result.CounterSeries {
	s := result.CounterSeries{Name: name, Unit: unit, Kind: result.CounterGauge}
	for t := 1.0; t <= 20; t++ {
		s.Points = append(s.Points, [2]float64{t, f(t)})
	}
	return s
}

func runWith(ss ...result.CounterSeries) *result.Result {
	r := &result.Result{Environment: &result.Environment{MemoryB: 8 << 30}, Counters: &result.Counters{IntervalS: 1, Series: ss}}
	for t := 1.0; t <= 20; t++ {
		r.Series = append(r.Series, result.Interval{T: t, DurationS: 1, Warmup: t <= 2})
	}
	return r
}

func TestFind(t *testing.T) {
	flat := func(v float64) func(float64) float64 { return func(float64) float64 { return v } }
	for _, c := range []struct {
		name string
		r    *result.Result
		want []string // resources, most of the run first
	}{
		{"CPU-bound", runWith(series("os.cpu.user", "%", flat(80)), series("os.cpu.system", "%", flat(19)), series("os.cpu.iowait", "%", flat(0)),
			series("os.disk.vda.util", "%", flat(3))), []string{"cpu"}},
		{"I/O-bound", runWith(series("os.cpu.user", "%", flat(10)), series("os.cpu.system", "%", flat(10)), series("os.cpu.iowait", "%", flat(45)),
			series("os.disk.vda.util", "%", func(t float64) float64 {
				if t > 10 {
					return 100
				}
				return 50
			}), series("os.disk.vda.await", "ms", flat(12))), []string{"iowait", "disk vda"}},
		{"idle", runWith(series("os.cpu.user", "%", flat(20)), series("os.cpu.system", "%", flat(5)), series("os.disk.vda.util", "%", flat(10)),
			series("os.mem.used", "bytes", flat(2<<30))), nil},
		{"swapping", runWith(series("os.cpu.user", "%", flat(20)), series("os.cpu.system", "%", flat(5)),
			series("os.mem.swap_used", "bytes", func(t float64) float64 { return t * (1 << 20) })), []string{"memory"}},
		{"lock waits", runWith(series("os.cpu.user", "%", flat(20)), series("os.cpu.system", "%", flat(5)),
			series("db.row_lock_waits", "/s", flat(12)), series("db.blocks_hit", "pages/s", flat(1e5))), []string{"engine"}},
		{"lock waits on a cluster's second server", runWith(series("os.cpu.user", "%", flat(20)), series("os.cpu.system", "%", flat(5)),
			series("server1/db.row_lock_waits", "/s", flat(0)), series("server2/db.row_lock_waits", "/s", flat(12))), []string{"engine"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Find(c.r)
			var res []string
			for _, l := range got {
				res = append(res, l.Resource)
			}
			if strings.Join(res, ",") != strings.Join(c.want, ",") {
				t.Fatalf("%v, want %v: %s", res, c.want, Line(got))
			}
		})
	}
	// The I/O-bound run's disk: half the measured samples at 100%, and its
	// latency said.
	got := Find(runWith(series("os.disk.vda.util", "%", func(t float64) float64 {
		if t > 11 {
			return 100
		}
		return 50
	}), series("os.disk.vda.await", "ms", func(float64) float64 { return 12 })))
	if len(got) != 1 || got[0].Share != 0.5 || !strings.Contains(Line(got), "disk vda busy (75% utilised on average, 12.0 ms a request) 50% of the run") {
		t.Errorf("%+v: %s", got, Line(got))
	}
	if got := Find(runWith(series("server2/db.row_lock_waits", "/s", flat(12)))); len(got) != 1 || !strings.Contains(got[0].Detail, "server2 row_lock_waits") {
		t.Errorf("a cluster's server's waits: %+v", got)
	}
	if l := Line(nil); !strings.HasPrefix(l, "no sampled resource was at its limit") {
		t.Errorf("nothing saturated says %q", l)
	}
	if Find(&result.Result{}) != nil {
		t.Error("a run without counters has a verdict")
	}
}

// The network: a NIC at its link speed is a limit; a server on this
// machine is reached over loopback, which is not, and the verdict says
// so; a NIC of unknown speed is not judged, and the verdict says that;
// a file run has no network.
func TestNetwork(t *testing.T) {
	flat := func(v float64) func(float64) float64 { return func(float64) float64 { return v } }
	remote := func(speed uint64, rx float64) *result.Result {
		r := runWith(series("os.cpu.user", "%", flat(20)), series("os.cpu.system", "%", flat(5)),
			series("os.net.eth0.rx_mib", "MiB/s", flat(rx)), series("os.net.eth0.tx_mib", "MiB/s", flat(2)))
		r.Target.Kind, r.Target.URL = "postgres", "postgres://bench@db.example.com:5432/bench"
		r.Environment.MachineFacts = &result.MachineFacts{NICs: []result.NIC{{Name: "eth0", SpeedMbps: speed, State: "up"}}}
		r.Summary.Client = &result.ClientCPU{}
		return r
	}
	// 1 Gbit/s carries 119 MiB/s: 115 is 96% of it, 50 is 42%.
	got := Find(remote(1000, 115))
	if len(got) != 1 || got[0].Resource != "network eth0" || got[0].Share != 1 || got[0].Note ||
		!strings.Contains(Line(got), "network eth0 at its link speed (1000 Mbit/s; 96% of it on average, received 115 MiB/s, sent 2 MiB/s) 100% of the run") {
		t.Errorf("saturated NIC: %+v: %s", got, Line(got))
	}
	if got := Find(remote(1000, 50)); len(got) != 0 {
		t.Errorf("a NIC at 42%% of its speed: %s", Line(got))
	}
	got = Find(remote(0, 50))
	if len(got) != 1 || !got[0].Note || !strings.Contains(Line(got), "network eth0 not judged: its link speed is unknown (at most 50 MiB/s one way)") ||
		!strings.Contains(Line(got), "the client, locks, the network, or the workload's own pace") {
		t.Errorf("NIC of unknown speed: %+v: %s", got, Line(got))
	}
	local := remote(1000, 115)
	local.Summary.Client.SharedMachine = true
	got = Find(local)
	if l := Line(got); len(got) != 1 || !got[0].Note || got[0].Share != 0 ||
		l != "no sampled resource was at its limit: the limit is elsewhere (the client, locks, or the workload's own pace); the network is not a limit: the server runs on this machine (loopback or a unix socket)" {
		t.Errorf("server on this machine: %+v: %s", got, l)
	}
	// A limit comes before the note.
	local.Counters.Series = append(local.Counters.Series, series("os.disk.vda.util", "%", flat(99)))
	if l := Line(Find(local)); !strings.HasPrefix(l, "disk vda busy") || !strings.HasSuffix(l, "(loopback or a unix socket)") {
		t.Errorf("limit and note: %s", l)
	}
	files := remote(1000, 115)
	files.Target.Kind, files.Target.URL = "dir", "/srv/fileio"
	if got := Find(files); len(got) != 0 {
		t.Errorf("a file run: %s", Line(got))
	}
}

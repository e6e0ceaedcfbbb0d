package cli

import (
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/workload"
)

// planOf parses args as "dbmark run NAME" does and computes the run's plan.
func planOf(t *testing.T, name string, args []string) (workload.Plan, error) {
	t.Helper()
	a := NewApp(io.Discard, io.Discard, nil)
	w, ok := a.Workloads.New(name)
	if !ok {
		t.Fatalf("no workload %s", name)
	}
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetNormalizeFunc(normalize)
	fs.SetOutput(io.Discard)
	f := &runFlags{}
	f.bindTarget(fs, w)
	f.bindRun(fs)
	w.Flags(fs)
	sweepable(fs) // as the run command's
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	return workload.NewPlan(f.planInput(fs, w), w.Hooks.Plan)
}

// TestPlan: the clients and limits of a run, from the command line, as
// one function computes them for every workload; a bad one is refused
// with one line.
func TestPlan(t *testing.T) {
	type shape struct {
		clients, conns int
		time           time.Duration
		events, per    int64
		tries          int
		self           bool
		skip           time.Duration
	}
	const s10 = 10 * time.Second
	cases := []struct {
		name string
		wl   string
		args string
		want shape
		err  string // the whole message
	}{
		// sysbench's options and its deprecated spellings.
		{"defaults", "oltp_read_only", "", shape{clients: 1, conns: 1, time: s10, tries: 10}, ""},
		{"threads", "oltp_read_only", "--threads 8", shape{clients: 8, conns: 8, time: s10, tries: 10}, ""},
		{"num-threads", "oltp_read_only", "--num-threads 4", shape{clients: 4, conns: 4, time: s10, tries: 10}, ""},
		{"num-threads against --threads", "oltp_read_only", "--num-threads 4 --threads 8", shape{}, "--threads 8 and --num-threads 4 disagree: --num-threads is the deprecated spelling of --threads; give only --threads"},
		{"num-threads agreeing with --threads", "oltp_read_only", "--threads 4 --num-threads 4", shape{clients: 4, conns: 4, time: s10, tries: 10}, ""},
		{"num-threads at its default is ignored", "oltp_read_only", "--threads 3 --num-threads 1", shape{clients: 3, conns: 3, time: s10, tries: 10}, ""},
		{"max-requests alone", "oltp_read_only", "--max-requests 50 --time 0", shape{clients: 1, conns: 1, events: 50, tries: 10}, ""},
		{"max-requests against --events", "oltp_read_only", "--events 30 --max-requests 50 --time 0", shape{}, "--events 30 and --max-requests 50 disagree: --max-requests is the deprecated spelling of --events; give only --events"},
		{"max-time alone", "oltp_read_only", "--max-time 5", shape{clients: 1, conns: 1, time: 5 * time.Second, tries: 10}, ""},
		{"max-time against --time", "oltp_read_only", "--time 1 --max-time 3", shape{}, "--time 1 and --max-time 3 disagree: --max-time is the deprecated spelling of --time; give only --time"},
		{"max-time against --time 0", "oltp_read_only", "--max-time 5 --time 0", shape{}, "--time 0 and --max-time 5 disagree: --max-time is the deprecated spelling of --time; give only --time"},
		{"max-time agreeing with --time", "oltp_read_only", "--time 3 --max-time 3", shape{clients: 1, conns: 1, time: 3 * time.Second, tries: 10}, ""},
		{"max-time at its default is ignored", "oltp_read_only", "--max-time 0 --time 3", shape{clients: 1, conns: 1, time: 3 * time.Second, tries: 10}, ""},
		{"events and warm-up and rate", "oltp_read_only", "--time 0 --events 100 --warmup 2 --rate 50", shape{clients: 1, conns: 1, events: 100, tries: 10}, ""},
		{"no limit", "oltp_read_only", "--time 0", shape{}, "no limit: give --time or --events (or both)"},
		{"no limit by max-time", "oltp_read_only", "--max-time 0 --time 0", shape{}, "no limit: give --time or --events (or both)"},
		{"zero threads", "oltp_read_only", "--threads 0", shape{}, "--threads 0: must be between 1 and 100000"},
		{"too many threads", "oltp_read_only", "--threads 100001", shape{}, "--threads 100001: must be between 1 and 100000"},
		{"zero num-threads", "oltp_read_only", "--num-threads 0", shape{}, "--threads 0: must be between 1 and 100000"},
		{"negative events", "oltp_read_only", "--events -1", shape{}, "--events -1: must not be negative"},
		{"negative rate", "oltp_read_only", "--rate -5", shape{}, "--rate -5: must be a positive number of events per second, or 0 for no limit"},
		{"zero tries", "oltp_read_only", "--max-tries 0", shape{}, "--max-tries 0: must be at least 1"},
		// pgbench's -t, -T and --events.
		{"pgbench's default", "tpcb", "", shape{clients: 1, conns: 1, events: 10, per: 10, tries: 1}, ""},
		{"default per client", "tpcb", "-c 4", shape{clients: 4, conns: 4, events: 40, per: 10, tries: 1}, ""},
		{"-t times clients", "tpcb", "-c 4 -t 25", shape{clients: 4, conns: 4, events: 100, per: 25, tries: 1}, ""},
		{"-t times num-threads", "tpcb", "-t 5 --num-threads 3", shape{clients: 3, conns: 3, events: 15, per: 5, tries: 1}, ""},
		{"-c against num-threads", "tpcb", "-t 5 -c 2 --num-threads 3", shape{}, "--threads 2 and --num-threads 3 disagree: --num-threads is the deprecated spelling of --threads; give only --threads"},
		{"-T", "tpcb", "-T 30", shape{clients: 1, conns: 1, time: 30 * time.Second, tries: 1}, ""},
		{"--events is a total", "tpcb", "--events 7 -c 2", shape{clients: 2, conns: 2, time: s10, events: 7, tries: 1}, ""},
		{"-t and -T", "tpcb", "-t 5 -T 5", shape{}, "specify either a number of transactions (-t) or a duration (-T), not both"},
		{"-t and --time", "tpcb", "-t 5 --time 5", shape{}, "specify either a number of transactions (-t) or a duration (-T), not both"},
		{"-t and max-time", "tpcb", "-t 5 --max-time 5", shape{}, "specify either a number of transactions (-t) or a duration (-T), not both"},
		{"-t and --events", "tpcb", "-t 5 --events 9", shape{}, "specify either -t (transactions per client) or --events (in total), not both"},
		{"-t 0", "tpcb", "-t 0", shape{}, "-t 0: invalid number of transactions (at least 1 per client)"},
		{"-t times clients overflows", "tpcb", "-t 9223372036854775807 -c 2", shape{}, "9223372036854775807 events per client times 2 clients: too many events"},
		{"-c 0", "tpcb", "-c 0", shape{}, "--threads 0: must be between 1 and 100000"},
		{"unlimited tries under -T", "tpcb", "--max-tries 0 -T 5", shape{clients: 1, conns: 1, time: 5 * time.Second, tries: math.MaxInt32}, ""},
		{"unlimited tries under -L", "tpcb", "--max-tries 0 -L 50", shape{clients: 1, conns: 1, events: 10, per: 10, tries: math.MaxInt32}, ""},
		{"unlimited tries without an end", "tpcb", "--max-tries 0 -t 3", shape{}, "--max-tries 0 (unlimited) needs --latency-limit or a duration (-T)"},
		{"negative tries", "tpcb", "--max-tries -1", shape{}, "--max-tries -1: must not be negative"},
		{"-L skips late under -R", "tpcb", "-R 100 -L 5 -T 2", shape{clients: 1, conns: 1, time: 2 * time.Second, tries: 1, skip: 5 * time.Millisecond}, ""},
		{"-L alone skips nothing", "tpcb", "-L 5 -T 2", shape{clients: 1, conns: 1, time: 2 * time.Second, tries: 1}, ""},
		{"-R 0", "tpcb", "-R 0", shape{}, "-R/--rate 0: invalid rate limit (above 0 transactions per second; leave it out for no limit)"},
		{"aggregate interval against -T", "tpcb", "-l --aggregate-interval 2 -T 3", shape{}, "--aggregate-interval 2: the duration (-T 3s) must be a multiple of it"},
		// iibench's threads and --max-rows.
		{"iibench's threads", "iibench", "--inserters 2 --query-threads 3", shape{clients: 5, conns: 5, time: s10, tries: 10}, ""},
		{"iibench's threads given alike", "iibench", "--inserters 2 --query-threads 3 --threads 5", shape{clients: 5, conns: 5, time: s10, tries: 10}, ""},
		{"iibench's threads against --threads", "iibench", "--inserters 2 --query-threads 3 --threads 4", shape{}, "--threads 4 conflicts with --inserters 2 plus --query-threads 3 (leave --threads out)"},
		{"iibench's threads against --num-threads", "iibench", "--num-threads 2", shape{}, "--threads 2 conflicts with --inserters 1 plus --query-threads 0 (leave --threads out)"},
		{"iibench with no threads", "iibench", "--inserters 0", shape{}, "no threads: give --inserters or --query-threads"},
		{"max-rows ends the run", "iibench", "--max-rows 1000", shape{clients: 1, conns: 1, tries: 10, self: true}, ""},
		{"max-rows with --time", "iibench", "--max-rows 1000 --time 5", shape{clients: 1, conns: 1, time: 5 * time.Second, tries: 10, self: true}, ""},
		{"max-rows with --time 0", "iibench", "--max-rows 1000 --time 0", shape{clients: 1, conns: 1, tries: 10, self: true}, ""},
		// A workload on its own target holds no connection.
		{"fileio", "fileio", "--threads 4 --file-test-mode seqwr", shape{clients: 4, time: s10, tries: 10}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := planOf(t, c.wl, strings.Fields(c.args))
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("%s %s: error %v, want %q", c.wl, c.args, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s %s: %v", c.wl, c.args, err)
			}
			got := shape{p.Clients, p.Connections, p.Time, p.Events, p.PerClient, p.MaxTries, p.SelfLimited, p.SkipLate}
			if got != c.want {
				t.Errorf("%s %s:\n got %+v\nwant %+v", c.wl, c.args, got, c.want)
			}
		})
	}
}

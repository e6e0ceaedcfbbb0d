package workload

import (
	"math"
	"testing"
	"time"
)

// TestNewPlan: the combination of the typed options and a workload's
// declaration, with no command line (the command's table is cli's
// TestPlan).
func TestNewPlan(t *testing.T) {
	base := PlanInput{Clients: 2, Time: 10 * time.Second, MaxTries: 3}
	declare := func(a PlanAdjust) func(PlanInput) (PlanAdjust, error) {
		return func(PlanInput) (PlanAdjust, error) { return a, nil }
	}
	cases := []struct {
		name string
		in   func(*PlanInput)
		adj  PlanAdjust
		want Plan
		err  string
	}{
		{"as given", nil, PlanAdjust{}, Plan{Clients: 2, Connections: 2, Time: 10 * time.Second, MaxTries: 3}, ""},
		{"own target", func(in *PlanInput) { in.OwnTarget = true }, PlanAdjust{}, Plan{Clients: 2, Time: 10 * time.Second, MaxTries: 3}, ""},
		{"legacy spellings", func(in *PlanInput) {
			in.NumThreads, in.MaxRequests, in.MaxTime = 5, 7, time.Second
			in.Given.NumThreads, in.Given.MaxRequests, in.Given.MaxTime = true, true, true
		}, PlanAdjust{}, Plan{Clients: 5, Connections: 5, Time: time.Second, Events: 7, MaxTries: 3}, ""},
		{"per client", nil, PlanAdjust{PerClient: 4}, Plan{Clients: 2, Connections: 2, Events: 8, PerClient: 4, MaxTries: 3}, ""},
		{"per client with a given time", func(in *PlanInput) { in.Given.Time = true }, PlanAdjust{PerClient: 4},
			Plan{Clients: 2, Connections: 2, Time: 10 * time.Second, Events: 8, PerClient: 4, MaxTries: 3}, ""},
		{"default per client", nil, PlanAdjust{DefaultPerClient: 10}, Plan{Clients: 2, Connections: 2, Events: 20, PerClient: 10, MaxTries: 3}, ""},
		{"no default under --events", func(in *PlanInput) { in.Events, in.Given.Events = 5, true }, PlanAdjust{DefaultPerClient: 10},
			Plan{Clients: 2, Connections: 2, Time: 10 * time.Second, Events: 5, MaxTries: 3}, ""},
		{"self-limited", nil, PlanAdjust{SelfLimited: true}, Plan{Clients: 2, Connections: 2, MaxTries: 3, SelfLimited: true}, ""},
		{"derived clients", nil, PlanAdjust{Clients: 6, ClientsFrom: "a plus b"}, Plan{Clients: 6, Connections: 6, Time: 10 * time.Second, MaxTries: 3}, ""},
		{"derived clients against given", func(in *PlanInput) { in.Given.Clients = true }, PlanAdjust{Clients: 6, ClientsFrom: "a plus b"},
			Plan{}, "--threads 2 conflicts with a plus b (leave --threads out)"},
		{"unlimited tries", func(in *PlanInput) { in.MaxTries = 0 }, PlanAdjust{UnlimitedTries: true},
			Plan{Clients: 2, Connections: 2, Time: 10 * time.Second, MaxTries: math.MaxInt32}, ""},
		{"skip late needs a rate", nil, PlanAdjust{SkipLate: time.Millisecond}, Plan{Clients: 2, Connections: 2, Time: 10 * time.Second, MaxTries: 3}, ""},
		{"skip late under a rate", func(in *PlanInput) { in.Rate = 5 }, PlanAdjust{SkipLate: time.Millisecond, CountFailed: true, AbortClient: true},
			Plan{Clients: 2, Connections: 2, Time: 10 * time.Second, Rate: 5, MaxTries: 3, SkipLate: time.Millisecond, CountFailed: true, AbortClient: true}, ""},
		{"negative warm-up", func(in *PlanInput) { in.Warmup = -time.Second }, PlanAdjust{}, Plan{}, "--warmup -1s: must not be negative"},
		{"NaN rate", func(in *PlanInput) { in.Rate = math.NaN() }, PlanAdjust{}, Plan{}, "--rate NaN: must be a positive number of events per second, or 0 for no limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := base
			if c.in != nil {
				c.in(&in)
			}
			p, err := NewPlan(in, declare(c.adj))
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || p != c.want {
				t.Fatalf("got %+v, %v\nwant %+v", p, err, c.want)
			}
		})
	}
}

package workload

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// MaxClients is the most clients a run may have.
const MaxClients = 100_000

// PlanInput is what a run's plan is made from: the common options as
// parsed and which of them the command line gave. A command fills it in;
// NewPlan and the workload's Plan hook read nothing else.
type PlanInput struct {
	Clients  int // --threads (pgbench's -c)
	Time     time.Duration
	Events   int64
	Warmup   time.Duration
	Rate     float64
	MaxTries int
	// sysbench 1.0's deprecated spellings of --threads, --time and
	// --events, read only where Given says they were given.
	NumThreads  int
	MaxTime     time.Duration
	MaxRequests int64
	Given       Given
	// OwnTarget says the clients open no database connection (file I/O).
	OwnTarget bool
}

// Given says which options the command line gave, under any of their
// names. A deprecated spelling counts only when given a value other than
// its default, as sysbench counts it: it then stands for the new option,
// which must not be given a different value (NewPlan refuses that, where
// sysbench lets the deprecated one win). A sweep's cell setting the new
// option makes the command leave the deprecated one out of Given.
type Given struct {
	Clients, Time, Events, Rate, MaxTries bool
	NumThreads, MaxTime, MaxRequests      bool
}

// Resolved is in with the deprecated spellings applied to the options
// they stand for.
func (in PlanInput) Resolved() PlanInput {
	if in.Given.NumThreads {
		in.Clients, in.Given.Clients = in.NumThreads, true
	}
	if in.Given.MaxRequests {
		in.Events, in.Given.Events = in.MaxRequests, true
	}
	if in.Given.MaxTime {
		in.Time, in.Given.Time = in.MaxTime, true
	}
	in.NumThreads, in.MaxTime, in.MaxRequests = 0, 0, 0
	in.Given.NumThreads, in.Given.MaxTime, in.Given.MaxRequests = false, false, false
	return in
}

// legacyConflict refuses an option given under both its new and its
// deprecated spelling with different values: which one the user meant is
// not known.
func (in PlanInput) legacyConflict() error {
	secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'g', -1, 64) }
	for _, c := range []struct {
		both     bool
		now, old string
		a, b     string
	}{
		{in.Given.Clients && in.Given.NumThreads && in.Clients != in.NumThreads, "threads", "num-threads", strconv.Itoa(in.Clients), strconv.Itoa(in.NumThreads)},
		{in.Given.Time && in.Given.MaxTime && in.Time != in.MaxTime, "time", "max-time", secs(in.Time), secs(in.MaxTime)},
		{in.Given.Events && in.Given.MaxRequests && in.Events != in.MaxRequests, "events", "max-requests", strconv.FormatInt(in.Events, 10), strconv.FormatInt(in.MaxRequests, 10)},
	} {
		if c.both {
			return fmt.Errorf("--%s %s and --%s %s disagree: --%s is the deprecated spelling of --%s; give only --%s", c.now, c.a, c.old, c.b, c.old, c.now, c.now)
		}
	}
	return nil
}

// PlanAdjust is what a workload declares of its run, from its own options
// and the common ones (its Plan hook). The zero value asks for nothing.
type PlanAdjust struct {
	// Clients, when not 0, is the client count the workload's own options
	// make (iibench's inserters plus query threads); ClientsFrom names
	// those options for the message that refuses a different --threads.
	Clients     int
	ClientsFrom string
	// PerClient is a limit on events per client (pgbench's -t): the run's
	// event limit is it times the clients, and the time limit applies only
	// when given. DefaultPerClient is that limit when no limit at all is
	// given (pgbench's 10). A workload with either refuses a given
	// --events itself, in its own words.
	PerClient, DefaultPerClient int64
	// SelfLimited says the workload ends the run by itself (its workers
	// return ErrWorkerDone, as iibench's inserters at --max-rows): no
	// limit is needed and the default --time does not apply.
	SelfLimited bool
	// UnlimitedTries makes --max-tries 0 mean no limit (pgbench's).
	UnlimitedTries bool
	// SkipLate skips, under --rate, an event whose scheduled start is
	// already this far behind when its turn comes (pgbench's -L with -R).
	SkipLate time.Duration
	// CountFailed makes failed and skipped events count toward the event
	// limit, as pgbench's -t counts them.
	CountFailed bool
	// AbortClient makes a fatal error end only the client that met it:
	// the others go on to their limits and the run then ends failed, as
	// pgbench 15 lets its other clients finish. Without it such an error
	// ends the run.
	AbortClient bool
	// StallTimeout, when not 0, is --stall-timeout's default for the
	// workload (negative: no check unless given), for events that may
	// rightly run long (a query of a suite, bounded by its own timeout).
	StallTimeout time.Duration
}

// Plan is a run's shape as computed once from its options: how many
// clients and connections, its limits and how the runner treats events.
type Plan struct {
	Clients int
	// Connections are the database connections the clients hold, one
	// each (0 for a workload on its own target).
	Connections int
	Time        time.Duration // 0: no time limit
	Events      int64         // 0: no event limit
	// PerClient is the events per client the event limit was made from
	// (pgbench's -t), 0 when the limit is a total.
	PerClient   int64
	Warmup      time.Duration
	Rate        float64 // events/s over all clients; 0: closed loop
	MaxTries    int
	SelfLimited bool
	SkipLate    time.Duration
	CountFailed bool
	AbortClient bool
	// StallTimeout is the workload's default for --stall-timeout (0:
	// the command's own; negative: no check), from PlanAdjust.
	StallTimeout time.Duration
}

// NewPlan computes the run's plan from in and what the workload declares
// (declare is its Plan hook, nil for none). It reads nothing but its
// arguments, and an error is one line naming the option.
func NewPlan(in PlanInput, declare func(PlanInput) (PlanAdjust, error)) (Plan, error) {
	if err := in.legacyConflict(); err != nil {
		return Plan{}, err
	}
	in = in.Resolved()
	var adj PlanAdjust
	if declare != nil {
		var err error
		if adj, err = declare(in); err != nil {
			return Plan{}, err
		}
	}
	p := Plan{Clients: in.Clients, Time: in.Time, Events: in.Events, Warmup: in.Warmup, Rate: in.Rate,
		MaxTries: in.MaxTries, SelfLimited: adj.SelfLimited, CountFailed: adj.CountFailed, AbortClient: adj.AbortClient,
		StallTimeout: adj.StallTimeout}
	if adj.Clients != 0 {
		if in.Given.Clients && in.Clients != adj.Clients {
			return Plan{}, fmt.Errorf("--threads %d conflicts with %s (leave --threads out)", in.Clients, adj.ClientsFrom)
		}
		p.Clients = adj.Clients
	}
	if err := CheckClients(p.Clients); err != nil {
		return Plan{}, err
	}
	if !in.OwnTarget {
		p.Connections = p.Clients
	}
	per := adj.PerClient
	if per == 0 && !in.Given.Time && !in.Given.Events {
		per = adj.DefaultPerClient
	}
	if per > 0 {
		if per > math.MaxInt64/int64(p.Clients) {
			return Plan{}, fmt.Errorf("%d events per client times %d clients: too many events", per, p.Clients)
		}
		p.PerClient, p.Events = per, per*int64(p.Clients)
	}
	if (per > 0 || adj.SelfLimited) && !in.Given.Time {
		p.Time = 0 // the workload's own limit ends the run, not --time's default
	}
	if p.MaxTries == 0 && adj.UnlimitedTries {
		p.MaxTries = math.MaxInt32
	}
	if p.Rate > 0 {
		p.SkipLate = adj.SkipLate
	}
	switch {
	case p.Time < 0:
		return Plan{}, fmt.Errorf("--time %v: must not be negative", p.Time)
	case p.Events < 0:
		return Plan{}, fmt.Errorf("--events %d: must not be negative", p.Events)
	case p.Time == 0 && p.Events == 0 && !p.SelfLimited:
		return Plan{}, errors.New("no limit: give --time or --events (or both)")
	case p.Warmup < 0:
		return Plan{}, fmt.Errorf("--warmup %v: must not be negative", p.Warmup)
	case p.Rate < 0 || math.IsNaN(p.Rate) || math.IsInf(p.Rate, 0):
		return Plan{}, fmt.Errorf("--rate %v: must be a positive number of events per second, or 0 for no limit", p.Rate)
	case p.MaxTries < 1:
		return Plan{}, fmt.Errorf("--max-tries %d: must be at least 1", p.MaxTries)
	}
	return p, nil
}

// CheckClients checks a client count: a run's, and the one a prepare
// loads with.
func CheckClients(n int) error {
	if n < 1 || n > MaxClients {
		return fmt.Errorf("--threads %d: must be between 1 and %d", n, MaxClients)
	}
	return nil
}

package result

import (
	"fmt"
	"time"
)

// ClientCPU is the CPU the client process (dbmark) used over a run's
// measured window: what the load cost the machine it ran on, apart from
// the server's work. On a machine the server shares, every CPU second
// the client takes is one the server does not get.
type ClientCPU struct {
	UserS   float64 `json:"user_s"`
	SystemS float64 `json:"system_s"`
	// PerEventUS is user + system time over the window's events, in
	// microseconds.
	PerEventUS float64 `json:"per_event_us"`
	// MachineShare is user + system time over the window's length times
	// CPUs: the part of the machine the client took, from 0 to 1.
	MachineShare float64 `json:"machine_share"`
	CPUs         int     `json:"cpus"`
	// SharedMachine says the server runs on this machine too: a unix
	// socket, a loopback address or an embedded engine.
	SharedMachine bool `json:"shared_machine"`
	// IncludesEngine says the engine runs inside the client's process
	// (embedded): its work is counted here too, and cannot be told apart.
	IncludesEngine bool `json:"includes_engine,omitempty"`
	// Limited says the client took over ClientLimitedShare of a machine
	// it shares with a server: the server had that much less, so the
	// figure measures the client as much as the server.
	Limited bool `json:"limited,omitempty"`
}

// ClientLimitedShare is the share of a machine above which a client that
// shares it with its server is taken to limit the figure. sysbench and
// pgbench take a quarter to a third of a 2-CPU machine on their busiest
// point selects with 8 clients; above 40% the server is left with at most
// 60%, and a cheaper client would have reported a higher rate.
const ClientLimitedShare = 0.4

// NewClientCPU works out the client's cost from its user and system time
// over a window of secs seconds with events events, on cpus CPUs. nil
// when the window is empty.
func NewClientCPU(user, system time.Duration, secs float64, events int64, cpus int) *ClientCPU {
	if secs <= 0 || cpus <= 0 {
		return nil
	}
	c := &ClientCPU{UserS: user.Seconds(), SystemS: system.Seconds(), CPUs: cpus}
	total := c.UserS + c.SystemS
	if events > 0 {
		c.PerEventUS = total / float64(events) * 1e6
	}
	c.MachineShare = total / (secs * float64(cpus))
	return c
}

// Judge records where the server ran (shared: on this machine; embedded:
// in this process) and whether the client then limited the figure. An
// embedded engine's work is the process's own: no share of it is the
// client's alone, so it is never called limited.
func (c *ClientCPU) Judge(shared, embedded bool) {
	c.SharedMachine = shared || embedded
	c.IncludesEngine = embedded
	c.Limited = shared && !embedded && c.MachineShare > ClientLimitedShare
}

// Describe is the figure as every report shows it: "41.5 µs per event,
// 62% of 2 CPUs".
func (c *ClientCPU) Describe() string {
	return fmt.Sprintf("%.1f µs per event, %.0f%% of %d CPUs", c.PerEventUS, 100*c.MachineShare, c.CPUs)
}

// LimitedNote is the sentence every report gives a client-limited figure,
// with what to do about it; "" when it is not.
func (c *ClientCPU) LimitedNote() string {
	if c == nil || !c.Limited {
		return ""
	}
	return fmt.Sprintf("client-limited: dbmark itself used %.0f%% of this machine's %d CPUs (%.1f µs per event), which it shares with the server, so the server had that much less and the figure is partly the client's limit; run dbmark on another machine, or with fewer clients",
		100*c.MachineShare, c.CPUs, c.PerEventUS)
}

// Package saturation says what ran out during a run: which resource
// (CPU, a disk, memory, the engine's waits) was at its limit, for how
// much of the run, from the counters sampled on the run's time axis. It
// judges the machine the counters were read on; a remote server's own
// machine is not seen.
package saturation

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
)

// The limits. A sample is at a resource's limit when:
const (
	cpuBusy   = 85.0 // % of all CPUs busy (user, system, steal)
	iowaitHi  = 20.0 // % of CPU time waiting on I/O: the disks hold the CPUs up
	stealHi   = 10.0 // % of CPU time taken by the hypervisor
	diskUtil  = 90.0 // % of the time the device had a request in flight
	netUtil   = 90.0 // % of the link's speed, received or sent
	memUsed   = 0.95 // of the machine's memory in use (page cache apart)
	swapGrow  = 1 << 20
	minShare  = 0.10 // of the run at the limit, to be named
	minPoints = 3
)

// Find judges r's sampled counters: the resources at their limit, most of
// the run first. None when nothing was sampled or nothing ran out.
func Find(r *result.Result) []result.Limit {
	if r.Counters == nil {
		return nil
	}
	by := map[string]result.CounterSeries{}
	for _, s := range r.Counters.Series {
		by[s.Name] = s
	}
	from, to := measured(r)
	var out []result.Limit
	if l, ok := cpu(by, from, to); ok {
		out = append(out, l...)
	}
	out = append(out, disks(r.Counters.Series, from, to)...)
	if l, ok := memory(by, r, from, to); ok {
		out = append(out, l)
	}
	out = append(out, engineWaits(r.Counters.Series, from, to)...)
	out = append(out, network(r, from, to)...)
	// The limits, most of the run first; the notes after them.
	slices.SortStableFunc(out, func(a, b result.Limit) int {
		switch {
		case a.Share > b.Share:
			return -1
		case a.Share < b.Share:
			return 1
		}
		return 0
	})
	return out
}

// measured is the run's measured part on the series' axis: after the
// warm-up, to the last interval.
func measured(r *result.Result) (from, to float64) {
	to = math.Inf(1)
	for _, iv := range r.Series {
		if iv.Warmup {
			from = iv.T
		}
	}
	if n := len(r.Series); n > 0 {
		to = r.Series[n-1].T
	}
	return from, to
}

func window(s result.CounterSeries, from, to float64) []float64 {
	var out []float64
	for _, p := range s.Points {
		if p[0] > from && p[0] <= to+0.5 && !math.IsNaN(p[1]) {
			out = append(out, p[1])
		}
	}
	return out
}

// share is the fraction of vs for which at holds.
func share(vs []float64, at func(float64) bool) float64 {
	n := 0
	for _, v := range vs {
		if at(v) {
			n++
		}
	}
	return float64(n) / float64(len(vs))
}

func mean(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

func cpu(by map[string]result.CounterSeries, from, to float64) ([]result.Limit, bool) {
	user, sys, steal := window(by["os.cpu.user"], from, to), window(by["os.cpu.system"], from, to), window(by["os.cpu.steal"], from, to)
	iowait := window(by["os.cpu.iowait"], from, to)
	if len(user) < minPoints || len(sys) != len(user) {
		return nil, false
	}
	busy := make([]float64, len(user))
	for i := range user {
		busy[i] = user[i] + sys[i]
		if i < len(steal) {
			busy[i] += steal[i]
		}
	}
	var out []result.Limit
	if sh := share(busy, func(v float64) bool { return v >= cpuBusy }); sh >= minShare {
		out = append(out, result.Limit{Resource: "cpu", Share: sh,
			Detail: fmt.Sprintf("CPUs %.0f%% busy or more (user %.0f%%, system %.0f%% on average)", cpuBusy, mean(user), mean(sys))})
	}
	if len(iowait) >= minPoints {
		if sh := share(iowait, func(v float64) bool { return v >= iowaitHi }); sh >= minShare {
			out = append(out, result.Limit{Resource: "iowait", Share: sh,
				Detail: fmt.Sprintf("CPUs waiting on I/O (%.0f%% on average): the disks hold the work up", mean(iowait))})
		}
	}
	if len(steal) >= minPoints {
		if sh := share(steal, func(v float64) bool { return v >= stealHi }); sh >= minShare {
			out = append(out, result.Limit{Resource: "steal", Share: sh,
				Detail: fmt.Sprintf("the hypervisor took %.0f%% of the CPUs on average", mean(steal))})
		}
	}
	return out, true
}

func disks(series []result.CounterSeries, from, to float64) []result.Limit {
	var out []result.Limit
	for _, s := range series {
		dev, ok := strings.CutPrefix(s.Name, "os.disk.")
		if !ok || !strings.HasSuffix(dev, ".util") {
			continue
		}
		dev = strings.TrimSuffix(dev, ".util")
		util := window(s, from, to)
		if len(util) < minPoints {
			continue
		}
		sh := share(util, func(v float64) bool { return v >= diskUtil })
		if sh < minShare {
			continue
		}
		detail := fmt.Sprintf("disk %s busy (%.0f%% utilised on average", dev, mean(util))
		for _, q := range series {
			if q.Name == "os.disk."+dev+".await" {
				if aw := window(q, from, to); len(aw) > 0 {
					detail += fmt.Sprintf(", %.1f ms a request", mean(aw))
				}
			}
			if q.Name == "os.disk."+dev+".queue" {
				if qu := window(q, from, to); len(qu) > 0 {
					detail += fmt.Sprintf(", %.1f requests queued", mean(qu))
				}
			}
		}
		out = append(out, result.Limit{Resource: "disk " + dev, Share: sh, Detail: detail + ")"})
	}
	return out
}

func memory(by map[string]result.CounterSeries, r *result.Result, from, to float64) (result.Limit, bool) {
	swap := window(by["os.mem.swap_used"], from, to)
	if len(swap) >= minPoints && swap[len(swap)-1]-swap[0] >= swapGrow {
		return result.Limit{Resource: "memory", Share: 1,
			Detail: fmt.Sprintf("swapping: swap in use grew by %.0f MiB", (swap[len(swap)-1]-swap[0])/(1<<20))}, true
	}
	if r.Environment == nil || r.Environment.MemoryB == 0 {
		return result.Limit{}, false
	}
	used := window(by["os.mem.used"], from, to)
	if len(used) < minPoints {
		return result.Limit{}, false
	}
	total := float64(r.Environment.MemoryB)
	sh := share(used, func(v float64) bool { return v >= memUsed*total })
	if sh < minShare {
		return result.Limit{}, false
	}
	return result.Limit{Resource: "memory", Share: sh, Detail: fmt.Sprintf("%.0f%% of memory in use", 100*mean(used)/total)}, true
}

// engineWaits names the engine's wait counters (lock, buffer, log waits,
// as each engine calls them) that were above zero for most of the run.
func engineWaits(series []result.CounterSeries, from, to float64) []result.Limit {
	var out []result.Limit
	for _, s := range series {
		// A cluster's counters are each server's, named with its label
		// ("server2/db.row_lock_waits"): said with it.
		name, label := s.Name, ""
		if l, rest, ok := strings.Cut(name, "/"); ok && !strings.Contains(l, ".") {
			name, label = rest, l+" "
		}
		name, ok := strings.CutPrefix(name, "db.")
		if !ok || !waitCounter(name) {
			continue
		}
		name = label + name
		vs := window(s, from, to)
		if len(vs) < minPoints {
			continue
		}
		if sh := share(vs, func(v float64) bool { return v > 0 }); sh >= 0.5 {
			out = append(out, result.Limit{Resource: "engine", Share: sh,
				Detail: fmt.Sprintf("%s above zero (%.3g %s on average)", name, mean(vs), s.Unit)})
		}
	}
	return out
}

// waitCounter says whether an engine counter's name speaks of waits or
// locks as a word of its own (row_lock_waits, lock_timeouts), not inside
// another (blocks_hit).
func waitCounter(name string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r < 'a' || r > 'z' }) {
		switch w {
		case "wait", "waits", "waited", "lock", "locks", "deadlocks":
			return true
		}
	}
	return false
}

// network judges each NIC's traffic against its link speed, where the
// server is another machine. A server on this machine is reached over
// loopback or a unix socket, which is no limit: a note says so. A NIC
// whose driver reports no speed (most virtual ones) cannot be judged: a
// note says that too, with its busiest second.
func network(r *result.Result, from, to float64) []result.Limit {
	// Embedded, or files: no network between client and data. A server's
	// URL names a host, or a socket in its query.
	u, err := url.Parse(r.Target.URL)
	if err != nil || (u.Host == "" && u.Query().Get("host") == "" && u.Query().Get("socket") == "") {
		return nil
	}
	if c := r.Summary.Client; c != nil && c.SharedMachine {
		return []result.Limit{{Resource: "network", Note: true,
			Detail: "the network is not a limit: the server runs on this machine (loopback or a unix socket)"}}
	}
	speeds := map[string]uint64{}
	if r.Environment != nil && r.Environment.MachineFacts != nil {
		for _, n := range r.Environment.NICs {
			speeds[n.Name] = n.SpeedMbps
		}
	}
	type traffic struct{ rx, tx []float64 }
	nics := map[string]*traffic{}
	var names []string
	for _, s := range r.Counters.Series {
		rest, ok := strings.CutPrefix(s.Name, "os.net.")
		if !ok {
			continue
		}
		name, dir, ok := strings.Cut(rest, ".")
		if !ok || (dir != "rx_mib" && dir != "tx_mib") {
			continue
		}
		n := nics[name]
		if n == nil {
			n = &traffic{}
			nics[name] = n
			names = append(names, name)
		}
		if dir == "rx_mib" {
			n.rx = window(s, from, to)
		} else {
			n.tx = window(s, from, to)
		}
	}
	slices.Sort(names)
	var out []result.Limit
	for _, name := range names {
		n := nics[name]
		if len(n.rx) < minPoints || len(n.rx) != len(n.tx) {
			continue
		}
		// A link carries its speed each way at once: the busier way is
		// the one that runs out.
		busier := make([]float64, len(n.rx))
		for i := range n.rx {
			busier[i] = max(n.rx[i], n.tx[i])
		}
		speed := speeds[name]
		if speed == 0 {
			if peak := slices.Max(busier); peak >= 1 {
				out = append(out, result.Limit{Resource: "network " + name, Note: true,
					Detail: fmt.Sprintf("network %s not judged: its link speed is unknown (at most %.0f MiB/s one way)", name, peak)})
			}
			continue
		}
		// MiB/s to Mbit/s.
		pct := func(mib float64) float64 { return 100 * mib * 8 * (1 << 20) / 1e6 / float64(speed) }
		sh := share(busier, func(v float64) bool { return pct(v) >= netUtil })
		if sh < minShare {
			continue
		}
		out = append(out, result.Limit{Resource: "network " + name, Share: sh,
			Detail: fmt.Sprintf("network %s at its link speed (%d Mbit/s; %.0f%% of it on average, received %.0f MiB/s, sent %.0f MiB/s)",
				name, speed, pct(mean(busier)), mean(n.rx), mean(n.tx))})
	}
	return out
}

// Line is the verdict in one line: the limits, then the notes.
func Line(ls []result.Limit) string {
	var parts, notes []string
	for _, l := range ls {
		if l.Note {
			notes = append(notes, l.Detail)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%% of the run", l.Detail, l.Share*100))
	}
	if len(parts) == 0 {
		elsewhere := "the client, locks, the network, or the workload's own pace"
		if slices.ContainsFunc(ls, func(l result.Limit) bool { return l.Note && l.Resource == "network" }) {
			elsewhere = "the client, locks, or the workload's own pace"
		}
		parts = append(parts, "no sampled resource was at its limit: the limit is elsewhere ("+elsewhere+")")
	}
	return strings.Join(append(parts, notes...), "; ")
}

package probe

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/result"
)

// Check is what the preflight looks at.
type Check struct {
	Env *result.Environment
	// Server says the target is a database server (not an embedded
	// engine, not files), and Engine is its facts, when known.
	Server bool
	Engine *result.EngineFacts
	// Root is the filesystem root for the activity sample ("/" when empty).
	Root string
	// Sample is how long to watch the machine for other activity; 0 skips it.
	Sample time.Duration
}

// Thresholds above which other activity on the machine is worth a warning.
const (
	busyCPUPct   = 25.0 // of all CPUs, not counting dbmark itself
	busyDiskPct  = 20.0 // utilisation of one device
	swapUsedWarn = 16 << 20
	minFreeBytes = 1 << 30
)

// Preflight returns one line for each condition that would make the run's
// numbers misleading, each saying what to do about it.
func Preflight(ctx context.Context, c Check) []string {
	var w []string
	e := c.Env
	if e == nil || e.MachineFacts == nil {
		return nil
	}
	f := e.MachineFacts
	for _, r := range f.RAID {
		if r.SyncAction != "" && r.SyncAction != "idle" && r.SyncAction != "frozen" {
			w = append(w, fmt.Sprintf("RAID %s: a %s is running (%.0f%% done); disk throughput is lower until it ends (see /proc/mdstat)",
				r.Name, r.SyncAction, 100*r.SyncDone))
		}
		if r.Degraded > 0 {
			w = append(w, fmt.Sprintf("RAID %s is degraded (%d member(s) missing): its speed is not the array's", r.Name, r.Degraded))
		}
	}
	if f.SwapUsedBytes > swapUsedWarn {
		w = append(w, fmt.Sprintf("swap in use: %s; memory pressure will slow the run (free memory, or run swapoff -a && swapon -a)", BytesIEC(f.SwapUsedBytes)))
	}
	if f.Governor != "" && f.Governor != "performance" {
		w = append(w, fmt.Sprintf("CPU frequency governor is %q, not performance: clock speed varies with load (cpupower frequency-set -g performance)", f.Governor))
	}
	if e.ClockSrc != "" && e.ClockSrc != "tsc" && (e.Arch == "amd64" || e.Arch == "386") {
		w = append(w, fmt.Sprintf("clock source is %s, not tsc: every latency measurement costs more (%.0f ns per clock read)", e.ClockSrc, e.ClockNowNS))
	}
	if f.THP == "always" && c.Server {
		w = append(w, "transparent huge pages are set to always, which databases dislike (latency spikes from compaction): echo madvise > /sys/kernel/mm/transparent_hugepage/enabled")
	}
	if c.Engine != nil && c.Engine.CacheBytes > 0 && e.MemoryB > 0 && c.Engine.CacheBytes > e.MemoryB {
		w = append(w, fmt.Sprintf("the database cache (%s) is larger than the machine's memory (%s): the run will swap or fail", BytesIEC(c.Engine.CacheBytes), BytesIEC(e.MemoryB)))
	}
	for _, m := range f.Mounts {
		if m.TotalBytes == 0 {
			continue
		}
		need := uint64(minFreeBytes)
		if m.Role == "data_dir" && c.Engine != nil && c.Engine.DataBytes > need {
			need = c.Engine.DataBytes
		}
		if m.FreeBytes < need {
			w = append(w, fmt.Sprintf("little free disk for the %s %s: %s free on %s (need at least %s)",
				strings.ReplaceAll(m.Role, "_", " "), m.Path, BytesIEC(m.FreeBytes), m.MountPoint, BytesIEC(need)))
		}
	}
	if c.Sample > 0 {
		w = append(w, activity(ctx, c.Root, c.Sample)...)
	}
	return w
}

// Activity watches /proc under root for d and names other work on the
// machine: CPU that is not this process's, and busy disks. It is
// Preflight's last check (Check.Sample), for a caller that watches while
// it does other work of its own.
func Activity(ctx context.Context, root string, d time.Duration) []string {
	return activity(ctx, root, d)
}

// activity watches /proc for a moment and names other work on the machine:
// CPU that is not dbmark's, and busy disks.
func activity(ctx context.Context, root string, d time.Duration) []string {
	a, b, ok := watch(ctx, root, d)
	if !ok {
		return nil
	}
	return otherActivity(a, b)
}

// watch takes the OS counters under root now and d later; not ok when
// they cannot be read or ctx ends first.
func watch(ctx context.Context, root string, d time.Duration) (a, b OSSnapshot, ok bool) {
	r, err := NewOSReader(root)
	if err != nil {
		return a, b, false
	}
	a, _ = r.Snapshot()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return a, b, false
	case <-t.C:
	}
	b, _ = r.Snapshot()
	return a, b, true
}

// otherActivity names the work between two snapshots that was not this
// process's: CPU above busyCPUPct of all CPUs, devices above busyDiskPct.
func otherActivity(a, b OSSnapshot) []string {
	var w []string
	if dt := total(b.CPU) - total(a.CPU); dt > 0 {
		others := 100 * (busy(b.CPU) - busy(a.CPU) - (b.SelfCPU - a.SelfCPU)) / dt
		if others > busyCPUPct {
			w = append(w, fmt.Sprintf("other processes are using %.0f%% of the CPUs: the run competes with them (see top)", others))
		}
	}
	var busyDisks []string
	for _, rd := range OSRates(a, b) {
		if strings.HasSuffix(rd.Name, ".util") && rd.Value > busyDiskPct {
			dev := strings.TrimSuffix(strings.TrimPrefix(rd.Name, "os.disk."), ".util")
			busyDisks = append(busyDisks, fmt.Sprintf("%s %.0f%%", dev, rd.Value))
		}
	}
	if len(busyDisks) > 0 {
		sort.Strings(busyDisks)
		w = append(w, fmt.Sprintf("disks are busy before the run (%s): other I/O competes with it (see iotop)", strings.Join(busyDisks, ", ")))
	}
	return w
}

// BytesIEC formats a size with a binary unit.
func BytesIEC(b uint64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := uint64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}

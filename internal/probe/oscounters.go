package probe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"

	"github.com/dbmark/dbmark/internal/result"
)

// OSReader reads the OS counters the samplers and the preflight need:
// /proc/stat, /proc/diskstats, /proc/net/dev, /proc/meminfo and
// /proc/interrupts.
type OSReader struct {
	proc procfs.FS
	blk  blockdevice.FS
	live bool
	root string
}

// NewOSReader reads the counters under root ("/" when empty).
func NewOSReader(root string) (*OSReader, error) {
	o := Options{Root: root}
	pfs, err := procfs.NewFS(o.root() + "/proc")
	if err != nil {
		return nil, fmt.Errorf("read OS counters: %w", err)
	}
	bfs, err := blockdevice.NewFS(o.root()+"/proc", o.root()+"/sys")
	if err != nil {
		// diskstats needs only /proc; the sys path is checked but unused.
		bfs, err = blockdevice.NewFS(o.root()+"/proc", o.root()+"/proc")
		if err != nil {
			return nil, fmt.Errorf("read OS counters: %w", err)
		}
	}
	return &OSReader{proc: pfs, blk: bfs, live: o.live(), root: o.root()}, nil
}

// OSSnapshot is the OS counters at one moment.
type OSSnapshot struct {
	At      time.Time
	CPU     procfs.CPUStat // seconds, summed over CPUs
	NCPU    int
	Ctxt    uint64
	SelfCPU float64 // this process's user+system seconds (live machine only)
	Disks   map[string]blockdevice.IOStats
	// Net is each network interface's bytes, loopback apart.
	Net map[string]procfs.NetDevLine
	Mem procfs.Meminfo
	// Resched is the rescheduling interrupts of all CPUs, where HasResched
	// says they could be read (x86's RES line).
	Resched    uint64
	HasResched bool
	// Syncs are the md arrays running a check, resync, recovery or
	// reshape at this moment (/proc/mdstat): a weekly RAID check starts
	// whenever its timer says, in the middle of a run as well.
	Syncs []MDSync
	// Throttles is the CPUs' thermal throttling events so far (core and
	// package), where HasThrottles says the kernel counts them.
	Throttles    uint64
	HasThrottles bool
}

// MDSync is one md array's running sync.
type MDSync struct {
	Name, Action string
	Done         float64 // fraction
	SpeedKiBs    float64
	LeftS        float64 // the kernel's estimate of the time to its end
}

// Snapshot reads the counters now. Parts that cannot be read are left out
// and reported in the error; the snapshot is still usable.
func (o *OSReader) Snapshot() (OSSnapshot, error) {
	s := OSSnapshot{At: time.Now()}
	var firstErr error
	keep := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	if st, err := o.proc.Stat(); err == nil {
		s.CPU, s.NCPU, s.Ctxt = st.CPUTotal, len(st.CPU), st.ContextSwitches
	} else {
		keep(err)
	}
	if ds, err := o.blk.ProcDiskstats(); err == nil {
		s.Disks = make(map[string]blockdevice.IOStats, len(ds))
		for _, d := range ds {
			if !virtualDisk(d.DeviceName) || isArray(d.DeviceName) {
				s.Disks[d.DeviceName] = d.IOStats
			}
		}
	} else {
		keep(err)
	}
	if nd, err := o.proc.NetDev(); err == nil {
		s.Net = make(map[string]procfs.NetDevLine, len(nd))
		for name, l := range nd {
			if name != "lo" {
				s.Net[name] = l
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) { // a sandbox without it: no network counters
		keep(err)
	}
	if mi, err := o.proc.Meminfo(); err == nil {
		s.Mem = mi
	} else {
		keep(err)
	}
	s.Resched, s.HasResched = o.reschedInterrupts()
	if mds, err := o.proc.MDStat(); err == nil { // no md driver: no file, no arrays
		for _, m := range mds {
			if action, ok := syncActions[m.ActivityState]; ok {
				s.Syncs = append(s.Syncs, MDSync{Name: m.Name, Action: action, Done: m.BlocksSyncedPct / 100,
					SpeedKiBs: m.BlocksSyncedSpeed, LeftS: m.BlocksSyncedFinishTime * 60})
			}
		}
	}
	s.Throttles, s.HasThrottles = o.throttles()
	if o.live {
		if p, err := o.proc.Proc(os.Getpid()); err == nil {
			if st, err := p.Stat(); err == nil {
				s.SelfCPU = st.CPUTime()
			}
		}
	}
	return s, firstErr
}

// reschedInterrupts sums every CPU's rescheduling interrupts (x86's RES
// line of /proc/interrupts). One is sent when a task woken on one CPU must
// run on another that is busy or halted, so their rate tells how often a
// run's client and server woke each other across CPUs: on a machine they
// share, runs of the same tool that cross more are the slower ones.
func (o *OSReader) reschedInterrupts() (uint64, bool) {
	p, err := o.proc.Self()
	if err != nil {
		return 0, false
	}
	irqs, err := p.Interrupts()
	if err != nil {
		return 0, false
	}
	res, ok := irqs["RES"]
	if !ok {
		return 0, false
	}
	var n uint64
	for _, v := range res.Values {
		c, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, false
		}
		n += c
	}
	return n, true
}

// syncActions are /proc/mdstat's states of an array that is syncing, and
// the name /sys gives the same action.
var syncActions = map[string]string{"checking": "check", "resyncing": "resync", "recovering": "recover", "reshaping": "reshape"}

// throttles sums the thermal throttling events of every CPU, core and
// package, from /sys/devices/system/cpu/cpu*/thermal_throttle.
func (o *OSReader) throttles() (uint64, bool) {
	files, _ := filepath.Glob(filepath.Join(o.root, "sys/devices/system/cpu/cpu[0-9]*/thermal_throttle/*_throttle_count"))
	var n uint64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, false
		}
		n += v
	}
	return n, len(files) > 0
}

// isArray says a device is an md or dm device: their counters are what a
// database sees, so the samplers keep them.
func isArray(name string) bool {
	return len(name) > 2 && (name[:2] == "md" || name[:3] == "dm-")
}

// Reading is one counter's value over an interval.
type Reading struct {
	Name  string
	Unit  string
	Kind  string // result.CounterRate or result.CounterGauge
	Value float64
}

func busy(c procfs.CPUStat) float64 {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
}

func total(c procfs.CPUStat) float64 { return busy(c) + c.Idle + c.Iowait }

// OSRates turns two snapshots into readings: CPU shares in percent of all
// CPUs, per-device I/O as iostat -x computes it, memory as gauges.
func OSRates(a, b OSSnapshot) []Reading {
	secs := b.At.Sub(a.At).Seconds()
	if secs <= 0 {
		return nil
	}
	var out []Reading
	rate := func(name, unit string, v float64) {
		out = append(out, Reading{Name: name, Unit: unit, Kind: result.CounterRate, Value: v})
	}
	gauge := func(name, unit string, v float64) {
		out = append(out, Reading{Name: name, Unit: unit, Kind: result.CounterGauge, Value: v})
	}
	if dt := total(b.CPU) - total(a.CPU); dt > 0 && b.NCPU > 0 {
		// Within 0 and 100: the counters are seconds in floating point, so
		// one part's difference can exceed the total's by a rounding.
		pct := func(x, y float64) float64 { return min(max(100*(y-x)/dt, 0), 100) }
		rate("os.cpu.user", "%", pct(a.CPU.User+a.CPU.Nice, b.CPU.User+b.CPU.Nice))
		rate("os.cpu.system", "%", pct(a.CPU.System+a.CPU.IRQ+a.CPU.SoftIRQ, b.CPU.System+b.CPU.IRQ+b.CPU.SoftIRQ))
		rate("os.cpu.iowait", "%", pct(a.CPU.Iowait, b.CPU.Iowait))
		rate("os.cpu.steal", "%", pct(a.CPU.Steal, b.CPU.Steal))
		rate("os.cpu.idle", "%", pct(a.CPU.Idle, b.CPU.Idle))
	}
	if b.Ctxt >= a.Ctxt && b.Ctxt > 0 {
		rate("os.context_switches", "/s", float64(b.Ctxt-a.Ctxt)/secs)
	}
	if a.HasResched && b.HasResched && b.Resched >= a.Resched {
		rate("os.resched_interrupts", "/s", float64(b.Resched-a.Resched)/secs)
	}
	for name, y := range b.Disks {
		x, ok := a.Disks[name]
		if !ok {
			continue
		}
		ios := float64(y.ReadIOs+y.WriteIOs) - float64(x.ReadIOs+x.WriteIOs)
		rate("os.disk."+name+".reads", "/s", float64(y.ReadIOs-x.ReadIOs)/secs)
		rate("os.disk."+name+".writes", "/s", float64(y.WriteIOs-x.WriteIOs)/secs)
		rate("os.disk."+name+".read_mib", "MiB/s", float64(y.ReadSectors-x.ReadSectors)*512/(1<<20)/secs)
		rate("os.disk."+name+".write_mib", "MiB/s", float64(y.WriteSectors-x.WriteSectors)*512/(1<<20)/secs)
		await := 0.0
		if ios > 0 {
			await = float64(y.ReadTicks+y.WriteTicks-x.ReadTicks-x.WriteTicks) / ios
		}
		rate("os.disk."+name+".await", "ms", await)
		rate("os.disk."+name+".util", "%", min(100, float64(y.IOsTotalTicks-x.IOsTotalTicks)/(secs*10)))
		rate("os.disk."+name+".queue", "requests", float64(y.WeightedIOTicks-x.WeightedIOTicks)/(secs*1000))
	}
	if a.HasThrottles && b.HasThrottles && b.Throttles >= a.Throttles {
		rate("os.cpu.throttles", "/s", float64(b.Throttles-a.Throttles)/secs)
	}
	for _, y := range b.Syncs {
		gauge("os.raid."+y.Name+".sync_pct", "%", 100*y.Done)
		gauge("os.raid."+y.Name+".sync_speed", "MiB/s", y.SpeedKiBs/1024)
		gauge("os.raid."+y.Name+".sync_left", "s", y.LeftS)
	}
	for name, y := range b.Net {
		x, ok := a.Net[name]
		// An interface that never carried a byte (down, unused) is left
		// out, as it would only add flat series.
		if !ok || y.RxBytes+y.TxBytes == 0 || y.RxBytes < x.RxBytes || y.TxBytes < x.TxBytes {
			continue
		}
		rate("os.net."+name+".rx_mib", "MiB/s", float64(y.RxBytes-x.RxBytes)/(1<<20)/secs)
		rate("os.net."+name+".tx_mib", "MiB/s", float64(y.TxBytes-x.TxBytes)/(1<<20)/secs)
	}
	m := b.Mem
	if m.MemTotalBytes != nil && m.MemAvailableBytes != nil {
		gauge("os.mem.used", "bytes", float64(*m.MemTotalBytes-*m.MemAvailableBytes))
	}
	if m.CachedBytes != nil {
		gauge("os.mem.page_cache", "bytes", float64(*m.CachedBytes))
	}
	if m.DirtyBytes != nil {
		gauge("os.mem.dirty", "bytes", float64(*m.DirtyBytes))
	}
	if m.SwapTotalBytes != nil && m.SwapFreeBytes != nil {
		gauge("os.mem.swap_used", "bytes", float64(*m.SwapTotalBytes-*m.SwapFreeBytes))
	}
	return out
}

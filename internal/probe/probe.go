// Package probe collects the facts about the machine that every result
// carries (CPU, memory, kernel, virtualization, disks, RAID, LVM, mounts),
// the counters of the OS that the samplers read during a run, and the
// preflight warnings. Every reader takes a filesystem root, so the tests run
// them on fixture trees of /proc and /sys; a fact that cannot be read is
// recorded as unknown with the reason, never as a failure.
package probe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
	"github.com/prometheus/procfs/sysfs"

	"github.com/dbmark/dbmark/internal/result"
)

// Dir is a directory whose mount is a fact: where the run works, where the
// database keeps its data.
type Dir struct {
	Role string // "working_dir", "data_dir"
	Path string
}

// Options say where to look.
type Options struct {
	// Root is the filesystem root holding proc/, sys/ and etc/ ("/" when
	// empty); the tests point it at fixture trees.
	Root string
	// Dirs are the directories whose mounts to record.
	Dirs   []Dir
	Logger *slog.Logger
}

func (o Options) root() string {
	if o.Root == "" {
		return "/"
	}
	return o.Root
}

// live says whether the probe reads this machine rather than a fixture: only
// then are the process's own numbers (CPUs, clock cost, host name) facts of
// the machine described.
func (o Options) live() bool { return o.root() == "/" }

// collector gathers facts and the reasons for the missing ones.
type collector struct {
	root string
	f    *result.MachineFacts
	e    *result.Environment
	log  *slog.Logger
	proc *procfs.FS
	sys  *sysfs.FS
	blk  *blockdevice.FS
}

// miss records a fact as unknown with the reason.
func (c *collector) miss(fact string, err error) {
	reason := err.Error()
	if errors.Is(err, os.ErrNotExist) {
		reason = "not available here: " + reason
	} else if errors.Is(err, os.ErrPermission) {
		reason = "no permission: " + reason
	}
	reason = strings.ReplaceAll(reason, c.root, "/")
	reason = strings.ReplaceAll(reason, "//", "/")
	c.f.Unknown[fact] = reason
	c.log.Debug("fact unknown", "fact", fact, "reason", reason)
}

func (c *collector) path(p ...string) string {
	return filepath.Join(append([]string{c.root}, p...)...)
}

// readTrim reads a small text file under the root.
func (c *collector) readTrim(p ...string) (string, error) {
	b, err := os.ReadFile(c.path(p...))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// Machine returns the machine's facts. It never fails: what it cannot read
// is listed in Unknown.
func Machine(ctx context.Context, opts Options) *result.Environment {
	began := time.Now()
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &result.Environment{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoMaxProcs: runtime.GOMAXPROCS(0)}
	f := &result.MachineFacts{Unknown: map[string]string{}}
	e.MachineFacts = f
	c := &collector{root: opts.root(), f: f, e: e, log: log}
	if pfs, err := procfs.NewFS(c.path("proc")); err == nil {
		c.proc = &pfs
	} else {
		c.miss("proc", err)
	}
	if sfs, err := sysfs.NewFS(c.path("sys")); err == nil {
		c.sys = &sfs
	} else {
		c.miss("sys", err)
	}
	if bfs, err := blockdevice.NewFS(c.path("proc"), c.path("sys")); err == nil {
		c.blk = &bfs
	}
	if opts.live() {
		e.Hostname, _ = os.Hostname()
		e.ClockNowNS = clockCost()
	}
	for _, step := range []func(){c.kernel, c.cpu, c.memory, c.clock, c.thp, c.virtualization, c.disks, c.nics, c.raid, c.lvm} {
		if ctx.Err() != nil {
			break
		}
		step()
	}
	c.mounts(opts.Dirs)
	if len(f.Unknown) == 0 {
		f.Unknown = nil
	}
	f.ProbeMS = float64(time.Since(began).Microseconds()) / 1000
	return e
}

func (c *collector) kernel() {
	if v, err := c.readTrim("proc", "sys", "kernel", "osrelease"); err == nil {
		c.e.Kernel = v
	} else {
		c.miss("kernel", err)
	}
	c.f.Distribution = c.osRelease()
}

// osRelease is PRETTY_NAME from os-release, where distributions state it.
func (c *collector) osRelease() string {
	for _, p := range []string{"etc/os-release", "usr/lib/os-release"} {
		b, err := os.ReadFile(c.path(p))
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				return strings.Trim(v, `"'`)
			}
		}
	}
	c.miss("distribution", fmt.Errorf("no os-release file with PRETTY_NAME: %w", os.ErrNotExist))
	return ""
}

// clockCost measures what one monotonic clock reading costs, because every
// latency recorded pays it twice. The cheapest of a few short batches is
// the cost itself, without the interrupts and preemptions that land in
// some batch. 8,000 reads are enough: 200,000 in one batch cost every run
// 9 ms of CPU before it began.
func clockCost() float64 {
	const batches, n = 8, 1000
	best := math.MaxFloat64
	for range batches {
		start := time.Now()
		var last time.Time
		for range n {
			last = time.Now()
		}
		best = min(best, float64(last.Sub(start).Nanoseconds())/n)
	}
	return best
}

package cli

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/probe"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/sampler"
	"github.com/dbmark/dbmark/internal/target"
)

// activitySample is how long the preflight watches the machine for other
// work: long enough to see a busy disk, short enough for a quick start.
const activitySample = 200 * time.Millisecond

// contextFlags are the run options about the context of the numbers.
type contextFlags struct {
	strict         bool
	sampleInterval seconds
	show           []string
	root           string
	waitIdle       time.Duration
}

func (c *contextFlags) bind(fs *pflag.FlagSet) {
	fs.BoolVar(&c.strict, "strict", false, "refuse to run while a preflight warning stands (RAID check, swap in use, busy machine...)")
	fs.Var(&c.sampleInterval, "sample-interval", "read OS and database counters this often (default: the report interval, or 1s; 0: off)")
	fs.StringSliceVar(&c.show, "show", nil, "counters to add to the live line, e.g. iowait,util,dirty_pages (see docs/sysinfo.md)")
	fs.DurationVar(&c.waitIdle, "wait-idle", 0, "before the run (each cell of a sweep), wait up to this long for the machine to be idle: no RAID sync, no other busy CPU or disk (e.g. 10m; 0: don't wait)")
	bindProbeRoot(fs, &c.root)
}

// bindProbeRoot binds --probe-root: a host's root mounted inside a
// container, or a saved copy of /proc and /sys.
func bindProbeRoot(fs *pflag.FlagSet, root *string) {
	fs.StringVar(root, "probe-root", "/", "read /proc, /sys and /etc under this directory (a host's root mounted in a container)")
}

// interval is the sampling interval: the flag's when given, else the report
// interval, else a second. Zero means off.
func (c *contextFlags) interval(fs *pflag.FlagSet, report time.Duration) time.Duration {
	if fs.Changed("sample-interval") {
		return time.Duration(c.sampleInterval)
	}
	if report > 0 {
		return report
	}
	return time.Second
}

// localDirs are the directories whose mounts matter: the working directory
// and, when the database runs on this machine, its data directory.
func localDirs(tg target.Target, dataDir string) []probe.Dir {
	var dirs []probe.Dir
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, probe.Dir{Role: "working_dir", Path: wd})
	}
	if dataDir != "" && isLocal(tg) {
		if _, err := os.Stat(dataDir); err == nil {
			dirs = append(dirs, probe.Dir{Role: "data_dir", Path: dataDir})
		}
	}
	return dirs
}

// isLocal says whether the target's server runs on this machine: an
// embedded file, a unix socket or a loopback address.
func isLocal(tg target.Target) bool {
	if d := tg.Dialect(); d != nil && d.Embedded() {
		return true
	}
	u, err := url.Parse(tg.Redacted())
	if err != nil {
		return false
	}
	q := u.Query()
	if strings.HasPrefix(q.Get("host"), "/") || q.Get("socket") != "" {
		return true
	}
	h := u.Hostname()
	if h == "" || h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// isServer says whether the target is a database server: it has a
// dialect (files have none) and is not embedded.
func isServer(tg target.Target) bool {
	d := tg.Dialect()
	return d != nil && !d.Embedded()
}

// addContext fills the result's machine and engine facts and runs the
// preflight. With --strict a standing warning refuses the run.
func (a *App) addContext(ctx context.Context, res *result.Result, tg target.Target, c *contextFlags) error {
	if c.waitIdle > 0 {
		say := func(s string) { fmt.Fprintln(a.notes(), s) }
		waited, busy := probe.WaitIdle(ctx, c.root, c.waitIdle, say)
		switch {
		case len(busy) > 0:
			say(fmt.Sprintf("the machine is still busy after --wait-idle %s; running all the same", c.waitIdle))
		case waited > 2*time.Second:
			say(fmt.Sprintf("the machine was idle after %s", waited.Round(time.Second)))
		}
	}
	began := time.Now()
	// The activity sample watches the machine while the facts are read,
	// and the run starts a sample's length sooner. dbmark's own CPU is
	// not other work; a server on this machine answers the facts' few
	// queries in milliseconds, far below the share of the CPUs that a
	// warning needs.
	activity := make(chan []string, 1)
	go func() { activity <- probe.Activity(ctx, c.root, activitySample) }()
	facts := engineFacts(ctx, tg, a)
	res.Target.EngineFacts = facts
	env := probe.Machine(ctx, probe.Options{Root: c.root, Dirs: localDirs(tg, res.Target.DataDir), Logger: a.Logger})
	res.Environment = env
	res.Warnings = append(res.Warnings, probe.Preflight(ctx, probe.Check{Env: env, Server: isServer(tg), Engine: facts, Root: c.root})...)
	if busy := <-activity; env != nil && env.MachineFacts != nil {
		res.Warnings = append(res.Warnings, busy...) // as Preflight: only on a machine it read
	}
	// The settings as the run found them (a --server-set value included).
	if us := a.Targets.Unsafe(res.Target.Kind, res.Target.Settings); len(us) > 0 {
		res.Warnings = append(res.Warnings, target.DescribeUnsafe(us))
	}
	env.ProbeMS = float64(time.Since(began).Microseconds()) / 1000
	for _, w := range res.Warnings {
		fmt.Fprintf(a.notes(), "warning: %s\n", w)
	}
	if c.strict && len(res.Warnings) > 0 {
		return withCode(ExitUsage, fmt.Errorf("--strict: %d preflight warning(s) stand, the first: %s (fix them, or run without --strict)", len(res.Warnings), res.Warnings[0]))
	}
	return nil
}

// engineFacts asks the target for its facts; an engine that cannot say is
// logged, not fatal.
func engineFacts(ctx context.Context, tg target.Target, a *App) *result.EngineFacts {
	fc, ok := tg.(target.Facter)
	if !ok {
		return nil
	}
	f, err := fc.Facts(ctx)
	if err != nil {
		a.Logger.Warn("could not read the engine's facts", "err", err)
		return nil
	}
	return f
}

// startSampler starts the counter samplers, or returns nil when off. A
// sampler driven by the live lines samples at their ticks.
func (a *App) startSampler(ctx context.Context, tg target.Target, more []target.Target, every time.Duration, driven bool, root string) *sampler.Sampler {
	if every <= 0 {
		return nil
	}
	cfg := sampler.Config{Interval: every, Root: root, Logger: a.Logger, Driven: driven, Servers: serverCounters(tg, more)}
	if cs, ok := tg.(target.CounterSource); ok {
		cfg.DB = cs
	} else {
		cfg.NoDB = tg.Kind() + ": the driver exposes no server counters"
	}
	return sampler.Start(ctx, cfg)
}

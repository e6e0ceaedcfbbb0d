package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbmark/dbmark/internal/probe"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// sysinfo is what `dbmark sysinfo` reports.
type sysinfo struct {
	Environment *result.Environment `json:"environment"`
	Target      *result.Target      `json:"target,omitempty"`
	Warnings    []string            `json:"warnings,omitempty"`
}

func (a *App) sysinfoCmd() *cobra.Command {
	var asJSON bool
	var root string
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "sysinfo",
		Short: "Print the machine's facts (and the engine's, with --target) and the preflight warnings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, err := a.sysinfo(cmd.Context(), f, root)
			if err != nil {
				return err
			}
			if asJSON {
				b, err := json.MarshalIndent(info, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(a.Stdout, "%s\n", b)
				return err
			}
			writeSysinfo(a.Stdout, info)
			return nil
		},
	}
	cmd.Flags().StringVar(&f.target, "target", "", "also report this database: postgres://..., mysql://..., sqlite:///path")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of text")
	bindProbeRoot(cmd.Flags(), &root)
	return cmd
}

func (a *App) sysinfo(ctx context.Context, f *runFlags, root string) (*sysinfo, error) {
	began := time.Now()
	info := &sysinfo{}
	var tg target.Target
	var facts *result.EngineFacts
	if f.target != "" {
		var err error
		if tg, _, err = a.openTarget(ctx, workload.Spec{}, f, 0, nil); err != nil {
			return nil, err
		}
		defer tg.Close()
		eng, err := tg.Inspect(ctx)
		if err != nil {
			return nil, setupError(ctx, err)
		}
		facts = engineFacts(ctx, tg, a)
		info.Target = &result.Target{Kind: tg.Kind(), URL: tg.Redacted(), Engine: eng.Name, Version: eng.Version,
			Driver: eng.Driver, DataDir: eng.DataDir, EngineFacts: facts}
	}
	var dirs []probe.Dir
	server := false
	if tg != nil {
		dirs = localDirs(tg, info.Target.DataDir)
		server = isServer(tg)
	} else if wd, err := os.Getwd(); err == nil {
		dirs = []probe.Dir{{Role: "working_dir", Path: wd}}
	}
	info.Environment = probe.Machine(ctx, probe.Options{Root: root, Dirs: dirs, Logger: a.Logger})
	info.Warnings = probe.Preflight(ctx, probe.Check{Env: info.Environment, Server: server, Engine: facts, Root: root, Sample: activitySample})
	info.Environment.ProbeMS = float64(time.Since(began).Microseconds()) / 1000
	return info, nil
}

// writeSysinfo prints the facts for people, one fact a line.
func writeSysinfo(w io.Writer, info *sysinfo) {
	e := info.Environment
	m := e.MachineFacts
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "  %-16s %s\n", k+":", v)
		}
	}
	fmt.Fprintln(w, "Machine")
	line("host", e.Hostname)
	line("system", strings.TrimSpace(m.Distribution+", kernel "+e.Kernel+", "+e.Arch))
	line("virtualization", m.Virtualization)
	if m.Container != "none" {
		line("container", m.Container)
	}
	line("hardware", strings.TrimSpace(m.SystemVendor+" "+m.ProductName))
	line("instance type", m.InstanceType)
	line("cpu", fmt.Sprintf("%s: %d socket(s), %d core(s), %d thread(s)", e.CPUModel, m.Sockets, m.Cores, e.CPUs))
	line("cpu flags", strings.Join(m.CPUFlags, " "))
	if m.CPUMaxMHz > 0 {
		line("frequency", fmt.Sprintf("%.0f MHz now, %.0f MHz max", m.CPUMHz, m.CPUMaxMHz))
	} else if m.CPUMHz > 0 {
		line("frequency", fmt.Sprintf("%.0f MHz", m.CPUMHz))
	}
	line("governor", m.Governor)
	line("memory", fmt.Sprintf("%s, swap %s (%s used)", probe.BytesIEC(e.MemoryB), probe.BytesIEC(m.SwapBytes), probe.BytesIEC(m.SwapUsedBytes)))
	line("clock", fmt.Sprintf("%s, %.1f ns per read", e.ClockSrc, e.ClockNowNS))
	line("huge pages", m.THP)
	for _, d := range m.Disks {
		kind := "SSD"
		if d.Rotational != nil && *d.Rotational {
			kind = "rotational"
		}
		line("disk "+d.Name, fmt.Sprintf("%s %s %s, scheduler %s, nr_requests %d, read-ahead %d KiB",
			d.Model, probe.BytesIEC(d.SizeBytes), kind, d.Scheduler, d.QueueDepth, d.ReadAheadK))
	}
	for _, r := range m.RAID {
		s := fmt.Sprintf("%s of %s, state %s, sync %s", r.Level, strings.Join(r.Members, " "), r.State, r.SyncAction)
		if r.ChunkBytes > 0 {
			s += ", chunk " + probe.BytesIEC(r.ChunkBytes)
		}
		line("raid "+r.Name, s)
	}
	for _, l := range m.LVM {
		line("lvm "+l.Device, l.Name+" on "+strings.Join(l.Slaves, " "))
	}
	for _, mt := range m.Mounts {
		used := ""
		if mt.UsedBytes > 0 {
			used = ", " + probe.BytesIEC(mt.UsedBytes) + " in it"
		}
		line(strings.ReplaceAll(mt.Role, "_", " "), fmt.Sprintf("%s on %s (%s %s) %s, %s free of %s%s", mt.Path, mt.MountPoint, mt.Device, mt.FSType,
			strings.Join(mt.Options, ","), probe.BytesIEC(mt.FreeBytes), probe.BytesIEC(mt.TotalBytes), used))
	}
	writeUnknown(w, m.Unknown)
	if t := info.Target; t != nil {
		fmt.Fprintf(w, "\nEngine\n")
		line("engine", t.Engine+" "+t.Version)
		line("target", t.URL)
		line("data dir", t.DataDir)
		if f := t.EngineFacts; f != nil {
			line("cache", probe.BytesIEC(f.CacheBytes))
			line("data", probe.BytesIEC(f.DataBytes))
			for _, k := range sortedKeys(f.Sizes) {
				line(k, f.Sizes[k])
			}
			if len(f.NonDefault) > 0 {
				fmt.Fprintf(w, "  changed from the default:\n")
				for _, k := range sortedKeys(f.NonDefault) {
					nd := f.NonDefault[k]
					fmt.Fprintf(w, "    %-36s %s (default %s; %s)\n", k, nd.Value, nd.Default, nd.Source)
				}
			}
		}
	}
	fmt.Fprintf(w, "\nPreflight\n")
	if len(info.Warnings) == 0 {
		fmt.Fprintln(w, "  no warnings")
	}
	for _, x := range info.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", x)
	}
	fmt.Fprintf(w, "\n(probed in %.0f ms)\n", e.ProbeMS)
}

func writeUnknown(w io.Writer, u map[string]string) {
	if len(u) == 0 {
		return
	}
	fmt.Fprintln(w, "  unknown:")
	for _, k := range sortedKeys(u) {
		fmt.Fprintf(w, "    %-20s %s\n", k, u[k])
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

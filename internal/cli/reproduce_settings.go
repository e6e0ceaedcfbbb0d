package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/dbmark/dbmark/internal/redact"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
)

// settingDiff is an engine setting whose value on the reproducer's server
// differs from the published run's.
type settingDiff struct {
	Name, Here, There string
	// Size: one of the settings the engine names as those that matter
	// most for performance (EngineFacts.Sizes: caches, logs, flushing).
	Size bool
}

// identitySettings name a server or its build, not how it runs: they differ
// between any two servers and explain no ratio.
var identitySettings = []string{"port", "version", "hostname", "server_uuid", "server_id", "pid_file", "cluster_name", "application_name"}

// settingDiffs compares the engine settings of the server a reproduction
// runs on (eng, facts) with those the published run recorded: every
// setting either side has away from its default, or among its sizes.
// Settings that name the server (its port, version, paths) are left out.
// Between different engines nothing is compared, and note says so.
func settingDiffs(orig *result.Result, kind string, eng target.Engine, facts *result.EngineFacts) (diffs []settingDiff, note string) {
	if orig.Target.Kind != kind {
		return nil, fmt.Sprintf("the original ran on %s, this target is %s: their engine settings are not compared", orig.Target.Engine, eng.Name)
	}
	names := map[string]bool{}
	sizes := map[string]bool{}
	for _, f := range []*result.EngineFacts{orig.Target.EngineFacts, facts} {
		if f == nil {
			continue
		}
		for k := range f.NonDefault {
			names[k] = true
		}
		for k := range f.Sizes {
			names[k], sizes[k] = true, true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(names)) {
		there, here := orig.Target.Settings[k], eng.Settings[k]
		if there == "" || here == "" || there == here || identity(k) || pathLike(there) || pathLike(here) {
			continue
		}
		diffs = append(diffs, settingDiff{Name: k, Here: here, There: there, Size: sizes[k]})
	}
	// The sizes first: they are the likelier explanations.
	slices.SortStableFunc(diffs, func(a, b settingDiff) int {
		switch {
		case a.Size == b.Size:
			return 0
		case a.Size:
			return -1
		}
		return 1
	})
	return diffs, ""
}

func identity(name string) bool {
	n := strings.ToLower(name)
	return slices.ContainsFunc(identitySettings, func(s string) bool { return strings.Contains(n, s) })
}

// pathLike says whether a setting's value is a path, or was one before
// the run was published.
func pathLike(v string) bool {
	return strings.HasPrefix(v, "/") || strings.Contains(v, redact.Mask) || strings.Contains(v, ":\\")
}

// writeSettingDiffs says, before a reproduction runs, which engine settings
// of this server differ from the original's, and how to run with the
// original's.
func writeSettingDiffs(w io.Writer, diffs []settingDiff, note string, applied bool) {
	switch {
	case note != "":
		fmt.Fprintf(w, "note: %s\n", note)
		return
	case len(diffs) == 0:
		fmt.Fprintln(w, "engine settings: the same as the original's where either differs from its default")
		return
	}
	fmt.Fprintf(w, "engine settings that differ from the original's (here -> original):\n")
	for _, d := range diffs {
		mark := ""
		if d.Size {
			mark = "  (a size that matters for performance)"
		}
		fmt.Fprintf(w, "  %s: %s -> %s%s\n", d.Name, d.Here, d.There, mark)
	}
	if applied {
		fmt.Fprintln(w, "the original's values are set for the run (--apply-settings) and restored after it")
	} else {
		fmt.Fprintln(w, "to run with the original's values (restored afterwards): add --apply-settings (and --restart-cmd CMD for those that need a restart)")
	}
}

// serverSetArgs are the --server-set options that give the server the
// original's values.
func serverSetArgs(diffs []settingDiff) []string {
	var out []string
	for _, d := range diffs {
		out = append(out, "--server-set="+d.Name+"="+d.There)
	}
	return out
}

// inspectTarget reads the engine and its facts of the target a
// reproduction will run on.
func (a *App) inspectTarget(ctx context.Context, raw string) (string, target.Engine, *result.EngineFacts, error) {
	if raw == "" {
		u, err := embeddedURL()
		if err != nil {
			return "", target.Engine{}, nil, err
		}
		raw = u
	}
	tg, err := a.Targets.Open(ctx, raw, target.Options{Logger: a.Logger})
	if err != nil {
		return "", target.Engine{}, nil, err
	}
	defer tg.Close()
	eng, err := tg.Inspect(ctx)
	if err != nil {
		return "", target.Engine{}, nil, fmt.Errorf("read the target's settings: %w", err)
	}
	return tg.Kind(), eng, engineFacts(ctx, tg, a), nil
}

// writeRatio says, after a reproduction, how it came out against the
// original, and which differing settings may explain a ratio away from 1.
func writeRatio(w io.Writer, orig, rep *result.Result, diffs []settingDiff, applied bool) {
	if orig.Summary.Headline <= 0 || rep.Summary.Headline <= 0 {
		return
	}
	ratio := rep.Summary.Headline / orig.Summary.Headline
	fmt.Fprintf(w, "the reproduction: %.2fx the original's %s (%.2f here, %.2f there)\n", ratio, orig.Workload.Headline, rep.Summary.Headline, orig.Summary.Headline)
	if ratio > 0.9 && ratio < 1.1 || applied {
		return
	}
	if len(diffs) == 0 {
		fmt.Fprintln(w, "no engine setting differs: the difference lies elsewhere (the machine, its storage, what else ran on it)")
		return
	}
	names := make([]string, len(diffs))
	for i, d := range diffs {
		names[i] = d.Name
	}
	fmt.Fprintf(w, "settings that differ and may explain it: %s (run again with --apply-settings to tell)\n", strings.Join(names, ", "))
}

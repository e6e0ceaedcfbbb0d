package cli

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/result"
)

// TestRunOnlyOptions holds result.RunOnly (what a reproduction script
// leaves out of prepare) to the commands: for every workload, the options
// run takes and prepare does not are exactly those.
func TestRunOnlyOptions(t *testing.T) {
	want := result.RunOnlyOptions()
	sort.Strings(want)
	app := NewApp(nil, nil, nil)
	var union []string
	for _, w := range app.Workloads.Names() {
		run, prep := flagNames(app, "run", w), flagNames(app, "prepare", w)
		if run == nil || prep == nil {
			continue // a workload with no prepare (iibench) has nothing to leave out
		}
		for _, f := range run {
			if slices.Contains(prep, f) {
				continue
			}
			if !result.RunOnly(f) {
				t.Errorf("%s: run takes --%s and prepare does not, but result.RunOnly does not say so", w, f)
			}
			if !slices.Contains(union, f) {
				union = append(union, f)
			}
		}
	}
	sort.Strings(union)
	if !slices.Equal(union, want) {
		t.Errorf("the options only run takes are %s; result.RunOnly says %s", strings.Join(union, " "), strings.Join(want, " "))
	}
}

// flagNames are the long options of `dbmark CMD WORKLOAD`, its inherited
// ones included.
func flagNames(a *App, cmd, workload string) []string {
	c, _, err := a.rootCmd().Find([]string{cmd, workload})
	if err != nil || c.Name() != workload {
		return nil
	}
	var out []string
	add := func(f *pflag.Flag) { out = append(out, f.Name) }
	c.Flags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	return out
}

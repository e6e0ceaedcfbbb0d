package cli

import (
	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/workload"
)

// shapeRun lets a workload set the runner options its own flags imply: the
// thread count (iibench's --inserters plus --query-threads) and a limit of
// its own (iibench's --max-rows), under which the default --time does not
// apply.
func shapeRun(fs *pflag.FlagSet, w workload.Spec, f *runFlags, cfg *runner.Config) error {
	if w.Hooks.Threads != nil {
		n, err := w.Hooks.Threads(f.threads, fs.Changed("threads"))
		if err != nil {
			return err
		}
		f.threads, cfg.Threads = n, n
	}
	if w.Hooks.SelfLimited != nil && w.Hooks.SelfLimited() {
		cfg.SelfLimited = true
		if !fs.Changed("time") {
			cfg.Duration = 0
		}
	}
	return nil
}

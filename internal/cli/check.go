package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbmark/dbmark/internal/workload"
)

// checkCmd is "check WORKLOAD": the workload's consistency check
// (pgbench's TPC-B balances), for the workloads that have one.
func (a *App) checkCmd() *cobra.Command {
	var names []string
	cmd := &cobra.Command{
		Use:   "check WORKLOAD [flags]",
		Short: "Check that a workload's data is consistent after runs",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return withCode(ExitUsage, fmt.Errorf("check needs a workload: one of %s", strings.Join(names, ", ")))
			}
			if s, ok := closest(args[0], names); ok && s != args[0] {
				return withCode(ExitUsage, fmt.Errorf("workload %q has no check: did you mean %s? (workloads with one: %s)", args[0], s, strings.Join(names, ", ")))
			}
			return withCode(ExitUsage, fmt.Errorf("workload %q has no check (workloads with one: %s)", args[0], strings.Join(names, ", ")))
		},
	}
	for _, name := range a.Workloads.Names() {
		w, _ := a.Workloads.New(name)
		if w.Hooks.Check == nil {
			continue
		}
		names = append(names, name)
		f := &runFlags{}
		sub := &cobra.Command{
			Use:   name,
			Short: "Check " + name + "'s data",
			Args:  positional(w),
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := takeArgs(w, args); err != nil {
					return err
				}
				return a.check(cmd.Context(), w, f)
			},
		}
		fs := sub.Flags()
		fs.SetNormalizeFunc(normalize)
		f.bindTarget(fs, w)
		w.Flags(fs)
		a.yieldShorthands(fs, name)
		sub.SetFlagErrorFunc(a.flagError)
		cmd.AddCommand(sub)
	}
	return cmd
}

// check runs the check: exit 0 when the data is consistent, 2 when it is
// not, 1 when the check could not run.
func (a *App) check(ctx context.Context, w workload.Spec, f *runFlags) error {
	tg, _, err := a.openTarget(ctx, w, f, f.threads, nil)
	if err != nil {
		return err
	}
	defer tg.Close()
	// A cluster's data is shared: it is checked through its first server.
	more, err := a.openMore(ctx, w, f, tg, f.threads, nil)
	if err != nil {
		return err
	}
	closeTargets(more)
	env := a.env(tg, f, f.threads)
	env.Progress = a.Stdout
	if err := w.Hooks.Check(ctx, env); err != nil {
		if errors.Is(err, workload.ErrCheckFailed) {
			return withCode(ExitRunFailed, err)
		}
		return setupError(ctx, err)
	}
	fmt.Fprintf(a.Stdout, "check %s: ok on %s\n", w.Meta.Name, tg.Redacted())
	return nil
}

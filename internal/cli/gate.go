package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbmark/dbmark/internal/compare"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/store"
)

func (a *App) gateCmd() *cobra.Command {
	var metric, warn, crit, targetURL string
	var single, runIt bool
	var repeat int
	cmd := &cobra.Command{
		Use:   "gate BASELINE [CANDIDATE] [--metric M] [--warn 5%] [--crit 10%] | gate BASELINE --run [--repeat N] [--target URL]",
		Short: "A regression gate for CI and monitoring: judge runs against a baseline, exit with Nagios's codes",
		Long: `Judge a candidate against a baseline on one metric and print one line, exiting with Nagios's
codes: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (bad input is UNKNOWN too).

BASELINE and CANDIDATE are each a run id, several run ids joined by commas (repeats), a sweep of
one cell (sweep:ID), or newest:WORKLOAD (the newest ok run of that workload). Without CANDIDATE,
--run runs the baseline's workload with its options --repeat times (against --target, or the
embedded default) and judges those runs; they are stored like any run.

With two or more runs a side, a change is a regression only when Welch's test finds it significant
(the same statistics as compare), and its size is held to --warn and --crit. With one run a side the
gate cannot tell a regression from noise and says UNKNOWN, unless --single judges the one figure.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0 || len(args) > 2:
				return withCode(compare.GateUnknown, errors.New("usage: dbmark gate BASELINE [CANDIDATE] (run ids, sweep:ID or newest:WORKLOAD), or dbmark gate BASELINE --run"))
			case len(args) == 1 && !runIt:
				return withCode(compare.GateUnknown, errors.New("gate needs a CANDIDATE, or --run to run the baseline's workload and judge that"))
			case len(args) == 2 && runIt:
				return withCode(compare.GateUnknown, errors.New("gate takes a CANDIDATE or --run, not both"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			w, err := percentOption("--warn", warn)
			if err != nil {
				return withCode(compare.GateUnknown, err)
			}
			c, err := percentOption("--crit", crit)
			if err != nil {
				return withCode(compare.GateUnknown, err)
			}
			if c < w {
				return withCode(compare.GateUnknown, fmt.Errorf("--crit %s is below --warn %s: a critical regression is the larger one", crit, warn))
			}
			repeatGiven := cmd.Flags().Changed("repeat")
			if repeatGiven && !runIt {
				return withCode(compare.GateUnknown, errors.New("--repeat goes with --run"))
			}
			if repeatGiven && repeat < 1 {
				return withCode(compare.GateUnknown, fmt.Errorf("--repeat %d: must be at least 1", repeat))
			}
			var base, cand []*result.Result
			err = a.withStore(ctx, func(st store.Store) error {
				if base, err = gateSide(ctx, st, args[0]); err != nil {
					return err
				}
				if len(args) == 2 {
					cand, err = gateSide(ctx, st, args[1])
				}
				return err
			})
			if err != nil {
				return withCode(compare.GateUnknown, err)
			}
			m, err := compare.ParseMetric(metric, base[0].Workload.Better)
			if err != nil {
				return withCode(compare.GateUnknown, err)
			}
			if runIt {
				if !repeatGiven {
					repeat = len(base)
				}
				if cand, err = a.gateRuns(ctx, base[0], repeat, targetURL); err != nil {
					return withCode(compare.GateUnknown, err)
				}
			}
			if base[0].Workload.Name != cand[0].Workload.Name {
				return withCode(compare.GateUnknown, fmt.Errorf("the baseline is %s and the candidate %s: a gate judges runs of one workload", base[0].Workload.Name, cand[0].Workload.Name))
			}
			if d := compare.Diff(base[0], cand[0]); len(d.NotComparable) > 0 {
				return withCode(compare.GateUnknown, fmt.Errorf("not comparable: %s", strings.Join(d.NotComparable, "; ")))
			}
			g := compare.Gate(base, cand, compare.GateOptions{Metric: m, Warn: w, Crit: c, Single: single})
			fmt.Fprintln(a.Stdout, g.Line)
			if g.State != compare.GateOK {
				return &printedError{code: g.State}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&metric, "metric", "headline", "what to judge: headline, qps, mean, a latency percentile (p95, p99, p99.9) or op:NAME (an operation's rate)")
	f.StringVar(&warn, "warn", "5%", "a regression this large or larger warns (exit 1)")
	f.StringVar(&crit, "crit", "10%", "a regression this large or larger is critical (exit 2)")
	f.BoolVar(&single, "single", false, "with one run a side, judge the one figure (noise not excluded) instead of UNKNOWN")
	f.BoolVar(&runIt, "run", false, "run the baseline's workload with its options and judge those runs")
	f.IntVar(&repeat, "repeat", 0, "with --run, how many runs (default: as many as the baseline has)")
	f.StringVar(&targetURL, "target", "", "with --run, where to run (default: the embedded SQLite database)")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withCode(compare.GateUnknown, err) })
	return cmd
}

// percentOption reads a threshold given as "5%" or "5" (percent).
func percentOption(name, v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
	if err != nil || f < 0 || f > 1000 {
		return 0, fmt.Errorf("%s %q: want a percentage such as 5%%", name, v)
	}
	return f / 100, nil
}

// gateSide reads one side of a gate: run ids joined by commas, a sweep of
// one cell, or the newest ok run of a workload.
func gateSide(ctx context.Context, st store.Store, ref string) ([]*result.Result, error) {
	if w, ok := strings.CutPrefix(ref, "newest:"); ok {
		rows, err := st.List(ctx, store.Filter{Workload: w, Status: string(result.StatusOK), Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(rows) == 0 {
			return nil, fmt.Errorf("%s: no ok run of workload %q is stored (see: dbmark results list)", ref, w)
		}
		r, err := st.Get(ctx, rows[0].ID)
		if err != nil {
			return nil, err
		}
		return []*result.Result{r}, nil
	}
	if strings.HasPrefix(ref, "sweep:") {
		s, err := loadSide(ctx, st, ref)
		if err != nil {
			return nil, err
		}
		if len(s.order) != 1 {
			return nil, fmt.Errorf("%s has %d cells: a gate judges one (repeat one cell, or compare cell by cell with dbmark compare)", ref, len(s.order))
		}
		return s.cells[s.order[0]], nil
	}
	var out []*result.Result
	for _, id := range strings.Split(ref, ",") {
		s, err := loadSide(ctx, st, id)
		if err != nil {
			return nil, err
		}
		r := s.cells[""][0]
		if r.Status != result.StatusOK {
			return nil, fmt.Errorf("run %s is %s: a gate judges finished runs", id, r.Status)
		}
		if len(out) > 0 && r.Workload.Name != out[0].Workload.Name {
			return nil, fmt.Errorf("%s: runs of %s and %s: one side holds runs of one workload", ref, out[0].Workload.Name, r.Workload.Name)
		}
		out = append(out, r)
	}
	return out, nil
}

// gateRuns runs base's workload with its options n times and returns the
// results, read from the documents the runs write (each is stored too).
// The runs' own output goes to standard error: standard output holds the
// gate's one line.
func (a *App) gateRuns(ctx context.Context, base *result.Result, n int, targetURL string) ([]*result.Result, error) {
	args, err := a.reproduceArgs(base.Workload.Name, base.Workload.Options)
	if err != nil {
		return nil, err
	}
	if targetURL != "" {
		args = append(args, "--target", targetURL)
	}
	// A fresh command tree binds --store anew: the runs are stored where
	// the gate reads.
	storeDSN, stdout := a.storeDSN, a.Stdout
	a.Stdout = a.Stderr
	defer func() { a.storeDSN, a.Stdout = storeDSN, stdout }()
	if storeDSN != "" {
		args = append(args, "--store", storeDSN)
	}
	dir, err := os.MkdirTemp("", "dbmark-gate-")
	if err != nil {
		return nil, fmt.Errorf("gate: a directory for the runs' documents: %w", err)
	}
	defer os.RemoveAll(dir)
	var out []*result.Result
	for i := range n {
		doc := filepath.Join(dir, fmt.Sprintf("run%d.json", i+1))
		root := a.rootCmd()
		root.SetArgs(append(append([]string{}, args...), "--json", doc))
		root.SetOut(a.Stderr)
		root.SetErr(a.Stderr)
		if err := root.ExecuteContext(ctx); err != nil {
			return nil, fmt.Errorf("run %d of %d: %w", i+1, n, err)
		}
		r, err := result.ReadFile(doc)
		if err != nil {
			return nil, fmt.Errorf("run %d of %d: %w", i+1, n, err)
		}
		if r.Status != result.StatusOK {
			return nil, fmt.Errorf("run %d of %d ended %s: nothing to judge", i+1, n, r.Status)
		}
		out = append(out, r)
	}
	return out, nil
}

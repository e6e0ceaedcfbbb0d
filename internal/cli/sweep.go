package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/promexport"
	"github.com/dbmark/dbmark/internal/report"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/serverset"
	"github.com/dbmark/dbmark/internal/store"
	"github.com/dbmark/dbmark/internal/sweep"
	"github.com/dbmark/dbmark/internal/workload"
)

// sweepFlags are a sweep's own options.
type sweepFlags struct {
	iterations    int
	untilCV       percent
	maxIterations int
	zip           []string
	rows, cols    string
	format        string
	metric        string
}

func (s *sweepFlags) bind(fs *pflag.FlagSet) {
	// A workload with an --iterations of its own (a query suite's runs of
	// each query) keeps it; the runs per cell are then --sweep-iterations.
	name := "iterations"
	if fs.Lookup(name) != nil {
		name = "sweep-iterations"
	}
	fs.IntVar(&s.iterations, name, 3, "runs per cell (with --until-cv, the least number)")
	fs.Var(&s.untilCV, "until-cv", "repeat each cell until the coefficient of variation of its headline is at most this (e.g. 3%)")
	fs.IntVar(&s.maxIterations, "max-iterations", 10, "with --until-cv, stop repeating a cell after this many runs")
	fs.StringArrayVar(&s.zip, "zip", nil, "swept options that move together instead of being crossed, e.g. --zip threads,rate (as many values each)")
	fs.StringVar(&s.rows, "rows-by", "", "the swept option laid out down the table (default: the one before the last)")
	fs.StringVar(&s.cols, "cols-by", "", "the swept option laid out across the table (default: the last)")
	fs.StringVar(&s.format, "format", "text", "text or csv (one row per cell, every statistic of every metric)")
	fs.StringVar(&s.metric, "metric", "", "what the table shows: headline (default), p50, p95, p99, mean, qps, read-mib/s, write-mib/s, errors, retries, or op:NAME[:p95|:mean|:mib/s] (an operation's rate, latency or MiB/s)")
}

func (s *sweepFlags) policy() sweep.Policy {
	return sweep.Policy{Iterations: s.iterations, UntilCV: float64(s.untilCV), MaxIterations: s.maxIterations}
}

func (s *sweepFlags) zipped() [][]string {
	var out [][]string
	for _, z := range s.zip {
		out = append(out, strings.Split(z, ","))
	}
	return out
}

// sweepSetup is one instance of a workload with a sweep's command line
// parsed into it.
type sweepSetup struct {
	w    workload.Spec
	fs   *pflag.FlagSet
	f    *runFlags
	sf   *sweepFlags
	axes *axisSet
}

// bindSweep binds everything a sweep of w takes into fs.
func bindSweep(w workload.Spec, fs *pflag.FlagSet, f *runFlags, sf *sweepFlags) *axisSet {
	fs.SetNormalizeFunc(normalize)
	f.bindTarget(fs, w)
	f.bindRun(fs)
	f.bindServer(fs, w)
	w.Flags(fs)
	f.restartRead = workload.FlagRead(fs, "restart-cmd")
	sf.bind(fs)
	return sweepable(fs)
}

// allAxes are the swept options in the order given, then the swept
// server settings (named result.ServerOption(name)).
func (s *sweepSetup) allAxes() []sweep.Axis {
	return append(s.axes.axes(), s.f.serverSet.Axes()...)
}

// newSweepSetup parses args into a fresh instance of the named workload:
// each run of a sweep gets its own, so no state leaks from cell to cell.
func (a *App) newSweepSetup(name string, args []string) (*sweepSetup, error) {
	w, ok := a.Workloads.New(name)
	if !ok {
		return nil, unknownWorkload(name, a.Workloads.Names())
	}
	s := &sweepSetup{w: w, fs: pflag.NewFlagSet(name, pflag.ContinueOnError), f: &runFlags{}, sf: &sweepFlags{}}
	s.fs.SetOutput(io.Discard)
	s.axes = bindSweep(w, s.fs, s.f, s.sf)
	if err := s.fs.Parse(args); err != nil {
		return nil, withCode(ExitUsage, fmt.Errorf("%v (see: dbmark sweep %s --help)", err, name))
	}
	s.sf.metric = headlineAlias(s.sf.metric, w.Meta.Headline)
	return s, nil
}

func (a *App) sweepCmd() *cobra.Command {
	var resume, resumeTarget, resumeMetric string
	cmd := &cobra.Command{
		Use:   "sweep WORKLOAD [flags]",
		Short: "Run a workload over lists and ranges of options, each cell repeated, and tabulate the headline",
		Long: `Any option of a workload given a list (--threads 1,8,32) or a range FROM:TO:STEP
(--table-size 10000:50000:10000, --file-total-size 256M:6G:256M, --time 10s:60s:10s) becomes an
axis; the sweep runs every combination, each --iterations times, stores every run, and prints the
headline's mean with its 95% confidence interval per cell (--metric p95, op:NAME... shows another of
the metrics each cell keeps: latency percentiles, per-operation rates and latencies, MiB/s, errors
and retries, all of them in --format csv). An interrupted sweep keeps its finished runs: dbmark
sweep --resume ID runs what is missing.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if resume != "" {
				if len(args) > 0 {
					return withCode(ExitUsage, errors.New("--resume takes no workload: the sweep's own options are used"))
				}
				return a.resumeSweep(cmd.Context(), resume, resumeTarget, resumeMetric)
			}
			if len(args) == 0 {
				return withCode(ExitUsage, fmt.Errorf("sweep needs a workload (one of %s) or --resume ID", strings.Join(a.Workloads.Names(), ", ")))
			}
			return unknownWorkload(args[0], a.Workloads.Names())
		},
	}
	cmd.Flags().StringVar(&resume, "resume", "", "resume an interrupted sweep: its id or uuid prefix")
	cmd.Flags().StringVar(&resumeTarget, "target", "", "with --resume: the target again (a password is never stored)")
	cmd.Flags().StringVar(&resumeMetric, "metric", "", "with --resume: what the table shows, in place of the sweep's own --metric")
	for _, name := range a.Workloads.Names() {
		w, _ := a.Workloads.New(name)
		if !w.Runnable() {
			continue
		}
		f, sf := &runFlags{}, &sweepFlags{}
		sub := &cobra.Command{
			Use:   name,
			Short: w.Meta.Description,
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if done, err := a.inform(w); done || err != nil {
					return err
				}
				warnLegacy(cmd.Flags(), a.Stdout)
				return a.startSweep(cmd.Context(), name, cmd.NonInheritedFlags())
			},
		}
		bindSweep(w, sub.Flags(), f, sf)
		a.yieldShorthands(sub.Flags(), name)
		sub.SetFlagErrorFunc(a.flagError)
		cmd.AddCommand(sub)
	}
	return cmd
}

// startSweep starts a sweep from the options parsed into fs, and runs it.
func (a *App) startSweep(ctx context.Context, name string, fs *pflag.FlagSet) error {
	return a.sweepArgs(ctx, name, canonicalArgs(fs))
}

// runAsSweep is "dbmark run" given a list or a range: a sweep with one
// run per cell.
func (a *App) runAsSweep(ctx context.Context, name string, fs *pflag.FlagSet) error {
	return a.sweepArgs(ctx, name, append(canonicalArgs(fs), "--iterations=1"))
}

func (a *App) sweepArgs(ctx context.Context, name string, args []string) error {
	s, err := a.newSweepSetup(name, args)
	if err != nil {
		return err
	}
	if s.f.jsonPath != "" {
		return withCode(ExitUsage, errors.New("--json writes one run; a sweep keeps its runs in the store (dbmark results export ID)"))
	}
	if s.f.start.startAt != "" {
		return withCode(ExitUsage, fmt.Errorf("--start-at %s: a sweep runs one cell after another; start single runs together instead", s.f.start.startAt))
	}
	if s.f.noStore {
		return withCode(ExitUsage, errors.New("--no-store: a sweep needs the store, to link its runs and to be resumed"))
	}
	m := s.w.Meta
	rec := &result.Sweep{
		SchemaVersion: result.SchemaVersion, ID: uuid.NewString(), Workload: name,
		Command: redactArgs(append([]string{"dbmark"}, a.Args...)), Args: redactArgs(args),
		Iterations: s.sf.iterations, UntilCV: float64(s.sf.untilCV), MaxIterations: s.sf.maxIterations,
		Headline: m.Headline, Better: m.Better, StartedAt: time.Now().UTC(), Status: result.SweepRunning,
	}
	if s.sf.untilCV == 0 {
		rec.MaxIterations = 0
	}
	for _, ax := range s.allAxes() {
		rec.Axes = append(rec.Axes, result.SweepAxis{Name: ax.Name, Values: ax.Values})
	}
	rec.Zip = s.sf.zipped()
	return a.execSweep(ctx, rec, args, nil)
}

// resumeSweep runs what an interrupted or failed sweep has not finished.
func (a *App) resumeSweep(ctx context.Context, ref, tgt, metric string) error {
	st, err := store.Open(ctx, a.storeDSN, a.Logger)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	defer st.Close()
	rec, err := getSweep(ctx, st, ref)
	if err != nil {
		return err
	}
	args := slices.Clone(rec.Args)
	if tgt != "" {
		args = append(args, "--target="+tgt)
	} else if slices.ContainsFunc(args, func(s string) bool { return strings.HasPrefix(s, "--target=") && strings.Contains(s, "xxxxx") }) {
		return withCode(ExitUsage, fmt.Errorf("sweep %s: its target had a password, which is not stored: give it again with --target", ref))
	}
	if metric != "" {
		args = append(args, "--metric="+metric)
	}
	runs, err := st.SweepRuns(ctx, rec.ID)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	return a.execSweep(ctx, rec, args, runs)
}

// getSweep finds a sweep by what a user typed, with a message that says
// what to do when there is none.
func getSweep(ctx context.Context, st store.Store, ref string) (*result.Sweep, error) {
	_, rec, err := resolveSweep(ctx, st, ref)
	return rec, err
}

// resolveSweep is getSweep with the sweep's ID.
func resolveSweep(ctx context.Context, st store.Store, ref string) (store.ID, *result.Sweep, error) {
	id, err := st.ResolveSweep(ctx, ref)
	if errors.Is(err, store.ErrSweepNotFound) {
		return 0, nil, withCode(ExitUsage, fmt.Errorf("no sweep %q (a sweep prints its id when it starts)", ref))
	}
	if err != nil {
		return 0, nil, withCode(ExitUsage, err)
	}
	rec, err := st.GetSweep(ctx, id)
	if err != nil {
		return 0, nil, withCode(ExitUsage, err)
	}
	return id, rec, nil
}

// execSweep runs the cells of rec that done (its earlier runs) has not
// finished, keeping rec's status current in the store, and prints the table.
func (a *App) execSweep(ctx context.Context, rec *result.Sweep, args []string, done []*result.Result) (err error) {
	s, err := a.newSweepSetup(rec.Workload, args)
	if err != nil {
		return err
	}
	pol := s.sf.policy()
	if err := pol.Validate(); err != nil {
		return withCode(ExitUsage, err)
	}
	axes := s.allAxes()
	cells, err := sweep.Cells(axes, s.sf.zipped())
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if s.sf.format != "text" && s.sf.format != "csv" {
		return withCode(ExitUsage, fmt.Errorf("--format %q: must be text or csv", s.sf.format))
	}
	tbl := &report.Sweep{Headline: rec.Headline, Axes: axes, Rows: s.sf.rows, Cols: s.sf.cols, Metric: s.sf.metric}
	if err := tbl.Validate(); err != nil {
		return withCode(ExitUsage, err)
	}
	if err := sweep.CheckMetric(s.sf.metric); err != nil {
		return withCode(ExitUsage, err)
	}
	// One listener serves every cell's run in turn.
	mx, err := a.listenMetrics(s.f.metricsAddr)
	if err != nil {
		return err
	}
	defer a.closeMetrics(mx)
	servers, err := a.checkServerSet(ctx, s.w, s.f)
	if err != nil {
		return err
	}
	// The server's settings go back whatever becomes of the sweep.
	defer func() { err = restoreServerSet(ctx, servers, err) }()
	st, err := store.Open(ctx, a.storeDSN, a.Logger)
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("%w (use --store to choose another)", err))
	}
	defer st.Close()

	// What earlier runs of a resumed sweep finished.
	state := map[string]*cellState{}
	for _, c := range cells {
		state[c.Key()] = &cellState{}
	}
	for _, r := range done {
		cs := state[sweep.KeyOf(axes, r.Sweep.Cell)]
		if cs == nil {
			continue
		}
		cs.runs++
		if r.Status == result.StatusOK {
			cs.values = append(cs.values, r.Summary.Headline)
			cs.measures = append(cs.measures, sweep.Measures(r))
		}
	}
	// An operation's metric is known once a run has measured it: a
	// resumed sweep's runs say now.
	if err := checkShown(s.sf.metric, state); err != nil {
		return withCode(ExitUsage, err)
	}

	rec.Status, rec.Error, rec.EndedAt = result.SweepRunning, "", time.Time{}
	sid, err := st.SaveSweep(ctx, rec)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	fmt.Fprintf(a.Stderr, "sweep %d (%s): %s, %d cell(s)\n", sid, rec.ID, rec.Workload, len(cells))

	runErr := a.sweepCells(ctx, rec, args, cells, pol, state, st, servers, mx)

	saveCtx := context.WithoutCancel(ctx)
	rec.EndedAt = time.Now().UTC()
	code := 0
	var ee *exitError
	switch {
	case runErr == nil:
		rec.Status = result.SweepDone
	case errors.As(runErr, &ee) && ee.code == ExitInterrupted:
		rec.Status, code = result.SweepInterrupted, ExitInterrupted
	default:
		rec.Status, rec.Error, code = result.SweepFailed, runErr.Error(), ExitRunFailed
		if errors.As(runErr, &ee) {
			code = ee.code
		}
	}
	measures := map[string][][]sweep.Measure{}
	for k, cs := range state {
		measures[k] = cs.measures
	}
	fillTable(tbl, sid, rec, s.w, cells, measures)
	rec.Cells = report.SweepCells(tbl)
	if _, err := st.SaveSweep(saveCtx, rec); err != nil {
		return withCode(ExitRunFailed, err)
	}
	if sweep.CheckKnown(tbl.Metric, tbl.Known) != nil {
		tbl.Metric = "" // the error said so; the headline is there
	}
	if s.sf.format == "csv" {
		err = report.SweepCSV(a.Stdout, tbl)
	} else {
		err = report.SweepText(a.Stdout, tbl)
	}
	if err != nil {
		return withCode(ExitRunFailed, err)
	}
	switch code {
	case 0:
		return nil
	case ExitInterrupted:
		return withCode(code, fmt.Errorf("interrupted: the finished runs were kept; resume with: dbmark sweep --resume %d", sid))
	}
	return withCode(code, fmt.Errorf("sweep stopped: %w; resume with: dbmark sweep --resume %d", runErr, sid))
}

// headlineAlias is --metric with the headline's own name (tps, rows/s)
// taken as the headline.
func headlineAlias(metric, headline string) string {
	if metric != "" && metric == headline {
		return sweep.Headline
	}
	return metric
}

type cellState struct {
	values   []float64         // headline of each finished (ok) run
	measures [][]sweep.Measure // every metric of each finished run
	runs     int               // runs made, finished or not: the next iteration's number is runs+1
}

// checkShown says whether metric (--metric), when it names an operation,
// is one that the finished runs in state measured; with none finished it
// cannot tell yet and says nothing.
func checkShown(metric string, state map[string]*cellState) error {
	var runs [][]sweep.Measure
	for _, cs := range state {
		runs = append(runs, cs.measures...)
	}
	if len(runs) == 0 || metric == "" {
		return nil
	}
	return sweep.CheckKnown(metric, sweep.Known(runs))
}

// sweepCells runs each cell as the policy says. The first run that does
// not finish stops the sweep.
func (a *App) sweepCells(ctx context.Context, rec *result.Sweep, args []string, cells []sweep.Cell, pol sweep.Policy, state map[string]*cellState, st store.Store, servers *serverset.Session, mx *promexport.Server) error {
	w, _ := a.Workloads.New(rec.Workload)
	var prepOpts []string
	for _, o := range w.PrepareOptions {
		prepOpts = append(prepOpts, string(normalize(nil, o)))
	}
	prepared := ""  // the values of the prepare options the data was last prepared with
	ranOne := false // a run of this sweep has found the data prepared
	for _, cs := range state {
		ranOne = ranOne || len(cs.values) > 0
	}
	for i, c := range cells {
		cs := state[c.Key()]
		for pol.More(cs.values) {
			if err := ctx.Err(); err != nil {
				return withCode(ExitInterrupted, errors.New("interrupted"))
			}
			s, err := a.newSweepSetup(rec.Workload, args)
			if err != nil {
				return err
			}
			for _, set := range c {
				if s.f.serverSet.Pin(set.Name, set.Value) {
					continue
				}
				if err := s.fs.Set(set.Name, set.Value); err != nil {
					return withCode(ExitUsage, fmt.Errorf("--%s %s: %w", set.Name, set.Value, err))
				}
				// A cell's value is the option's, over a deprecated spelling
				// of it given once for the whole sweep.
				for _, l := range legacyNames {
					if fl := s.fs.Lookup(l.old); fl != nil && l.now == set.Name {
						fl.Changed = false
					}
				}
			}
			// The data is made afresh whenever the options it is made
			// with, given as one value or as an axis, differ from the
			// last run's: a value given once is an axis of one.
			var prepKey []string
			for _, name := range prepOpts {
				if f := s.fs.Lookup(name); f != nil && f.Changed {
					prepKey = append(prepKey, name+"="+f.Value.String())
				}
			}
			key := strings.Join(prepKey, " ")
			fresh := len(prepKey) > 0 && key != prepared
			ref := &result.SweepRef{ID: rec.ID, Cell: c.Map(), Iteration: cs.runs + 1}
			res, err := a.runOne(ctx, s.w, s.fs, s.f, runOpts{out: io.Discard, st: st, sweep: ref, fresh: fresh, repair: ranOne, servers: servers, metrics: mx})
			if res != nil {
				cs.runs++
			}
			if err != nil {
				return err
			}
			prepared, ranOne = key, true
			cs.values = append(cs.values, res.Summary.Headline)
			cs.measures = append(cs.measures, sweep.Measures(res))
			if err := checkShown(s.sf.metric, state); err != nil {
				// Found at the first run: no more runs are spent on a
				// table that cannot be shown.
				return withCode(ExitUsage, err)
			}
			label := c.Key()
			if label == "" {
				label = "run"
			}
			fmt.Fprintf(a.Stderr, "[%d/%d] %s #%d: %.2f %s (%s)\n", i+1, len(cells), label, ref.Iteration, res.Summary.Headline, res.Summary.HeadlineUnit, res.ID[:8])
		}
	}
	return nil
}

// annotate asks the workload for notes along each numeric axis, once per
// combination of the other axes' values.
func annotate(w workload.Spec, axes []sweep.Axis, cells []report.SweepCell) []string {
	if w.Hooks.AnnotateSweep == nil {
		return nil
	}
	var notes []string
	for ai, ax := range axes {
		xs, ok := sweep.Numeric(ax.Values)
		if !ok {
			continue
		}
		// Group the cells by the other axes' values.
		groups := map[string][]float64{}
		var order []string
		for _, c := range cells {
			var other []string
			for j, set := range c.Cell {
				if j != ai {
					other = append(other, set.Name+"="+set.Value)
				}
			}
			k := strings.Join(other, " ")
			if _, seen := groups[k]; !seen {
				order = append(order, k)
				groups[k] = make([]float64, len(xs))
			}
			mean := 0.0
			for _, v := range c.Values {
				mean += v / float64(len(c.Values))
			}
			groups[k][slices.Index(ax.Values, c.Cell[ai].Value)] = mean
		}
		for _, k := range order {
			for _, n := range w.Hooks.AnnotateSweep(ax.Name, xs, groups[k]) {
				if k != "" {
					n = k + ": " + n
				}
				notes = append(notes, n)
			}
		}
	}
	return notes
}

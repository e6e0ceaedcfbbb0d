package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/store"
)

// quickStep is one step of `dbmark quick`: a workload, its arguments and
// how long it measures. "{tmpdir}" in an argument becomes a temporary
// directory that is removed afterwards (for file I/O).
type quickStep struct {
	Workload string
	Args     []string
	Time     time.Duration
	// Prepare runs "dbmark prepare" with the same arguments first, for a
	// workload whose target is not the embedded database (file I/O).
	Prepare bool
}

// quickSteps is the suite: about two minutes on the embedded defaults. A
// step whose workload is not in this build is skipped with a note, so a
// workload joins the suite with one line here.
func quickSteps() []quickStep {
	return []quickStep{
		{Workload: "oltp_read_write", Args: []string{"--threads", "1"}, Time: 20 * time.Second},
		{Workload: "oltp_point_select", Args: []string{"--threads", "2"}, Time: 15 * time.Second},
		{Workload: "tpcb", Args: []string{"--threads", "2"}, Time: 20 * time.Second},
		{Workload: "fileio", Args: []string{"--dir", "{tmpdir}", "--file-num", "4", "--file-total-size", "256M", "--mode", "rndrw", "--threads", "2"}, Time: 15 * time.Second, Prepare: true},
		{Workload: "iibench", Args: []string{"--recreate", "--inserters", "2", "--query-threads", "1", "--report-rows", "20000"}, Time: 20 * time.Second},
	}
}

const quickWarmup = 5 * time.Second

type quickFlags struct {
	out    string
	time   seconds
	warmup seconds
}

func (a *App) quickCmd() *cobra.Command {
	f := &quickFlags{warmup: seconds(quickWarmup)}
	cmd := &cobra.Command{
		Use:   "quick",
		Short: "Run a short suite (about two minutes) on the embedded defaults and write report.html",
		Long: `Run a short suite on the embedded defaults: OLTP on the embedded SQLite database in the
data directory, and TPC-B, file I/O (in a temporary directory) and the insert benchmark when
this build has them. Every run is stored, linked by one suite ID, and the report is written to
report.html in the current directory (or -o).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.quick(cmd.Context(), f) },
	}
	fs := cmd.Flags()
	fs.StringVarP(&f.out, "output", "o", "report.html", "the HTML report to write")
	fs.Var(&f.time, "time", "measure each step this long instead of its own time (60 means 60s)")
	fs.Var(&f.warmup, "warmup", "warm-up before each step's measured part")
	return cmd
}

func (a *App) quick(ctx context.Context, f *quickFlags) error {
	// Everything that could refuse the report is checked before two minutes
	// of benchmarks, not after.
	lib, err := htmlreport.ChartLibrary()
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if fi, err := os.Stat(filepath.Dir(f.out)); err != nil || !fi.IsDir() {
		return withCode(ExitUsage, fmt.Errorf("-o %s: no such directory %s", f.out, filepath.Dir(f.out)))
	}
	st, err := store.Open(ctx, a.storeDSN, a.Logger)
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("%w (use --store to choose another)", err))
	}
	defer st.Close()
	work, err := os.MkdirTemp("", "dbmark-quick-")
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("create a temporary directory: %w", err))
	}
	defer os.RemoveAll(work)

	var steps []quickStep
	var notes []string
	for _, s := range quickSteps() {
		if _, ok := a.Workloads.New(s.Workload); !ok {
			notes = append(notes, fmt.Sprintf("skipped %s: this build has no such workload", s.Workload))
			continue
		}
		if f.time > 0 {
			s.Time = time.Duration(f.time)
		}
		steps = append(steps, s)
	}
	var total time.Duration
	for _, s := range steps {
		total += s.Time + time.Duration(f.warmup)
	}
	suite := uuid.NewString()
	fmt.Fprintf(a.Stdout, "dbmark quick: %d steps, about %s of measuring, suite %s\n", len(steps), total.Round(time.Second), suite)
	for _, n := range notes {
		fmt.Fprintf(a.Stdout, "  %s\n", n)
	}

	var runs []htmlreport.Run
	var failed []string
	interrupted := false
	for i, s := range steps {
		fmt.Fprintf(a.Stdout, "[%d/%d] %s: %s after a %s warm-up\n", i+1, len(steps), s.Workload, s.Time, time.Duration(f.warmup))
		res, code, err := a.quickStep(ctx, s, i, work, time.Duration(f.warmup))
		if err != nil {
			return err
		}
		if res != nil {
			res.Sweep = &result.SweepRef{ID: suite, Cell: map[string]string{"step": s.Workload}, Iteration: 1}
			id, err := st.Save(context.WithoutCancel(ctx), res)
			if err != nil {
				return withCode(ExitRunFailed, fmt.Errorf("save the result of %s: %w", s.Workload, err))
			}
			runs = append(runs, htmlreport.Run{ID: int64(id), Result: res})
			fmt.Fprintf(a.Stdout, "      %s (result %d)\n", headlineText(res), id)
		}
		if code == ExitInterrupted || ctx.Err() != nil {
			interrupted = true
			break
		}
		if code != ExitOK {
			failed = append(failed, s.Workload)
			notes = append(notes, fmt.Sprintf("%s did not finish (exit %d)", s.Workload, code))
		}
	}
	if len(runs) == 0 {
		if interrupted {
			return withCode(ExitInterrupted, errors.New("interrupted before any step finished"))
		}
		return withCode(ExitRunFailed, errors.New("no step of the suite produced a result"))
	}
	opt := htmlreport.Options{Title: "dbmark quick", Notes: notes, Library: lib}
	if err := writeReport(f.out, runs, opt); err != nil {
		return withCode(ExitRunFailed, err)
	}
	where, _ := filepath.Abs(f.out)
	fmt.Fprintf(a.Stdout, "report written to %s (runs stored as suite %s: dbmark report %s)\n", where, suite, suite)
	switch {
	case interrupted:
		return withCode(ExitInterrupted, errors.New("interrupted: the finished steps were kept"))
	case len(failed) > 0:
		return withCode(ExitRunFailed, fmt.Errorf("%d step(s) failed: %s", len(failed), strings.Join(failed, ", ")))
	}
	return nil
}

// quickStep runs one step as `dbmark run` would, on the embedded defaults,
// and returns its result document (nil when it produced none) and exit
// code. The run's own lines (errors, notes) go to stderr; its summary is
// left out, as the report has it.
func (a *App) quickStep(ctx context.Context, s quickStep, n int, work string, warmup time.Duration) (*result.Result, int, error) {
	tmp := filepath.Join(work, fmt.Sprintf("step%d", n+1))
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, 0, withCode(ExitUsage, fmt.Errorf("create a temporary directory: %w", err))
	}
	doc := filepath.Join(work, fmt.Sprintf("step%d.json", n+1))
	var common []string
	for _, arg := range s.Args {
		common = append(common, strings.ReplaceAll(arg, "{tmpdir}", tmp))
	}
	if a.quiet {
		common = append(common, "--quiet")
	}
	if a.verbose {
		common = append(common, "--verbose")
	}
	// The embedded database, named: a PG* variable in the environment
	// (which a tpcb run without --target would follow) does not take a
	// step elsewhere.
	tgt := "--target="
	if w, ok := a.Workloads.New(s.Workload); ok && w.OwnTarget == nil {
		u, err := embeddedURL()
		if err != nil {
			return nil, ExitUsage, err
		}
		tgt += u
	}
	if s.Prepare {
		args := append([]string{"prepare", s.Workload, tgt}, common...)
		if code := Main(ctx, args, io.Discard, a.Stderr); code != ExitOK {
			return nil, code, nil
		}
	}
	args := append([]string{"run", s.Workload, tgt}, common...)
	args = append(args, "--time", s.Time.String(), "--warmup", warmup.String(), "--no-store", "--json", doc)
	code := Main(ctx, args, io.Discard, a.Stderr)
	res, err := result.ReadFile(doc)
	if errors.Is(err, os.ErrNotExist) {
		return nil, code, nil
	}
	if err != nil {
		return nil, code, withCode(ExitRunFailed, fmt.Errorf("%s: %w", s.Workload, err))
	}
	return res, code, nil
}

func headlineText(r *result.Result) string {
	s := fmt.Sprintf("%.2f %s", r.Summary.Headline, r.Summary.HeadlineUnit)
	if p, ok := r.Summary.Latency.Get(95); ok {
		s += fmt.Sprintf(", p95 %.2f ms", p)
	}
	if r.Status != result.StatusOK {
		s += ", " + string(r.Status)
	}
	return s
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/buildinfo"
	"github.com/dbmark/dbmark/internal/frontend/sysbench"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/secret"
	"github.com/dbmark/dbmark/internal/workload"
)

func (a *App) sysbenchCmd() *cobra.Command {
	return a.frontEndCmd("sysbench [options]... testname command",
		"sysbench 1.0.20's command line and output, running dbmark's workloads (docs/sysbench.md)",
		`Put "dbmark " in front of a sysbench 1.0.20 command: the same options, tests
(the OLTP tests, bulk_insert, fileio) and commands (prepare, run, cleanup,
prewarm, help), the same lines on the same streams and the same exit codes.
Each run is also kept in dbmark's results store (dbmark results show).
dbmark's own options here: --no-store, --store=DSN, --json=FILE.`,
		a.sysbench)
}

// dbmarkOwn takes dbmark's own options (--no-store, --store, --json) out
// of a sysbench command line: the store is set, the others returned as
// flags to set once the run's flags are bound.
func (a *App) dbmarkOwn(args []string) (rest []string, own [][2]string) {
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
		switch {
		case args[i] == "--no-store":
			own = append(own, [2]string{"no-store", "true"})
		case strings.HasPrefix(args[i], "--") && (name == "store" || name == "json"):
			if !hasValue && i+1 < len(args) {
				i++
				value = args[i]
			}
			if name == "store" {
				a.storeDSN = value
			} else {
				own = append(own, [2]string{"json", value})
			}
		default:
			rest = append(rest, args[i])
		}
	}
	return rest, own
}

// sysbench runs a sysbench command line: the front end reads it and
// prints sysbench's lines; dbmark's workloads do the work.
func (a *App) sysbench(ctx context.Context, args []string) error {
	args, own := a.dbmarkOwn(args)
	c, err := sysbench.Start(args, a.Stdout, a.Stderr, buildinfo.Get().Version)
	var ex *sysbench.Exit
	if errors.As(err, &ex) {
		return exitWith(ex.Code)
	}
	if err != nil {
		return err
	}
	// What dbmark says of its own goes to stderr, each line marked as
	// dbmark's, so that no line of sysbench's is mistaken for it or
	// hidden by it; progress bars are left out.
	a.Stderr = &prefixWriter{w: a.Stderr, prefix: "dbmark: "}
	a.Interactive, a.noProgress = false, true
	// dbmark's own log keeps to warnings, unless asked for more.
	level := slog.LevelWarn
	if c.Debug || c.Log.Verbosity >= sysbench.Debug {
		level = slog.LevelDebug
	} else if c.Log.Verbosity < sysbench.Notice {
		level = slog.LevelError
	}
	a.frontEndLog(a.Stderr, level)
	w, ok := a.Workloads.New(c.Test)
	if !ok {
		c.Log.Printf(sysbench.Fatal, "Cannot find benchmark '%s': no such built-in test, file or module", c.Name)
		return exitWith(1)
	}
	// Every option goes with every command, as sysbench takes them.
	fs, f := a.frontEndFlags(c.Test, w, "run")
	sets := slices.Concat(c.Flags, own)
	if w.OwnTarget == nil {
		for _, t := range c.Targets() { // several: the clients spread over them
			sets = append(sets, [2]string{"target", t})
		}
	}
	for _, s := range sets {
		if err := fs.Set(s[0], s[1]); err != nil {
			c.Log.Printf(sysbench.Fatal, "Invalid value for --%s: '%s' (%v)", s[0], s[1], err)
			return exitWith(1)
		}
	}
	if c.Verb == "run" {
		return a.sysbenchRun(ctx, c, w, fs, f)
	}
	return a.sysbenchSetup(ctx, c, w, f)
}

// fatal prints err as sysbench prints a fatal error and ends with its code
// (130 when interrupted, as a shell gives a process SIGINT ended).
func (a *App) fatal(ctx context.Context, c *sysbench.Command, err error) error {
	if ctx.Err() != nil {
		return exitWith(ExitInterrupted)
	}
	c.Log.Printf(sysbench.Fatal, "%s", oneLine(secret.Message(err.Error(), a.Args)))
	return exitWith(1)
}

// sysbenchSetup is prepare, cleanup and prewarm.
func (a *App) sysbenchSetup(ctx context.Context, c *sysbench.Command, w workload.Spec, f *runFlags) error {
	var steps io.Writer = &lockedWriter{w: a.Stdout} // the OLTP scripts print their steps at any verbosity
	var wrote int64
	start := time.Now()
	if w.OwnTarget != nil {
		steps = nil // fileio's lines are sysbench's own, logged at its notice level
		switch c.Verb {
		case "prepare":
			c.PrepareFiles()
			for i := 0; i < c.FileNum(); i++ {
				have := fileSize("test_file." + strconv.Itoa(i))
				c.FileLine(i, have)
				wrote += max(int64(c.FileSize())-have, 0)
			}
		case "cleanup":
			c.Log.Printf(sysbench.Notice, "Removing test files...")
		}
	}
	if _, err := a.setup(ctx, w, f, c.Threads, c.Verb, steps); err != nil {
		if ctx.Err() == nil && c.FailedCode() == 0 {
			c.Log.Printf(sysbench.Fatal, "%s", oneLine(secret.Message(err.Error(), a.Args)))
			fmt.Fprintf(a.Stderr, "the %s failed; exit code 0 all the same, as sysbench 1.0.20's with --threads above 1\n", c.Verb)
			return nil
		}
		return a.fatal(ctx, c, err)
	}
	if w.OwnTarget != nil && c.Verb == "prepare" {
		c.Written(wrote, time.Since(start))
	}
	return nil
}

// fileSize is the size of the file, 0 when it is not there.
func fileSize(name string) int64 {
	st, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return st.Size()
}

// sysbenchRun runs the test and prints sysbench's header, lines and
// report; the result is kept as any run's.
func (a *App) sysbenchRun(ctx context.Context, c *sysbench.Command, w workload.Spec, fs *pflag.FlagSet, f *runFlags) error {
	c.RunHeader()
	if w.OwnTarget != nil {
		err := c.CheckFiles(func(name string) (int64, error) {
			st, err := os.Stat(name)
			if err != nil {
				return 0, err
			}
			return st.Size(), nil
		})
		var ex *sysbench.Exit
		if errors.As(err, &ex) {
			return exitWith(ex.Code)
		}
	}
	c.Initializing()
	var res *result.Result
	queueFull, forced := false, false
	fe := &frontEnd{
		own:     a.Stderr, // where the result went, marked as dbmark's
		live:    c.LiveLine,
		liveOut: a.Stdout,
		started: c.Started,
		report: func(r *result.Result) {
			res = r
			if forced = c.Forced(); forced {
				c.ForcedReport(r)
				return
			}
			if r.Status != result.StatusOK && r.Status != result.StatusDegraded {
				return // sysbench prints no report of a run that failed
			}
			if queueFull = c.QueueFull(r); !queueFull {
				c.Report(r)
			}
		},
	}
	if c.Spans() {
		fe.tune = func(cfg *runner.Config) {
			for _, cp := range c.Checkpoints {
				cfg.Checkpoints = append(cfg.Checkpoints, time.Duration(cp)*time.Second)
			}
			cfg.OnCheckpoint, cfg.Drain = c.OnSpan, c.Drain()
		}
	}
	_, err := a.runOne(ctx, w, fs, f, runOpts{out: a.Stderr, front: fe})
	switch {
	case forced:
		return exitWith(2) // sysbench's forced shutdown exits so
	case queueFull:
		return exitWith(1) // said in the report's place
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return exitWith(ExitInterrupted)
	}
	var ee *exitError
	if errors.As(err, &ee) && res != nil && ee.code == ExitRunFailed && res.Status != result.StatusFailed {
		// The run was measured but could not be kept: sysbench's report
		// is out; dbmark says why on stderr.
		fmt.Fprintln(a.Stderr, oneLine(secret.Message(err.Error(), a.Args))) // marked as dbmark's by a.Stderr
		return exitWith(ExitRunFailed)
	}
	return a.fatal(ctx, c, unwrapRunFailed(err))
}

// unwrapRunFailed is the error a failed run ended with, without dbmark's
// note of where its partial result was kept.
func unwrapRunFailed(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.err
	}
	return err
}

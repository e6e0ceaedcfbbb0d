// Package cli is dbmark's command line: cobra commands built from the
// workload and target registries, turning every error into one readable
// line and an exit code.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/dbmark/dbmark/internal/buildinfo"
	"github.com/dbmark/dbmark/internal/secret"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/sqlite"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/fileio"
	"github.com/dbmark/dbmark/internal/workload/iibench"
	"github.com/dbmark/dbmark/internal/workload/oltp"
	"github.com/dbmark/dbmark/internal/workload/query"
	"github.com/dbmark/dbmark/internal/workload/tpcb"
	"github.com/dbmark/dbmark/internal/workload/wisconsin"
)

// Exit codes, as pgbench uses them, plus the shell's code for SIGINT.
const (
	ExitOK          = 0 // ok, or degraded: the summary and the result say which
	ExitUsage       = 1 // bad options or a failed setup
	ExitRunFailed   = 2 // the run hit an error it could not survive; partial result kept
	ExitInterrupted = 130
)

// exitError carries an exit code with the error to print.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// printedError ends a command whose messages were printed already.
type printedError struct{ code int }

func (e *printedError) Error() string { return "exit " + strconv.Itoa(e.code) }

// notes is where dbmark's own notes around a run go.
func (a *App) notes() io.Writer {
	if a.own != nil {
		return a.own
	}
	return a.Stderr
}

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// App is the state shared by the commands.
type App struct {
	Stdout, Stderr io.Writer
	Logger         *slog.Logger
	Targets        *target.Registry
	Workloads      *workload.Registry
	// Interactive says whether stderr is a terminal (progress bars).
	Interactive bool
	Args        []string

	global *pflag.FlagSet // the root's persistent flags
	// own is where dbmark's notes around a run go (preflight warnings);
	// nil is Stderr. A peer's front end keeps them off the peer's output.
	own io.Writer
	// notices is where the server's notices go, in its client library's
	// form (the pgbench front end: stderr, as libpq prints them); nil
	// drops them.
	notices    io.Writer
	storeDSN   string
	quiet      bool
	verbose    bool
	verbosity  int  // sysbench's --verbosity, 0 to 5
	noProgress bool // no progress bars (a front end's output is its peer's)
	cpuProfile string
	memProfile string
	profFile   *os.File
}

// NewApp wires the registries.
func NewApp(stdout, stderr io.Writer, args []string) *App {
	a := &App{Stdout: stdout, Stderr: stderr, Args: args, Targets: target.NewRegistry(), Workloads: workload.NewRegistry()}
	postgres.Register(a.Targets)
	mysql.Register(a.Targets)
	sqlite.Register(a.Targets)
	oltp.Register(a.Workloads)
	fileio.Register(a.Workloads)
	tpcb.Register(a.Workloads)
	iibench.Register(a.Workloads)
	wisconsin.Register(a.Workloads)
	query.Register(a.Workloads)
	if f, ok := stderr.(*os.File); ok {
		a.Interactive = term.IsTerminal(int(f.Fd()))
	}
	return a
}

// Option changes the App before its commands are built (tests add
// workloads of their own with it).
type Option func(*App)

// Main runs dbmark with args and returns the process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) int {
	a := NewApp(stdout, stderr, args)
	for _, o := range opts {
		o(a)
	}
	root := a.rootCmd()
	root.SetArgs(args)
	defer a.stopProfile()
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := leadingFlagError(root, args)
	if err == nil {
		err = root.ExecuteContext(ctx)
	}
	if err == nil {
		return ExitOK
	}
	// A peer's front end (or a gate's line) printed its own messages.
	var pe *printedError
	if errors.As(err, &pe) {
		return pe.code
	}
	// An error that can show where it is (a script's line with a caret
	// under the spot) shows it before its one line.
	var d interface{ Detail() string }
	if errors.As(err, &d) && d.Detail() != "" {
		// A server's DETAIL, HINT and CONTEXT may quote a statement's
		// values: the command line's secrets are masked there too.
		fmt.Fprintln(stderr, secret.Message(d.Detail(), args))
	}
	// No secret of the command line is printed, however the error quotes it.
	fmt.Fprintf(stderr, "dbmark: %s\n", oneLine(secret.Message(err.Error(), args)))
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitUsage
}

// oneLine keeps error output to one line.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func (a *App) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "dbmark",
		Short:         "Benchmark databases and storage, and keep every number with its context",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			level, err := a.logLevel(cmd.Flags().Changed("verbosity"))
			if d := cmd.Flags().Lookup("debug"); d != nil && d.Value.String() == "true" {
				level = slog.LevelDebug // a workload's --debug (pgbench's -d) is the debug log too
			}
			a.Logger = slog.New(slog.NewTextHandler(a.Stderr, &slog.HandlerOptions{Level: level, ReplaceAttr: dropTime}))
			if err != nil {
				return err
			}
			a.startProfile()
			return nil
		},
	}
	root.CompletionOptions.HiddenDefaultCmd = true
	pf := root.PersistentFlags()
	a.global = pf
	pf.StringVar(&a.storeDSN, "store", os.Getenv("DBMARK_STORE"), "results store: a SQLite file (default in the data directory) or postgres://... ($DBMARK_STORE)")
	pf.BoolVarP(&a.quiet, "quiet", "q", false, "log only warnings and errors")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "log debugging detail")
	pf.IntVar(&a.verbosity, "verbosity", 3, "sysbench's log level: 0-2 as --quiet (0 and 1 log errors only), 3 and 4 the default, 5 as --verbose")
	pf.StringVar(&a.cpuProfile, "cpu-profile", "", "write a CPU profile of dbmark itself to this file")
	_ = pf.MarkHidden("cpu-profile")
	pf.StringVar(&a.memProfile, "mem-profile", "", "write a profile of dbmark's own allocations to this file at the end")
	_ = pf.MarkHidden("mem-profile")
	root.SetFlagErrorFunc(a.flagError)
	root.AddCommand(a.workloadCmd("run", "Run a workload and record its result"))
	root.AddCommand(a.workloadCmd("prepare", "Create and load what a workload needs"))
	root.AddCommand(a.workloadCmd("cleanup", "Remove what prepare created"))
	root.AddCommand(a.sweepCmd())
	root.AddCommand(a.compareCmd())
	root.AddCommand(a.gateCmd())
	root.AddCommand(a.checkCmd())
	root.AddCommand(a.resultsCmd())
	root.AddCommand(a.reportCmd())
	root.AddCommand(a.quickCmd())
	root.AddCommand(a.versionCmd())
	root.AddCommand(a.sysinfoCmd())
	root.AddCommand(a.serveCmd())
	root.AddCommand(a.submitCmd())
	root.AddCommand(a.reproduceCmd())
	root.AddCommand(a.mergeCmd())
	root.AddCommand(a.pgbenchCmd())
	root.AddCommand(a.sysbenchCmd())
	return root
}

// logLevel is the level -q, -v and sysbench's --verbosity (when changed)
// ask for. sysbench's levels are 0 critical, 1 errors, 2 warnings, 3
// notices (its default), 4 information and 5 debug; dbmark logs errors,
// warnings, information (the default) and debug, so --verbosity sets -q or
// -v, which quick passes on to its runs. -q and -v win when given too.
func (a *App) logLevel(verbosityGiven bool) (slog.Level, error) {
	if verbosityGiven && (a.verbosity < 0 || a.verbosity > 5) {
		return slog.LevelInfo, withCode(ExitUsage, fmt.Errorf("--verbosity %d: must be between 0 (critical messages only) and 5 (debug)", a.verbosity))
	}
	if verbosityGiven && !a.quiet && !a.verbose {
		switch {
		case a.verbosity <= 1:
			a.quiet = true
			return slog.LevelError, nil
		case a.verbosity == 2:
			a.quiet = true
		case a.verbosity == 5:
			a.verbose = true
		}
	}
	switch {
	case a.verbose:
		return slog.LevelDebug, nil
	case a.quiet:
		return slog.LevelWarn, nil
	}
	return slog.LevelInfo, nil
}

func dropTime(_ []string, at slog.Attr) slog.Attr {
	if at.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return at
}

// normalize lets sysbench's spellings work: --table_size for --table-size,
// and the names sysbench and pgbench use for dbmark's options.
func normalize(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	name = strings.ReplaceAll(name, "_", "-")
	switch name {
	case "warmup-time":
		name = "warmup"
	case "rand-seed", "random-seed":
		name = "seed"
	case "mysql-ignore-errors":
		name = "ignore-errors"
	case "percentile":
		name = "percentiles"
	}
	return pflag.NormalizedName(name)
}

func (a *App) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and VCS revision",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.printVersion()
		},
	}
}

func (a *App) printVersion() error {
	bi := buildinfo.Get()
	mod := ""
	if bi.Modified {
		mod = "+modified"
	}
	fmt.Fprintf(a.Stdout, "dbmark %s (revision %s%s, %s)\n", bi.Version, bi.Revision, mod, bi.Go)
	return nil
}

// startProfile starts --cpu-profile: where dbmark spends its CPU is part of
// what it measures, since every cycle the client takes is the server's loss.
func (a *App) startProfile() {
	if a.cpuProfile == "" {
		return
	}
	f, err := os.Create(a.cpuProfile)
	if err != nil {
		a.Logger.Warn("cannot write the CPU profile", "err", err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		a.Logger.Warn("cannot start the CPU profile", "err", err)
		f.Close()
		return
	}
	a.profFile = f
}

func (a *App) stopProfile() {
	if a.profFile != nil {
		pprof.StopCPUProfile()
		a.profFile.Close()
	}
	if a.memProfile == "" {
		return
	}
	// Allocations on a worker's path are garbage the collector must chase
	// while the workers run: this profile says where they come from.
	f, err := os.Create(a.memProfile)
	if err != nil {
		a.Logger.Warn("cannot write the allocation profile", "err", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		a.Logger.Warn("cannot write the allocation profile", "err", err)
	}
}

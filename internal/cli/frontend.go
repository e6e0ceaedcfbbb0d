package cli

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/workload"
)

// A front end ("dbmark sysbench ...", "dbmark pgbench ...") takes a peer's
// command line whole, reads it with the peer's own grammar (packages
// frontend/sysbench and frontend/pgbench), runs dbmark's workload with
// it, and prints the peer's lines on the peer's streams. What the two
// share lives here: the command, dbmark's own log and options, and the
// front end's part in a run (frontEnd).

// frontEndCmd is a front end's command: cobra parses nothing of it, the
// front end reads args.
func (a *App) frontEndCmd(use, short, long string, run func(ctx context.Context, args []string) error) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Long: long,
		DisableFlagParsing: true,
		Args:               cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), args)
		},
	}
}

// frontEndLog sends dbmark's own log, at level and above, to w: the
// peer's streams carry the peer's lines only.
func (a *App) frontEndLog(w io.Writer, level slog.Level) {
	a.Logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: dropTime}))
}

// frontEndFlags are dbmark's options of workload w for verb, in a set of
// their own, which the front end fills from the peer's command line.
func (a *App) frontEndFlags(name string, w workload.Spec, verb string) (*pflag.FlagSet, *runFlags) {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := &runFlags{}
	a.bindWorkload(fs, f, w, verb)
	return fs, f
}

// frontEnd is a front end's part in a run: the peer's report and lines in
// place of dbmark's, and where dbmark's own lines go.
type frontEnd struct {
	// report prints the peer's report of the run, in place of dbmark's
	// summary.
	report func(res *result.Result)
	// own receives dbmark's own lines (where the result went); nil drops
	// them. With summary, dbmark's summary goes there too, before the
	// peer's report.
	own     io.Writer
	summary bool
	// live is the peer's form of the live line, printed on liveOut in
	// place of dbmark's; nil leaves the workload's LiveLine hook (the
	// peer's form on stderr) or dbmark's.
	live    func(p result.Interval, threads int) string
	liveOut io.Writer
	// started says the clients are ready (sysbench's "Threads started!").
	started func()
	// tune sets what the peer asks of the runner beyond dbmark's options
	// (sysbench's checkpoints and forced shutdown).
	tune func(*runner.Config)
}

func (fe *frontEnd) ownOut() io.Writer {
	if fe.own == nil {
		return io.Discard
	}
	return fe.own
}

// exitWith ends the command with code, having said all there was to say.
func exitWith(code int) error {
	if code == 0 {
		return nil
	}
	return &printedError{code: code}
}

// prefixWriter starts each line written through it with prefix. Writes
// are whole lines or parts of one (each from one goroutine at a time).
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	mid    bool // the last write ended inside a line
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []byte
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		if !p.mid {
			out = append(out, p.prefix...)
		}
		out = append(out, line...)
		p.mid = !strings.HasSuffix(line, "\n")
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// lockedWriter lets loaders in parallel tell their steps line by line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// writerFunc is an io.Writer that hands each write to a function.
type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) {
	f(b)
	return len(b), nil
}

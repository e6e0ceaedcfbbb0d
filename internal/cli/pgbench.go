package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbmark/dbmark/internal/buildinfo"
	"github.com/dbmark/dbmark/internal/frontend/pgbench"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/secret"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/workload/tpcb"
	"github.com/dbmark/dbmark/internal/workload/tpcb/script"
)

// pgbenchCmd is "dbmark pgbench ...": pgbench 15's command line and output
// over dbmark's tpcb workload (docs/pgbench.md).
func (a *App) pgbenchCmd() *cobra.Command {
	return a.frontEndCmd("pgbench [pgbench's options]... [DBNAME]",
		"pgbench 15's command line and output, running dbmark's tpcb workload: put \"dbmark \" in front of a pgbench command", "",
		a.pgbench)
}

// pgbenchOut writes pgbench's lines, with PGPASSWORD's value masked in
// what the server said.
type pgbenchOut struct {
	a  *App
	pw string
}

func (p pgbenchOut) mask(s string) string {
	if len(p.pw) >= 4 {
		s = maskWord(s, p.pw)
	}
	return secret.Message(s, p.a.Args)
}

// maskWord masks w where it stands as a word of its own in s: a password
// that is part of a longer word ("bench" in "pgbench") says nothing.
func maskWord(s, w string) string {
	word := func(b byte) bool {
		return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
	}
	var b strings.Builder
	for {
		i := strings.Index(s, w)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len(w)
		if (i > 0 && word(s[i-1])) || (j < len(s) && word(s[j])) {
			b.WriteString(s[:j])
		} else {
			b.WriteString(s[:i] + secret.Mask)
		}
		s = s[j:]
	}
}

func (p pgbenchOut) errf(format string, args ...any) {
	fmt.Fprint(p.a.Stderr, p.mask(fmt.Sprintf(format, args...)))
}

// pgbench runs one pgbench command line.
func (a *App) pgbench(ctx context.Context, args []string) error {
	out := pgbenchOut{a: a, pw: os.Getenv("PGPASSWORD")}
	osUser := ""
	if u, err := user.Current(); err == nil {
		osUser = u.Username
	}
	inv, err := pgbench.Parse(args, pgbench.Env{Getenv: os.Getenv, User: osUser})
	var ue *pgbench.UsageError
	if errors.As(err, &ue) {
		fmt.Fprintln(a.Stderr, strings.Join(ue.Lines, "\n"))
		return exitWith(1)
	}
	if err != nil {
		return withCode(ExitUsage, err)
	}
	switch inv.Mode {
	case pgbench.ModeHelp:
		fmt.Fprint(a.Stdout, pgbench.Usage)
		return nil
	case pgbench.ModeVersion:
		fmt.Fprintf(a.Stdout, "pgbench (PostgreSQL) 15 (dbmark %s)\n", buildinfo.Get().Version)
		return nil
	case pgbench.ModeList, pgbench.ModeShowScript:
		fmt.Fprint(a.Stderr, inv.Info)
		return nil
	}
	for _, n := range inv.Notes {
		fmt.Fprintln(a.Stderr, n)
	}
	// What dbmark adds goes to stderr with --dbmark-report, else nowhere:
	// pgbench's own streams carry only pgbench's lines.
	extra := io.Discard
	if inv.Extra {
		extra = a.Stderr
	}
	a.own = extra
	a.notices = writerFunc(func(b []byte) { out.errf("%s", b) }) // libpq prints them on stderr
	a.frontEndLog(extra, slog.LevelWarn)

	w := tpcb.New()
	spec := w.Spec()
	verb := "run"
	if inv.Mode == pgbench.ModeInit {
		verb = "prepare"
	}
	fs, f := a.frontEndFlags("pgbench", spec, verb)
	if err := fs.Parse(tpcbArgs(inv, verb)); err != nil {
		return withCode(ExitUsage, fmt.Errorf("pgbench front end: %w", err))
	}
	if err := takeArgs(spec, []string{inv.DBName}); err != nil {
		return err
	}
	w.Opts().PgbenchForm = true
	w.Opts().VerboseErrors = inv.VerboseErrors
	w.Opts().Quiet = inv.Quiet

	tg, _, err := a.openTarget(ctx, spec, f, 0, nil)
	if err != nil {
		out.errf("pgbench: error: %s\n", err)
		return exitWith(1)
	}
	defer tg.Close()
	what := "setup"
	if inv.Mode == pgbench.ModeInit {
		what = "initialization"
	}
	c, err := tg.Connect(ctx)
	if err != nil {
		if msg := postgres.LibpqMessage(err, ""); msg != "" {
			out.errf("pgbench: error: %s", msg)
		} else {
			out.errf("pgbench: error: %s\n", err)
		}
		out.errf("pgbench: error: could not create connection for %s\n", what)
		return exitWith(1)
	}
	if inv.Mode == pgbench.ModeInit {
		c.Close()
		clients := f.planInput(fs, spec).Resolved().Clients
		if err := a.prepare(ctx, spec, f, clients, true); err != nil {
			out.errf("pgbench: error: %s\n", bare(err))
			return exitWith(1)
		}
		return nil
	}
	eng, err := tg.Inspect(ctx)
	if err != nil {
		c.Close()
		out.errf("pgbench: error: %s\n", err)
		return exitWith(1)
	}
	fmt.Fprintln(a.Stdout, pgbench.VersionLine(eng.Version))
	if inv.Debug {
		host := firstOf(inv.Host, os.Getenv("PGHOST"), "/var/run/postgresql")
		port := firstOf(inv.Port, os.Getenv("PGPORT"), "5432")
		fmt.Fprintf(a.Stderr, "pgbench: pghost: %s pgport: %s nclients: %d %s dbName: %s\n",
			host, port, inv.Clients, limitText(inv), inv.DBName)
	}
	partitions := "" // "method:count" when pgbench_accounts is partitioned
	if usesBuiltin(inv) {
		const q = "select count(*) from pgbench_branches"
		if _, _, err := c.QueryRow(ctx, q); err != nil {
			c.Close()
			msg := postgres.LibpqMessage(err, q)
			if msg == "" {
				msg = err.Error() + "\n"
			}
			out.errf("pgbench: error: could not count number of branches: %s", msg)
			out.errf("pgbench: hint: Perhaps you need to do initialization (\"pgbench -i\") in database \"%s\".\n", inv.DBName)
			return exitWith(1)
		}
		// pgbench reports how pgbench_accounts is partitioned.
		const pq = `select coalesce((select case p.partstrat when 'r' then 'range' when 'h' then 'hash' end || ':' ||
  (select count(*) from pg_catalog.pg_inherits i where i.inhparent = c.oid)
  from pg_catalog.pg_partitioned_table p where p.partrelid = c.oid), '')
from pg_catalog.pg_class c where c.relname = 'pgbench_accounts' and pg_catalog.pg_table_is_visible(c.oid)`
		if v, _, err := c.QueryRow(ctx, pq); err == nil {
			partitions = v
		}
	}
	c.Close()
	if !inv.NoVacuum {
		fmt.Fprint(a.Stderr, "starting vacuum...end.\n")
		if inv.VacuumAll {
			fmt.Fprint(a.Stderr, "starting vacuum pgbench_accounts...end.\n")
		}
	}
	fe := &frontEnd{
		own: extra, summary: true, // dbmark's summary with --dbmark-report
		report: func(res *result.Result) {
			if m, n, ok := strings.Cut(partitions, ":"); ok && res.Summary.Extra != nil {
				res.Summary.Extra["partition_method"], res.Summary.Extra["partitions"] = m, n
			}
			pgbench.Report(a.Stdout, res)
		},
	}
	res, err := a.runOne(ctx, spec, fs, f, runOpts{out: a.Stdout, front: fe})
	return pgbenchOutcome(res, err, inv, out)
}

// pgbenchOutcome ends a run as pgbench does: the aborted clients' errors
// and "Run was aborted" with exit 2, or what kept the run from starting
// with exit 1 (the exit codes of dbmark's failures otherwise).
func pgbenchOutcome(res *result.Result, err error, inv *pgbench.Invocation, out pgbenchOut) error {
	if res == nil {
		if err == nil {
			return nil
		}
		var ee *exitError
		code := 1
		if errors.As(err, &ee) {
			code = ee.code
		}
		out.errf("pgbench: error: %s\n", bare(err))
		return &printedError{code: code}
	}
	if res.Status == result.StatusFailed {
		var ae *runner.AbortError
		var fe *runner.FatalError
		switch {
		case errors.As(err, &ae):
			for _, e := range ae.All {
				out.errf("%s", abortLines(e, inv))
			}
		case errors.As(err, &fe):
			out.errf("%s", abortLines(fe, inv))
		default:
			out.errf("pgbench: error: %s\n", res.Error)
		}
		out.errf("pgbench: error: Run was aborted; the above results are incomplete.\n")
		return exitWith(2)
	}
	if res.Status == result.StatusInterrupted {
		return exitWith(ExitInterrupted)
	}
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return &printedError{code: ee.code}
		}
	}
	return nil
}

// abortLines is what pgbench prints when a client aborts on err.
func abortLines(err error, inv *pgbench.Invocation) string {
	var ce *script.CommandError
	if !errors.As(err, &ce) {
		var fe *runner.FatalError
		if errors.As(err, &fe) && fe.Err != nil {
			err = fe.Err
		}
		return "pgbench: error: " + err.Error() + "\n"
	}
	if ce.Meta == "" {
		if msg := postgres.LibpqMessage(ce.Err, ce.SQL); msg != "" {
			prefix := ""
			if inv.QueryMode == "prepared" && strings.Contains(ce.Err.Error(), "prepare \"") {
				// pgbench reports the failed PREPARE, then the statement
				// it could not run for want of it.
				prefix = "pgbench: error: " + msg
				msg = fmt.Sprintf("ERROR:  prepared statement \"P_%d\" does not exist\n", ce.Command)
			}
			return prefix + fmt.Sprintf("pgbench: error: client %d script %d aborted in command %d query 0: %s", ce.Client, ce.Script, ce.Command, msg)
		}
	}
	var re *script.RuntimeError
	msg := ce.Err.Error()
	if errors.As(ce.Err, &re) {
		msg = re.Msg
	}
	if ce.Meta == "" {
		if name, ok := strings.CutPrefix(msg, "invalid variable name: "); ok {
			// A \gset or \aset into a name no variable may have.
			name, _ = strconv.Unquote(name)
			return fmt.Sprintf("pgbench: error: gset: %s\npgbench: error: client %d script %d command %d query 0: error storing into variable %s\n",
				msg, ce.Client, ce.Script, ce.Command, name)
		}
		return fmt.Sprintf("pgbench: error: client %d script %d command %d query 0: %s\n", ce.Client, ce.Script, ce.Command, msg)
	}
	// pgbench names the failure of an expression's evaluation (\set, \if)
	// and of a command's execution apart, and quotes the expression's
	// error alone.
	failed := "execution"
	switch ce.Meta {
	case "set", "if", "elif":
		failed = "evaluation"
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, "\\"+ce.Meta+": "), ce.Meta+": ")
	}
	return fmt.Sprintf("pgbench: error: %s\npgbench: error: client %d aborted in command %d (%s) of script %d; %s of meta-command failed\n",
		msg, ce.Client, ce.Command, ce.Meta, ce.Script, failed)
}

// bare is err without the exit code dbmark's commands give it.
func bare(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.err
	}
	return err
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func limitText(inv *pgbench.Invocation) string {
	if inv.Duration > 0 {
		return "duration: " + strconv.Itoa(inv.Duration)
	}
	return "nxacts: " + strconv.Itoa(inv.Transactions)
}

func usesBuiltin(inv *pgbench.Invocation) bool {
	for _, s := range inv.Scripts {
		if s.Builtin {
			return true
		}
	}
	return false
}

// tpcbArgs is the invocation as dbmark's tpcb options, for verb.
func tpcbArgs(inv *pgbench.Invocation, verb string) []string {
	var a []string
	add := func(v ...string) { a = append(a, v...) }
	itoa := strconv.Itoa
	ftoa := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if inv.Host != "" {
		add("--host", inv.Host)
	}
	if inv.Port != "" {
		add("--port", inv.Port)
	}
	if inv.User != "" {
		add("--username", inv.User)
	}
	if inv.Seed != "" {
		add("--seed", inv.Seed)
	}
	if verb == "prepare" {
		add("--scale", itoa(inv.Scale), "--fillfactor", itoa(inv.Fillfactor), "--init-steps", inv.InitSteps)
		if inv.Unlogged {
			add("--unlogged-tables")
		}
		if inv.Partitions > 0 {
			add("--partitions", itoa(inv.Partitions), "--partition-method", inv.PartitionMethod)
		}
		if inv.Tablespace != "" {
			add("--tablespace", inv.Tablespace)
		}
		if inv.IndexTS != "" {
			add("--index-tablespace", inv.IndexTS)
		}
		return a
	}
	add("--client", itoa(inv.Clients), "--jobs", itoa(inv.Jobs), "--protocol", inv.QueryMode, "--max-tries", itoa(inv.MaxTries))
	// pgbench never gives up on a client that waits: its locks are the
	// script's business.
	add("--stall-timeout", "0")
	if inv.ScaleGiven {
		add("--scale", itoa(inv.Scale))
	}
	if inv.Duration > 0 {
		add("-T", itoa(inv.Duration))
	} else {
		add("--transactions", itoa(inv.Transactions))
	}
	for _, s := range inv.Scripts {
		spec := s.Name + "@" + itoa(s.Weight)
		if s.Builtin {
			add("--builtin", spec)
		} else {
			add("--file", spec)
		}
	}
	for _, d := range inv.Defines {
		add("--define", d)
	}
	flag := func(on bool, name string) {
		if on {
			add(name)
		}
	}
	flag(inv.NoVacuum, "--no-vacuum")
	flag(inv.VacuumAll, "--vacuum-all")
	flag(inv.Connect, "--connect")
	flag(inv.ReportPerCommand, "--report-per-command")
	flag(inv.FailuresDetailed, "--failures-detailed")
	flag(inv.VerboseErrors, "--verbose-errors")
	flag(inv.ProgressTimestamp, "--progress-timestamp")
	flag(inv.NoStore, "--no-store")
	flag(inv.Debug, "--debug")
	if inv.Rate > 0 {
		add("--rate", ftoa(inv.Rate))
	}
	if inv.LatencyLimit > 0 {
		add("--latency-limit", ftoa(inv.LatencyLimit))
	}
	if inv.Progress > 0 {
		add("--progress", itoa(inv.Progress))
	}
	if inv.Log {
		add("--log")
		if inv.LogPrefixGiven {
			add("--log-prefix", inv.LogPrefix)
		}
		if inv.SamplingRate > 0 {
			add("--sampling-rate", ftoa(inv.SamplingRate))
		}
		if inv.AggregateInterval > 0 {
			add("--aggregate-interval", itoa(inv.AggregateInterval))
		}
	}
	return a
}

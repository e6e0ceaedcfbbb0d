package site

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/dbmark/dbmark/internal/redact"
	"github.com/dbmark/dbmark/internal/result"
)

// reproduceView is what a result page gives to run the result again: a
// script that runs as pasted in a POSIX shell once its variables say where
// (every value the submitter sent is single-quoted, so nothing in it can
// run as a command), and what the variables are.
type reproduceView struct {
	Vars     []reproduceVar
	Commands []string
	// Missing names the options whose value was removed when the result
	// was published and that no default can stand for (a script file):
	// the user must give their own.
	Missing []string
}

type reproduceVar struct{ Name, Value, Says string }

// defaultTarget is the target the script runs against unless the user
// sets TARGET: a SQLite file, so that it runs as pasted anywhere.
const defaultTarget = "sqlite:///tmp/dbmark-reproduce.db"

// reproduce builds the script for sub, published as id on base: cleanup
// and prepare (for a workload that has them: prepares), the run (or the sweep) and submit as a reproduction. The run
// does the work the result did: its threads, limits and every option that
// changes the work, given explicitly so that a dbmark with other defaults
// does the same; its output options and where it wrote are not repeated,
// and the result is stored, so submit has it.
// WorkloadInfo is what the dbmark serving the site knows of a workload
// (Config.Workload): whether it has prepare and cleanup, the options that
// change what prepare builds (when it declares them), and the defaults of
// run's options as a result records them.
type WorkloadInfo struct {
	Prepares       bool
	PrepareOptions []string
	Defaults       map[string]string
}

func reproduce(sub *Submission, base, id string, info WorkloadInfo) reproduceView {
	var v reproduceView
	p := sub.Primary()
	name := p.Workload.Name
	vars := map[string]bool{}
	// A query suite's file is written from the queries it recorded.
	queries := p.Queries != nil && p.Workload.Options["file"] != ""
	// value quotes an option's value, or stands a variable for a value
	// removed when the result was published.
	value := func(opt, val string) string {
		if queries && opt == "file" {
			return queriesFile
		}
		if !strings.Contains(val, redact.Mask) {
			return shellQuote(val)
		}
		n := strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(opt))
		if !vars[n] {
			vars[n] = true
			if opt == "dir" || strings.HasSuffix(opt, "-dir") {
				v.Vars = append(v.Vars, reproduceVar{n, "/tmp/dbmark-reproduce-" + opt, "a directory on the storage to measure (the original's path was removed when it was published)"})
			} else {
				v.Vars = append(v.Vars, reproduceVar{n, "", "your own --" + opt + " (the original's was removed when it was published)"})
				v.Missing = append(v.Missing, "--"+opt)
			}
		}
		return `"$` + n + `"`
	}
	// A database is named by a URL; a workload with a target of its own
	// (files: a directory) takes no --target.
	database := strings.Contains(p.Target.URL, "://")
	head := func(cmd string) []string {
		args := []string{"dbmark", cmd, name}
		if database {
			args = append(args, `--target "$TARGET"`)
		}
		return args
	}
	if database {
		v.Vars = append([]reproduceVar{{"TARGET", defaultTarget, "your database: postgres://USER@HOST/DB, mysql://USER@HOST/DB or sqlite:///PATH (a password from PGPASSWORD or in the URL)"}}, v.Vars...)
	}
	if queries {
		v.Commands = append(v.Commands, queriesHeredoc(p.Queries))
	}
	cmd := p.Command
	if sub.Sweep != nil {
		cmd = append([]string{"dbmark", "sweep", name}, sub.Sweep.Args...)
	}
	opts := reproduceOptions(p, cmd, info.Defaults)
	_, typed := typedOptions(cmd)
	prep := head("prepare")
	for _, o := range opts {
		// The options the workload says change what prepare builds, a
		// path (where the data goes, as --target), or, when it says none,
		// those the command named that prepare takes; never every option
		// a front end's run recorded.
		if declared := slices.Contains(info.PrepareOptions, o[0]); declared || strings.Contains(o[1], redact.Mask) ||
			len(info.PrepareOptions) == 0 && typed && !result.RunOnly(o[0]) && o[0] != "threads" {
			prep = append(prep, "--"+o[0]+"="+value(o[0], o[1]))
		}
	}
	for _, vr := range v.Vars {
		if strings.HasPrefix(vr.Value, "/tmp/") {
			v.Commands = append(v.Commands, `mkdir -p "$`+vr.Name+`"`)
		}
	}
	if info.Prepares {
		clean := slices.Clone(prep)
		clean[1] = "cleanup"
		v.Commands = append(v.Commands, strings.Join(clean, " ")+" || true", strings.Join(prep, " "))
	}
	var run []string
	ref := "last"
	if sw := sub.Sweep; sw != nil {
		run = append(head("sweep"), sweepArgs(sw.Args, value)...)
		ref = "sweep:last"
	} else {
		run = head("run")
		for _, o := range opts {
			run = append(run, "--"+o[0]+"="+value(o[0], o[1]))
		}
	}
	v.Commands = append(v.Commands, strings.Join(run, " "),
		"dbmark submit "+ref+" --server "+shellQuote(base)+" --reproduces "+id)
	for i, vr := range v.Vars {
		if vr.Value != "" {
			v.Vars[i].Value = shellQuote(vr.Value)
		}
	}
	return v
}

// reproduceOptions are the options a run is reproduced with, threads
// first: those the command that made it named (with the values the run
// recorded), or, when that command cannot be read (a front end's short
// options), those whose value is not this dbmark's default (defaults), or
// without them every option that changes the work; and always its
// threads, time and warm-up. Never how it was reported, its seed, a sweep's own
// options or its server settings (which the user's server has or not).
func reproduceOptions(p *result.Result, cmd []string, defaults map[string]string) [][2]string {
	opts := p.Workload.Options
	typed, ok := typedOptions(cmd)
	var out [][2]string
	if t, has := opts["threads"]; has {
		out = append(out, [2]string{"threads", t})
	}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		val := strings.TrimSuffix(strings.TrimPrefix(opts[k], "["), "]") // a list, as pflag prints it
		_, server := result.ServerSettingOf(k)
		switch {
		case k == "threads" || server || val == "" || !result.AppliesTo(k, p.Target.Kind) || notReproduced[k] ||
			result.ClassOf(k) == result.OutputOption:
		case k == "time" || k == "warmup" || k == "events" && val != "0":
			out = append(out, [2]string{k, val})
		case !ok && defaults != nil:
			if d, has := defaults[k]; has && d != opts[k] {
				out = append(out, [2]string{k, val})
			}
		case ok && typed[k], !ok && result.ClassOf(k) == result.WorkOption && (k != "rate" || val != "0"):
			out = append(out, [2]string{k, val})
		}
	}
	return out
}

// notReproduced are options of the runner that change neither the work
// nor its figures.
var notReproduced = map[string]bool{"strict": true, "verbose-errors": true, "stall-timeout": true, "seed": true}

// sweepOnly are a sweep's own options: its command line names them, its
// runs' and prepare's do not take them.
var sweepOnly = map[string]bool{"iterations": true, "max-iterations": true, "until-cv": true, "zip": true}

// typedOptions are the long options named in a run's or a sweep's command
// line (dbmark run|sweep WORKLOAD ...); ok is false for any other command,
// or one with a short option, whose name the result does not record.
func typedOptions(cmd []string) (names map[string]bool, ok bool) {
	if len(cmd) < 3 || cmd[1] != "run" && cmd[1] != "sweep" {
		return nil, false
	}
	names = map[string]bool{}
	for _, a := range cmd[3:] {
		switch {
		case strings.HasPrefix(a, "--"):
			n, _, _ := strings.Cut(a[2:], "=")
			names[n] = cmd[1] != "sweep" || !sweepOnly[n]
		case len(a) > 1 && a[0] == '-' && (a[1] < '0' || a[1] > '9'):
			return nil, false
		}
	}
	return names, true
}

// sweepArgs are a sweep's recorded arguments (each --name=value) without
// where it ran and wrote.
func sweepArgs(args []string, value func(opt, val string) string) []string {
	var out []string
	for _, a := range args {
		n, val, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok || !strings.HasPrefix(a, "--") || result.ClassOf(n) == result.OutputOption || n == "seed" {
			continue
		}
		out = append(out, "--"+n+"="+value(n, val))
	}
	return out
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:,@%+=-]+$`)

// shellQuote makes s one word to a POSIX shell, taken as it is.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// reproduceText is the script as one text, for the page's <pre>.
func (v reproduceView) Text() string {
	var b strings.Builder
	for _, vr := range v.Vars {
		fmt.Fprintf(&b, "# %s: %s\n%s=%s\n", vr.Name, vr.Says, vr.Name, vr.Value)
	}
	for _, c := range v.Commands {
		b.WriteString(c + "\n")
	}
	return b.String()
}

// queriesFile is the file a reproduction writes a query suite's queries to.
const queriesFile = "dbmark-queries.sql"

// queriesHeredoc writes the suite's queries, each under its label, to
// queriesFile. The here-document's quoted end word, which no line of the
// text is, keeps the shell from reading anything in it.
func queriesHeredoc(q *result.Queries) string {
	var b strings.Builder
	for _, x := range q.List {
		label := strings.Join(strings.Fields(x.Label), " ")
		sql := strings.TrimSpace(x.SQL)
		if !strings.HasSuffix(sql, ";") {
			sql += ";"
		}
		fmt.Fprintf(&b, "-- %s\n%s\n", label, sql)
	}
	text := b.String()
	end := "DBMARK_QUERIES"
	for i := 0; slices.Contains(strings.Split(text, "\n"), end); i++ {
		end = fmt.Sprintf("DBMARK_QUERIES_%d", i)
	}
	return "cat > " + queriesFile + " <<'" + end + "'\n" + text + end
}

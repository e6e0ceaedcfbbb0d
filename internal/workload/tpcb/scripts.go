package tpcb

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/workload/tpcb/script"
)

// scriptArg is one -b, -f, -S or -N, in command-line order: pgbench
// numbers the scripts in that order (the log's script_no).
type scriptArg struct {
	builtin bool
	spec    string // NAME[@W] or FILE[@W]
}

// scriptFlag appends -b or -f values to the shared ordered list.
type scriptFlag struct {
	list      *[]scriptArg
	builtin   bool
	listAsked *bool // -b list, pgbench's way to ask for the builtins' names
	seen      []string
}

func (f *scriptFlag) Set(v string) error {
	if f.builtin && v == "list" {
		*f.listAsked = true
		return nil
	}
	*f.list = append(*f.list, scriptArg{builtin: f.builtin, spec: v})
	f.seen = append(f.seen, v)
	return nil
}
func (f *scriptFlag) Type() string   { return "stringArray" }
func (f *scriptFlag) String() string { return "[" + strings.Join(f.seen, ",") + "]" }

// Args are the values given, one per -b or -f: how a sweep writes the
// option back for each of its runs.
func (f *scriptFlag) Args() []string { return f.seen }

// shortcutFlag is -S or -N: a boolean that adds its builtin to the list.
type shortcutFlag struct {
	list *[]scriptArg
	name string
	on   bool
}

func (f *shortcutFlag) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	if on { // each time, as pgbench adds the script again for each -S
		*f.list = append(*f.list, scriptArg{builtin: true, spec: f.name})
	}
	f.on = on
	return nil
}
func (f *shortcutFlag) Type() string     { return "bool" }
func (f *shortcutFlag) String() string   { return strconv.FormatBool(f.on) }
func (f *shortcutFlag) IsBoolFlag() bool { return true }

func bindScripts(fs *pflag.FlagSet, o *Options) {
	fs.VarP(&scriptFlag{list: &o.Scripts, builtin: true, listAsked: &o.ListBuiltins}, "builtin", "b", "builtin script NAME[@WEIGHT]: tpcb-like, simple-update or select-only (unique prefixes work; list prints them); repeatable")
	fs.StringVar(&o.ShowScript, "show-script", "", "print the builtin script NAME (a unique prefix works) and exit")
	fs.VarP(&scriptFlag{list: &o.Scripts}, "file", "f", "custom script FILE[@WEIGHT] in pgbench's language; repeatable")
	fs.VarP(&shortcutFlag{list: &o.Scripts, name: "select-only"}, "select-only", "S", "the select-only builtin (-b select-only)")
	fs.Lookup("select-only").NoOptDefVal = "true"
	fs.VarP(&shortcutFlag{list: &o.Scripts, name: "simple-update"}, "skip-some-updates", "N", "the simple-update builtin (-b simple-update)")
	fs.Lookup("skip-some-updates").NoOptDefVal = "true"
}

// Inform prints what pgbench's -b list and --show-script print (pgbench
// writes them to its standard error; here they go to standard output, so
// a builtin can be saved as the start of a custom script).
func (w *Workload) Inform(out io.Writer) (bool, error) {
	o := &w.opt
	switch {
	case o.ListBuiltins:
		var b strings.Builder
		b.WriteString("Available builtin scripts:\n")
		for _, name := range script.BuiltinNames() {
			_, desc, _, err := script.BuiltinText(name)
			if err != nil {
				return false, err
			}
			fmt.Fprintf(&b, "%15s: %s\n", name, desc)
		}
		b.WriteString("\n")
		_, err := io.WriteString(out, b.String())
		return true, err
	case o.ShowScript != "":
		name, desc, text, err := script.BuiltinText(o.ShowScript)
		if err != nil {
			return false, fmt.Errorf("--show-script: %w", err)
		}
		_, err = fmt.Fprintf(out, "-- %s: %s\n%s\n", name, desc, text)
		return true, err
	}
	return false, nil
}

// splitWeight is pgbench's parseScriptWeight: NAME@W with a weight from
// 0 to INT_MAX, 1 when not given.
func splitWeight(spec string) (string, int64, error) {
	i := strings.LastIndexByte(spec, '@')
	if i < 0 {
		return spec, 1, nil
	}
	name, ws := spec[:i], spec[i+1:]
	w, err := strconv.ParseInt(ws, 10, 64)
	if err != nil || ws == "" {
		return "", 0, fmt.Errorf("invalid weight specification: %q (use NAME@WEIGHT with a whole number)", spec)
	}
	if w < 0 || w > math.MaxInt32 {
		return "", 0, fmt.Errorf("weight specification out of range (0 .. %d): %d", math.MaxInt32, w)
	}
	return name, w, nil
}

// scriptEntry is one script of the run.
type scriptEntry struct {
	name    string // in op names: the builtin's name or the file's base name
	title   string // pgbench's: "<builtin: TPC-B (sort of)>" or the file path
	builtin bool
	s       *script.Script
	weight  int64
	op      metrics.Op
	cmdOps  []metrics.Op // per command; -1 when not recorded
	// checks numbers the reads that must find a row in the run's
	// ReadCheck, per command; -1 for the other commands.
	checks []int
}

// ScriptError is a custom script that does not parse: its Error is
// file:line:column: message, Detail the line with a caret under the spot.
type ScriptError = script.SyntaxError

// loadScripts resolves the script arguments (tpcb-like when there are none).
func (o *Options) loadScripts() ([]*scriptEntry, error) {
	args := o.Scripts
	if len(args) == 0 {
		args = []scriptArg{{builtin: true, spec: "tpcb-like"}}
	}
	var out []*scriptEntry
	names := map[string]int{}
	var total int64
	for _, a := range args {
		spec, w, err := splitWeight(a.spec)
		if err != nil {
			return nil, err
		}
		e := &scriptEntry{weight: w, builtin: a.builtin}
		if a.builtin {
			if e.s, err = script.Builtin(spec); err != nil {
				return nil, err
			}
			for _, n := range script.BuiltinNames() {
				if strings.HasPrefix(n, spec) {
					e.name = n
				}
			}
			e.title = e.s.Name
		} else {
			src, err := os.ReadFile(spec)
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return nil, fmt.Errorf("--file %s: no such file", spec)
				}
				return nil, fmt.Errorf("--file %s: %w", spec, err)
			}
			if e.s, err = script.Parse(spec, string(src)); err != nil {
				return nil, err
			}
			if len(e.s.Commands) == 0 {
				return nil, fmt.Errorf("--file %s: empty script (it has no commands)", spec)
			}
			e.name, e.title = filepath.Base(spec), spec
		}
		if n := names[e.name]; n > 0 {
			names[e.name]++
			e.name += "#" + strconv.Itoa(n+1)
		} else {
			names[e.name] = 1
		}
		e.s.Index = len(out)
		total += w
		out = append(out, e)
	}
	if total == 0 {
		return nil, errors.New("total script weight must not be zero (give a script a weight above 0)")
	}
	return out, nil
}

// parseDefines reads -D NAME=VALUE.
func (o *Options) parseDefines() (map[string]string, error) {
	vars := map[string]string{}
	for _, d := range o.Defines {
		name, val, ok := strings.Cut(d, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("-D %q: invalid variable definition (use NAME=VALUE)", d)
		}
		vars[name] = val
	}
	return vars, nil
}

package cli

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// closest returns the candidate nearest to s by edit distance, if it is
// near enough to be a likely typo: within a third of the name's length
// (at least 1, at most 3 edits), or the only candidate s begins.
func closest(s string, candidates []string) (string, bool) {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := min(max(len(s)/3, 1), 3)
	if bestD >= 0 && bestD <= limit {
		return best, true
	}
	var prefixed []string
	for _, c := range candidates {
		if len(s) >= 3 && strings.HasPrefix(c, s) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0], true
	}
	return "", false
}

// editDistance is the edit distance between a and b counting a swap of
// two neighbouring letters as one edit (optimal string alignment), in
// bytes: names and flags are ASCII.
func editDistance(a, b string) int {
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(a)][len(b)]
}

// unknownWorkload is the one line for a workload name no command knows,
// with the likely one when the name looks like a typo of it.
func unknownWorkload(name string, known []string) error {
	if s, ok := closest(name, known); ok {
		return withCode(ExitUsage, fmt.Errorf("unknown workload %q: did you mean %s? (known: %s)", name, s, strings.Join(known, ", ")))
	}
	return withCode(ExitUsage, fmt.Errorf("unknown workload %q (known: %s)", name, strings.Join(known, ", ")))
}

// flagError turns a flag parsing error into one line with a hint. On a
// command that takes a workload ("run WORKLOAD") the flags are the
// workload's, so an unknown flag after an unknown workload is reported as
// the workload; an unknown flag of a known command offers the nearest
// flag it has.
func flagError(cmd *cobra.Command, err error) error {
	flag, isUnknown := unknownFlagName(err)
	if isUnknown && cmd.HasSubCommands() {
		if args := cmd.Flags().Args(); len(args) > 0 {
			var known []string
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() {
					known = append(known, sub.Name())
				}
			}
			return unknownWorkload(args[0], known)
		}
		return withCode(ExitUsage, fmt.Errorf("%v: name the workload before its flags (see: %s --help)", err, cmd.CommandPath()))
	}
	if isUnknown {
		var names []string
		visit := func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		}
		cmd.Flags().VisitAll(visit)
		cmd.InheritedFlags().VisitAll(visit)
		if s, ok := closest(flag, names); ok {
			return withCode(ExitUsage, fmt.Errorf("%v: did you mean --%s? (see: %s --help)", err, s, cmd.CommandPath()))
		}
	}
	return withCode(ExitUsage, fmt.Errorf("%v (see: %s --help)", err, cmd.CommandPath()))
}

// unknownFlagName returns the name of the long flag pflag did not know
// ("unknown flag: --tme" gives "tme").
func unknownFlagName(err error) (string, bool) {
	rest, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, "=")
	return name, true
}

// flagError is the package's flagError with a bad value reported under
// the name the user typed (pgbench's --random-seed, not dbmark's --seed
// it stands for) and in words rather than Go's parser's.
func (a *App) flagError(cmd *cobra.Command, err error) error {
	if m := badValue.FindStringSubmatch(err.Error()); m != nil {
		err = fmt.Errorf("invalid value %q for option %s: %s", m[1], typedName(a.Args, m[2], m[3]), plainReason(m[4]))
	}
	return flagError(cmd, err)
}

// badValue is pflag's error for a value its flag's parser refused: the
// value, the flag's shorthand and name, and the parser's reason.
var badValue = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-(\S), )?--(\S+)" flag: (.*)$`)

// typedName is how args spelled the flag name (or its shorthand): the
// first argument that the normalization makes that flag.
func typedName(args []string, short, name string) string {
	for _, arg := range args {
		if arg == "--" {
			break
		}
		if long, ok := strings.CutPrefix(arg, "--"); ok {
			long, _, _ = strings.Cut(long, "=")
			if string(normalize(nil, long)) == name {
				return "--" + long
			}
			continue
		}
		if short != "" && strings.HasPrefix(arg, "-"+short) {
			return "-" + short
		}
	}
	return "--" + name
}

// goParse is the wording of Go's strconv errors.
var goParse = regexp.MustCompile(`strconv\.Parse(Int|Uint|Float|Bool): parsing "[^"]*": (invalid syntax|value out of range)`)

// plainReason says why a value was refused without Go's parser's words.
func plainReason(reason string) string {
	return goParse.ReplaceAllStringFunc(reason, func(s string) string {
		m := goParse.FindStringSubmatch(s)
		switch {
		case m[2] == "value out of range":
			return "out of range"
		case m[1] == "Int":
			return "not a whole number"
		case m[1] == "Uint":
			return "not a whole number of 0 or more"
		case m[1] == "Float":
			return "not a number"
		}
		return "not true or false"
	})
}

// leadingFlagError checks the global flags given before the command's
// name. Cobra, looking for the command, takes an unknown flag there for
// one with a value and skips the word after it: "dbmark --frobnicate
// results list" would report the unknown command "list". The unknown
// flag is the error, and is named.
func leadingFlagError(root *cobra.Command, args []string) error {
	fs := root.PersistentFlags()
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" || !strings.HasPrefix(arg, "-") || arg == "-" {
			return nil // the command's name, or the end of the flags
		}
		var f *pflag.Flag
		name, _, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if strings.HasPrefix(arg, "--") {
			f = fs.Lookup(string(normalize(fs, name)))
		} else if len(name) == 1 {
			f = fs.ShorthandLookup(name)
		} else {
			return nil // -abc: left to the parser
		}
		if f == nil {
			if name == "h" || name == "help" {
				return nil
			}
			prefix := "--"
			if !strings.HasPrefix(arg, "--") {
				prefix = "-"
			}
			var names []string
			fs.VisitAll(func(f *pflag.Flag) {
				if !f.Hidden {
					names = append(names, f.Name)
				}
			})
			if s, ok := closest(name, names); ok {
				return withCode(ExitUsage, fmt.Errorf("unknown flag: %s%s: did you mean --%s? (see: dbmark --help)", prefix, name, s))
			}
			return withCode(ExitUsage, fmt.Errorf("unknown flag: %s%s (see: dbmark --help)", prefix, name))
		}
		if !hasValue && f.NoOptDefVal == "" {
			i++ // its value is the next word
		}
	}
	return nil
}

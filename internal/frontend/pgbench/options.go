// Package pgbench is dbmark's pgbench front end: pgbench 15's command line
// taken exactly (getopt_long's grammar, its checks in its order and its
// messages), turned into a run of dbmark's tpcb workload, and pgbench's
// output made from the run's result. The command's wiring is in
// internal/cli; nothing here connects to a server.
package pgbench

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/workload/tpcb/script"
)

// Limits and defaults of pgbench 15.
const (
	maxScripts       = 128
	defaultInitSteps = "dtgvp"
	allInitSteps     = "dtgGvpf"
	defaultNXacts    = 10
	intMax           = math.MaxInt32
)

// Mode is what the command line asks for.
type Mode int

// The modes, in the order pgbench looks for them.
const (
	ModeRun        Mode = iota // benchmark
	ModeInit                   // -i
	ModeHelp                   // --help, -? as the first argument
	ModeVersion                // --version, -V as the first argument
	ModeList                   // -b list, --show-script list
	ModeShowScript             // --show-script NAME
)

// ScriptSpec is one -b, -f, -S or -N in order: a builtin's full name or a
// file, with its weight.
type ScriptSpec struct {
	Builtin bool
	Name    string // the builtin's full name, or the file as given
	Weight  int
}

// Invocation is a parsed pgbench command line.
type Invocation struct {
	Mode Mode
	// Info is the text of ModeList and ModeShowScript, for stderr.
	Info string
	// Notes are lines pgbench prints while it parses ("setting random
	// seed to N"), for stderr before anything else.
	Notes []string

	Scripts                []ScriptSpec
	Clients, Jobs          int
	Transactions, Duration int // -t, -T (0: not given)
	Scale                  int
	ScaleGiven             bool
	Fillfactor             int
	InitSteps              string // as run: -n and --foreign-keys applied
	ForeignKeys, Unlogged  bool
	Partitions             int
	PartitionMethod        string
	Tablespace, IndexTS    string
	Quiet                  bool
	NoVacuum, VacuumAll    bool
	Connect, Debug         bool
	Log                    bool
	LogPrefix              string
	LogPrefixGiven         bool
	LatencyLimit           float64 // ms
	Rate                   float64
	Progress               int
	ProgressTimestamp      bool
	ReportPerCommand       bool
	SamplingRate           float64
	AggregateInterval      int
	QueryMode              string // -M: simple, extended, prepared
	Defines                []string
	Seed                   string // --random-seed as given ("" none)
	MaxTries               int
	MaxTriesGiven          bool
	FailuresDetailed       bool
	VerboseErrors          bool
	Host, Port, User       string
	DBName                 string // as pgbench names it: argument, PGDATABASE, PGUSER or the OS user

	// Extra is dbmark's own --dbmark-report: its summary, warnings and
	// the stored result's id on stderr after pgbench's output.
	Extra   bool
	NoStore bool // dbmark's --no-store
}

// UsageError is a command line pgbench refuses: the lines it prints on
// stderr (each with its "pgbench: error: " or other prefix), exit code 1.
type UsageError struct{ Lines []string }

func (e *UsageError) Error() string { return strings.Join(e.Lines, "\n") }

func fatal(format string, a ...any) *UsageError {
	return &UsageError{Lines: []string{"pgbench: error: " + fmt.Sprintf(format, a...)}}
}

const hint = `pgbench: hint: Try "pgbench --help" for more information.`

// getoptError is getopt's own complaint, which it prefixes with argv[0].
func getoptError(format string, a ...any) *UsageError {
	return &UsageError{Lines: []string{"pgbench: " + fmt.Sprintf(format, a...), hint}}
}

// Env is what pgbench reads from its environment.
type Env struct {
	Getenv func(string) string
	User   string // the OS user's name
	// ReadFile reads a script file (-f); "-" is standard input.
	ReadFile func(name string) ([]byte, error)
}

// option is one of pgbench's options: its short letter (0: long only),
// its long name and whether it takes an argument.
type option struct {
	short byte
	long  string
	arg   bool
}

// options are pgbench 15's long_options, with "b:c:CdD:f:F:h:iI:j:lL:M:nNp:P:qrR:s:St:T:U:v".
var options = []option{
	{'b', "builtin", true}, {'c', "client", true}, {'C', "connect", false}, {'d', "debug", false},
	{'D', "define", true}, {'f', "file", true}, {'F', "fillfactor", true}, {'h', "host", true},
	{'i', "initialize", false}, {'I', "init-steps", true}, {'j', "jobs", true}, {'l', "log", false},
	{'L', "latency-limit", true}, {'n', "no-vacuum", false}, {'p', "port", true}, {'P', "progress", true},
	{'M', "protocol", true}, {'q', "quiet", false}, {'r', "report-latencies", false},
	{'r', "report-per-command", false}, {'R', "rate", true}, {'s', "scale", true},
	{'S', "select-only", false}, {'N', "skip-some-updates", false}, {'t', "transactions", true},
	{'T', "time", true}, {'U', "username", true}, {'v', "vacuum-all", false},
	{0, "unlogged-tables", false}, {0, "tablespace", true}, {0, "index-tablespace", true},
	{0, "sampling-rate", true}, {0, "aggregate-interval", true}, {0, "progress-timestamp", false},
	{0, "log-prefix", true}, {0, "foreign-keys", false}, {0, "random-seed", true},
	{0, "show-script", true}, {0, "partitions", true}, {0, "partition-method", true},
	{0, "failures-detailed", false}, {0, "max-tries", true}, {0, "verbose-errors", false},
	// dbmark's own, which no pgbench command line uses.
	{0, "dbmark-report", false}, {0, "no-store", false},
}

// shortOpt finds a short option; ok is false for a letter pgbench lacks.
func shortOpt(c byte) (option, bool) {
	for _, o := range options {
		if o.short == c {
			return o, true
		}
	}
	return option{}, false
}

// longOpt finds a long option by name or unambiguous prefix, as
// getopt_long does.
func longOpt(name string) (option, *UsageError) {
	var found []option
	for _, o := range options {
		if o.long == name {
			return o, nil
		}
		if strings.HasPrefix(o.long, name) {
			found = append(found, o)
		}
	}
	switch {
	case len(found) == 0:
		return option{}, getoptError("unrecognized option '--%s'", name)
	case len(found) > 1:
		// Names of one option (-r's two) are no ambiguity.
		same := true
		for _, f := range found[1:] {
			same = same && f.short != 0 && f.short == found[0].short
		}
		if !same {
			var b strings.Builder
			for _, f := range found {
				fmt.Fprintf(&b, " '--%s'", f.long)
			}
			return option{}, getoptError("option '--%s' is ambiguous; possibilities:%s", name, b.String())
		}
	}
	return found[0], nil
}

// given is one option as getopt_long returns it.
type given struct {
	opt option
	arg string
}

// scan is getopt_long over args: the options in order and the other
// arguments, which GNU getopt moves after the options.
func scan(args []string) ([]given, []string, *UsageError) {
	var out []given
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return out, append(rest, args[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			o, err := longOpt(name)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case !o.arg && hasVal:
				return nil, nil, getoptError("option '--%s' doesn't allow an argument", o.long)
			case o.arg && !hasVal:
				if i+1 >= len(args) {
					return nil, nil, getoptError("option '--%s' requires an argument", o.long)
				}
				i++
				val = args[i]
			}
			out = append(out, given{o, val})
		case strings.HasPrefix(a, "-") && a != "-":
			for j := 1; j < len(a); j++ {
				o, ok := shortOpt(a[j])
				if !ok {
					return nil, nil, getoptError("invalid option -- '%c'", a[j])
				}
				if !o.arg {
					out = append(out, given{o, ""})
					continue
				}
				val := a[j+1:]
				if val == "" {
					if i+1 >= len(args) {
						return nil, nil, getoptError("option requires an argument -- '%c'", a[j])
					}
					i++
					val = args[i]
				}
				out = append(out, given{o, val})
				break
			}
		default:
			rest = append(rest, a)
		}
	}
	return out, rest, nil
}

// name is how pgbench names an option in its messages: "-c/--client".
func (o option) name() string {
	if o.short != 0 {
		return "-" + string(o.short) + "/--" + o.long
	}
	return "--" + o.long
}

// parseInt is pgbench's option_parse_int: strtol, trailing blanks allowed.
func parseInt(arg, name string, lo, hi int64) (int, *UsageError) {
	v, rest, overflow := strtol(arg)
	if strings.TrimLeft(rest, " \t\n\v\f\r") != "" {
		return 0, fatal("invalid value \"%s\" for option %s", arg, name)
	}
	if overflow || v < lo || v > hi {
		return 0, fatal("%s must be in range %d..%d", name, lo, hi)
	}
	return int(v), nil
}

// strtol reads C's strtol prefix of s in base 10: the value, what is left
// after the digits (all of s when there are none) and whether it
// overflowed 64 bits.
func strtol(s string) (int64, string, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	n := 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, s, false
	}
	digits := t[:n]
	if neg {
		digits = "-" + digits
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	return v, t[n:], err != nil
}

// atof is C's atof: the longest prefix that is a number, else 0.
func atof(s string) float64 {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	for n := len(t); n > 0; n-- {
		if v, err := strconv.ParseFloat(t[:n], 64); err == nil || errors.Is(err, strconv.ErrRange) {
			if strings.ContainsAny(t[:n], "xXpP_") { // Go's hex and digit separators are not C's decimal
				continue
			}
			return v
		}
	}
	return 0
}

// atoi is C's atoi.
func atoi(s string) int {
	v, _, _ := strtol(s)
	return int(int32(v))
}

// builtinList is pgbench's listAvailableScripts.
func builtinList() string {
	var b strings.Builder
	b.WriteString("Available builtin scripts:\n")
	for _, n := range script.BuiltinNames() {
		_, desc, _, _ := script.BuiltinText(n)
		fmt.Fprintf(&b, "%15s: %s\n", n, desc)
	}
	b.WriteString("\n")
	return b.String()
}

// findBuiltin is pgbench's: an exact name or a unique prefix.
func findBuiltin(name string) (string, *UsageError) {
	var found []string
	for _, n := range script.BuiltinNames() {
		if n == name {
			return n, nil
		}
		if strings.HasPrefix(n, name) {
			found = append(found, n)
		}
	}
	list := strings.Split(strings.TrimSuffix(builtinList(), "\n"), "\n")
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		e := fatal("no builtin script found for name \"%s\"", name)
		e.Lines = append(e.Lines, list...)
		return "", e
	}
	e := fatal("ambiguous builtin name: %d builtin scripts found for prefix \"%s\"", len(found), name)
	e.Lines = append(e.Lines, list...)
	return "", e
}

// parseWeight is pgbench's parseScriptWeight: NAME@W, W from 0 to INT_MAX.
func parseWeight(spec string) (string, int, *UsageError) {
	i := strings.LastIndexByte(spec, '@')
	if i < 0 {
		return spec, 1, nil
	}
	sep := spec[i:]
	v, rest, overflow := strtol(sep[1:])
	if overflow || rest == sep[1:] || rest != "" {
		return "", 0, fatal("invalid weight specification: %s", sep)
	}
	if v > intMax || v < 0 {
		return "", 0, fatal("weight specification out of range (0 .. %d): %d", intMax, v)
	}
	return spec[:i], int(v), nil
}

// Parse reads pgbench's command line (without the program name), with
// pgbench's checks in pgbench's order. A *UsageError is what pgbench
// prints and exits 1 with; -f files are read and parsed here, as pgbench
// does while it reads its options.
func Parse(args []string, env Env) (*Invocation, error) {
	inv := &Invocation{Clients: 1, Jobs: 1, Scale: 1, Fillfactor: 100, QueryMode: "simple", MaxTries: 1, LogPrefix: "pgbench_log"}
	err := inv.parse(args, env)
	var ue *UsageError
	if errors.As(err, &ue) && len(inv.Notes) > 0 {
		// What pgbench printed before it met the error comes first.
		ue.Lines = append(append([]string(nil), inv.Notes...), ue.Lines...)
	}
	if err != nil {
		return nil, err
	}
	return inv, nil
}

func (inv *Invocation) parse(args []string, env Env) error {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if env.ReadFile == nil {
		env.ReadFile = func(name string) ([]byte, error) {
			if name == "-" {
				name = "/dev/stdin"
			}
			return os.ReadFile(name)
		}
	}
	if len(args) > 0 {
		switch args[0] {
		case "--help", "-?":
			inv.Mode = ModeHelp
			return nil
		case "--version", "-V":
			inv.Mode = ModeVersion
			return nil
		}
	}
	if s := env.Getenv("PGBENCH_RANDOM_SEED"); s != "" {
		if e := inv.setSeed(s, "PGBENCH_RANDOM_SEED environment variable"); e != nil {
			return e
		}
	}
	opts, rest, uerr := scan(args)
	if uerr != nil {
		return uerr
	}
	var bench, initOpt bool
	var initSteps string
	partitionMethod := ""
	for _, g := range opts {
		o, arg := g.opt, g.arg
		var err *UsageError
		switch o.long {
		case "initialize":
			inv.Mode = ModeInit
		case "init-steps":
			if arg == "" {
				return fatal("no initialization steps specified")
			}
			for _, c := range arg {
				if !strings.ContainsRune(allInitSteps+" ", c) {
					e := fatal("unrecognized initialization step \"%c\"", c)
					e.Lines = append(e.Lines, fmt.Sprintf("pgbench: detail: Allowed step characters are: \"%s\".", allInitSteps))
					return e
				}
			}
			initSteps, initOpt = arg, true
		case "host":
			inv.Host = arg
		case "port":
			inv.Port = arg
		case "username":
			inv.User = arg
		case "no-vacuum":
			inv.NoVacuum = true
		case "vacuum-all":
			bench, inv.VacuumAll = true, true
		case "report-per-command", "report-latencies":
			bench, inv.ReportPerCommand = true, true
		case "client":
			bench = true
			inv.Clients, err = parseInt(arg, o.name(), 1, intMax)
		case "jobs":
			bench = true
			inv.Jobs, err = parseInt(arg, o.name(), 1, intMax)
		case "connect":
			bench, inv.Connect = true, true
		case "rate":
			bench = true
			if inv.Rate = atof(arg); inv.Rate <= 0 {
				return fatal("invalid rate limit: \"%s\"", arg)
			}
		case "scale":
			inv.ScaleGiven = true
			inv.Scale, err = parseInt(arg, o.name(), 1, intMax)
		case "transactions":
			bench = true
			inv.Transactions, err = parseInt(arg, o.name(), 1, intMax)
		case "time":
			bench = true
			inv.Duration, err = parseInt(arg, o.name(), 1, intMax)
		case "log":
			bench, inv.Log = true, true
		case "quiet":
			inv.Quiet = true
		case "builtin":
			if arg == "list" {
				inv.Mode, inv.Info = ModeList, builtinList()
				return nil
			}
			name, w, e := parseWeight(arg)
			if e != nil {
				return e
			}
			full, e := findBuiltin(name)
			if e != nil {
				return e
			}
			err = inv.addScript(ScriptSpec{Builtin: true, Name: full, Weight: w})
			bench = true
		case "select-only", "skip-some-updates":
			name := "select-only"
			if o.short == 'N' {
				name = "simple-update"
			}
			err = inv.addScript(ScriptSpec{Builtin: true, Name: name, Weight: 1})
			bench = true
		case "file":
			name, w, e := parseWeight(arg)
			if e != nil {
				return e
			}
			if e := checkFile(name, env); e != nil {
				return e
			}
			err = inv.addScript(ScriptSpec{Name: name, Weight: w})
			bench = true
		case "define":
			bench = true
			name, val, ok := strings.Cut(arg, "=")
			if !ok || name == "" || val == "" {
				return fatal("invalid variable definition: \"%s\"", arg)
			}
			if !validVarName(name) {
				return fatal("option: invalid variable name: \"%s\"", name)
			}
			inv.Defines = append(inv.Defines, arg)
		case "fillfactor":
			initOpt = true
			inv.Fillfactor, err = parseInt(arg, o.name(), 10, 100)
		case "protocol":
			bench = true
			switch arg {
			case "simple", "extended", "prepared":
				inv.QueryMode = arg
			default:
				return fatal("invalid query mode (-M): \"%s\"", arg)
			}
		case "progress":
			bench = true
			inv.Progress, err = parseInt(arg, o.name(), 1, intMax)
		case "latency-limit":
			bench = true
			if inv.LatencyLimit = atof(arg); inv.LatencyLimit <= 0 {
				return fatal("invalid latency limit: \"%s\"", arg)
			}
		case "debug":
			inv.Debug = true
		case "unlogged-tables":
			initOpt, inv.Unlogged = true, true
		case "tablespace":
			initOpt, inv.Tablespace = true, arg
		case "index-tablespace":
			initOpt, inv.IndexTS = true, arg
		case "sampling-rate":
			bench = true
			if inv.SamplingRate = atof(arg); inv.SamplingRate <= 0 || inv.SamplingRate > 1 {
				return fatal("invalid sampling rate: \"%s\"", arg)
			}
		case "aggregate-interval":
			bench = true
			inv.AggregateInterval, err = parseInt(arg, o.name(), 1, intMax)
		case "progress-timestamp":
			bench, inv.ProgressTimestamp = true, true
		case "log-prefix":
			bench, inv.LogPrefix, inv.LogPrefixGiven = true, arg, true
		case "foreign-keys":
			initOpt, inv.ForeignKeys = true, true
		case "random-seed":
			bench = true
			if e := inv.setSeed(arg, "--random-seed option"); e != nil {
				return e
			}
		case "show-script":
			if arg == "list" {
				inv.Mode, inv.Info = ModeList, builtinList()
				return nil
			}
			full, e := findBuiltin(arg)
			if e != nil {
				return e
			}
			_, desc, text, _ := script.BuiltinText(full)
			inv.Mode, inv.Info = ModeShowScript, fmt.Sprintf("-- %s: %s\n%s\n", full, desc, text)
			return nil
		case "partitions":
			initOpt = true
			inv.Partitions, err = parseInt(arg, o.name(), 0, intMax)
		case "partition-method":
			initOpt = true
			switch arg {
			case "range", "hash":
				partitionMethod = arg
			default:
				return fatal("invalid partition method, expecting \"range\" or \"hash\", got: \"%s\"", arg)
			}
		case "failures-detailed":
			bench, inv.FailuresDetailed = true, true
		case "max-tries":
			bench = true
			n := atoi(arg)
			if n < 0 {
				return fatal("invalid number of maximum tries: \"%s\"", arg)
			}
			inv.MaxTries, inv.MaxTriesGiven = n, true
		case "verbose-errors":
			bench, inv.VerboseErrors = true, true
		case "dbmark-report":
			inv.Extra = true
		case "no-store":
			inv.NoStore = true
		}
		if err != nil {
			return err
		}
	}
	if len(inv.Scripts) == 0 && inv.Mode != ModeInit {
		inv.Scripts = []ScriptSpec{{Builtin: true, Name: "tpcb-like", Weight: 1}}
		bench = true
	}
	total := 0
	for _, s := range inv.Scripts {
		total += s.Weight
	}
	if total == 0 && inv.Mode != ModeInit {
		return fatal("total script weight must not be zero")
	}
	if inv.Jobs > inv.Clients {
		inv.Jobs = inv.Clients
	}
	if len(rest) > 0 {
		inv.DBName = rest[0]
		rest = rest[1:]
	} else {
		inv.DBName = firstSet(env.Getenv("PGDATABASE"), env.Getenv("PGUSER"), env.User)
	}
	if len(rest) > 0 {
		return &UsageError{Lines: []string{fmt.Sprintf("pgbench: error: too many command-line arguments (first is \"%s\")", rest[0]), hint}}
	}
	if inv.Mode == ModeInit {
		if bench {
			return fatal("some of the specified options cannot be used in initialization (-i) mode")
		}
		if inv.Partitions == 0 && partitionMethod != "" {
			return fatal("--partition-method requires greater than zero --partitions")
		}
		if inv.Partitions > 0 && partitionMethod == "" {
			partitionMethod = "range"
		}
		inv.PartitionMethod = partitionMethod
		if initSteps == "" {
			initSteps = defaultInitSteps
		}
		if inv.NoVacuum {
			initSteps = strings.ReplaceAll(initSteps, "v", " ")
		}
		if inv.ForeignKeys && !strings.Contains(initSteps, "f") {
			initSteps += "f"
		}
		inv.InitSteps = initSteps
		return nil
	}
	if initOpt {
		return fatal("some of the specified options cannot be used in benchmarking mode")
	}
	return inv.checkRun()
}

// checkRun is pgbench's checks of a benchmark's options, in its order.
func (inv *Invocation) checkRun() error {
	switch {
	case inv.Transactions > 0 && inv.Duration > 0:
		return fatal("specify either a number of transactions (-t) or a duration (-T), not both")
	case inv.SamplingRate > 0 && !inv.Log:
		return fatal("log sampling (--sampling-rate) is allowed only when logging transactions (-l)")
	case inv.SamplingRate > 0 && inv.AggregateInterval > 0:
		return fatal("log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time")
	case inv.AggregateInterval > 0 && !inv.Log:
		return fatal("log aggregation is allowed only when actually logging transactions")
	case !inv.Log && inv.LogPrefixGiven:
		return fatal("log file prefix (--log-prefix) is allowed only when logging transactions (-l)")
	case inv.Duration > 0 && inv.AggregateInterval > inv.Duration:
		return fatal("number of seconds for aggregation (%d) must not be higher than test duration (%d)", inv.AggregateInterval, inv.Duration)
	case inv.Duration > 0 && inv.AggregateInterval > 0 && inv.Duration%inv.AggregateInterval != 0:
		return fatal("duration (%d) must be a multiple of aggregation interval (%d)", inv.Duration, inv.AggregateInterval)
	case inv.ProgressTimestamp && inv.Progress == 0:
		return fatal("--progress-timestamp is allowed only under --progress")
	case inv.MaxTries == 0 && inv.LatencyLimit == 0 && inv.Duration <= 0:
		return fatal("an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)")
	}
	if inv.Transactions == 0 && inv.Duration == 0 {
		inv.Transactions = defaultNXacts
	}
	return nil
}

func (inv *Invocation) addScript(s ScriptSpec) *UsageError {
	if len(inv.Scripts) >= maxScripts {
		return fatal("at most %d SQL scripts are allowed", maxScripts)
	}
	inv.Scripts = append(inv.Scripts, s)
	return nil
}

// checkFile reads and parses a -f script as pgbench's process_file does,
// giving its errors in pgbench's words.
func checkFile(name string, env Env) *UsageError {
	src, err := env.ReadFile(name)
	if err != nil {
		var pe *os.PathError
		msg := err.Error()
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
			if len(msg) > 0 {
				msg = strings.ToUpper(msg[:1]) + msg[1:] // strerror's capital
			}
		}
		return fatal("could not open file \"%s\": %s", name, msg)
	}
	s, err := script.Parse(name, string(src))
	if err != nil {
		var se *script.SyntaxError
		if errors.As(err, &se) {
			return syntaxError(se)
		}
		return fatal("%s", err)
	}
	if len(s.Commands) == 0 {
		return fatal("empty command list for script \"%s\"", name)
	}
	return nil
}

// syntaxError is pgbench's syntax_error: "source:line: message" and the
// command with a caret under the spot.
func syntaxError(se *script.SyntaxError) *UsageError {
	e := fatal("%s:%d: %s", se.File, se.Line, se.Msg)
	if d := se.Detail(); d != "" {
		e.Lines = append(e.Lines, strings.Split(d, "\n")...)
	}
	return e
}

// validVarName is pgbench's valid_variable_name: ASCII letters, digits and
// underscores (and non-ASCII bytes), not starting with a digit.
func validVarName(name string) bool {
	if name == "" {
		return false
	}
	if name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80) {
			return false
		}
	}
	return true
}

// setSeed is pgbench's set_random_seed: "time" (the clock), "rand" (a
// random draw) or an unsigned number, reported as pgbench reports it.
func (inv *Invocation) setSeed(s, from string) *UsageError {
	var seed uint64
	switch s {
	case "time":
		seed = uint64(time.Now().UnixMicro())
	case "rand":
		seed = rand.Uint64()
	default:
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return &UsageError{Lines: []string{
				fmt.Sprintf("pgbench: error: unrecognized random seed option \"%s\"", s),
				`pgbench: detail: Expecting an unsigned integer, "time" or "rand".`,
				"pgbench: error: error while setting random seed from " + from,
			}}
		}
		seed = v
	}
	inv.Seed = strconv.FormatUint(seed, 10)
	inv.Notes = append(inv.Notes, "pgbench: setting random seed to "+inv.Seed)
	return nil
}

func firstSet(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

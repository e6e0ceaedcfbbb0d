// Package sysbench is dbmark's sysbench 1.0.20 front end: it reads
// sysbench's command line as sysbench reads it (options anywhere, with
// --name[=value], on/off booleans, dashes and underscores alike, the
// deprecated spellings, --config-file), says what dbmark is to do (which
// workload, which command, which options and target), and prints
// sysbench's lines (banner, run header, report-interval lines, reports,
// messages) on sysbench's streams. It runs nothing itself: package cli
// runs dbmark's workloads with what it says.
package sysbench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Version is the sysbench release whose command line and output this
// front end follows.
const Version = "1.0.20"

// Exit ends the command early with sysbench's exit code; what sysbench
// would print has been printed.
type Exit struct{ Code int }

func (e *Exit) Error() string { return "sysbench exit " + strconv.Itoa(e.Code) }

// Log is sysbench's log: its messages go to standard output, each kept
// when its level is within --verbosity.
type Log struct {
	W         io.Writer
	Verbosity int
}

// Levels of sysbench's log.
const (
	Fatal   = 0
	Warning = 2
	Notice  = 3
	Info    = 4
	Debug   = 5
)

// Printf writes one message of the level, with sysbench's prefix for
// fatal errors and warnings; a message ends with a newline.
func (l *Log) Printf(level int, format string, a ...any) {
	if level > l.Verbosity {
		return
	}
	prefix := ""
	switch level {
	case Fatal:
		prefix = "FATAL: "
	case Warning:
		prefix = "WARNING: "
	}
	fmt.Fprintf(l.W, prefix+format+"\n", a...)
}

// Test kinds this front end runs.
const (
	kindOLTP   = "oltp"
	kindBulk   = "bulk"
	kindFileio = "fileio"
)

// tests maps sysbench's test names to what runs them.
var tests = map[string]string{
	"oltp_read_only": kindOLTP, "oltp_read_write": kindOLTP, "oltp_write_only": kindOLTP,
	"oltp_point_select": kindOLTP, "oltp_insert": kindOLTP, "oltp_delete": kindOLTP,
	"oltp_update_index": kindOLTP, "oltp_update_non_index": kindOLTP,
	"select_random_points": kindOLTP, "select_random_ranges": kindOLTP,
	"bulk_insert": kindBulk, "fileio": kindFileio,
}

// builtin are sysbench's compiled-in tests, in the order its --help lists
// them, with its descriptions: they need a command. Of them dbmark runs
// fileio.
var builtin = []struct{ name, desc string }{
	{"fileio", "File I/O test"},
	{"cpu", "CPU performance test"},
	{"memory", "Memory functions speed test"},
	{"threads", "Threads subsystem performance test"},
	{"mutex", "Mutex performance test"},
}

func isBuiltin(name string) bool {
	return slices.ContainsFunc(builtin, func(b struct{ name, desc string }) bool { return b.name == name })
}

// Command is what dbmark is to do, as sysbench's command line says it.
type Command struct {
	// Test is the workload dbmark runs (sysbench's test name); Name is the
	// test as sysbench names it in messages (a script's file name).
	Test, Name string
	// Verb is prepare, run, cleanup or prewarm.
	Verb string
	// Driver is the database driver (mysql or pgsql); "" for fileio.
	Driver string
	// Flags are dbmark's options for the workload, as name and value.
	Flags [][2]string

	Threads, Time, ReportInterval, Percentile, Seed int
	Events                                          int64
	Rate                                            int
	Histogram, Debug, Validate                      bool
	Checkpoints                                     []int
	// ForcedShutdown is the seconds after --time at which sysbench would
	// stop the run by force; 0: off.
	ForcedShutdown int

	Log    *Log
	Stderr io.Writer
	opts   *values
	drv    driver
	last   *figures // the run's last span (OnSpan), for its final report
}

// driver is one of sysbench's database drivers, as the front end needs
// to know it.
type driver struct {
	// prewarm says the OLTP scripts' prewarm runs on it (their prewarm
	// is MySQL's only).
	prewarm bool
	// ignoreErrors is its option naming the errors a run goes on after;
	// dryRun its option to pretend; variant the scripts' option naming a
	// variant of its server ("" for none).
	ignoreErrors, dryRun, variant string
	// targets are the URLs of the servers its options describe.
	targets func(o *values) []string
}

var drivers = map[string]driver{
	"mysql": {prewarm: true, ignoreErrors: "mysql-ignore-errors", dryRun: "mysql-dry-run", targets: mysqlTargets},
	"pgsql": {variant: "pgsql_variant", targets: pgsqlTargets},
}

// values are the options as given: by key (dashes as underscores), the
// last one winning, as sysbench keeps them.
type values struct {
	v   map[string]string
	set map[string]bool
	// bare are options given without a value (--opt): a boolean's on.
	bare map[string]bool
}

func newValues() *values {
	return &values{v: map[string]string{}, set: map[string]bool{}, bare: map[string]bool{}}
}

func (vs *values) put(name string, value *string) {
	k := key(name)
	vs.set[k] = true
	if value == nil {
		vs.bare[k] = true
		delete(vs.v, k)
		return
	}
	delete(vs.bare, k)
	vs.v[k] = *value
}

// get is the value of the option, or def when not given or given empty.
func (vs *values) get(name, def string) string {
	if v, ok := vs.v[key(name)]; ok && v != "" {
		return v
	}
	return def
}

func (vs *values) given(name string) bool { return vs.set[key(name)] }

// boolOf reads a boolean as sysbench does: on, true, 1 (or no value) are
// on; off, false, 0 are off; ok is false for anything else.
func boolOf(v string, bare bool) (on, ok bool) {
	if bare {
		return true, true
	}
	switch v {
	case "on", "true", "1":
		return true, true
	case "off", "false", "0":
		return false, true
	}
	return false, false
}

func (vs *values) flag(name string, def bool) bool {
	k := key(name)
	if !vs.set[k] {
		return def
	}
	on, ok := boolOf(vs.v[k], vs.bare[k])
	return ok && on
}

// intOf reads an integer option as sysbench does (strtol, the whole
// string): a bad one ends sysbench with its message on standard error.
func (c *Command) intOf(name, def string) (int, error) {
	v := c.opts.get(name, def)
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		fmt.Fprintf(c.Stderr, "Invalid value for the '%s' option: '%s'\n", key(name), v)
		return 0, &Exit{Code: 1}
	}
	return int(n), nil
}

// generalKnown says whether name is one of sysbench's general, log,
// random, database or driver options.
func generalKnown(name string) (option, bool) {
	for _, g := range slices.Concat(generalGroups, driverGroups) {
		for _, o := range g.opts {
			if key(o.name) == key(name) {
				return o, true
			}
		}
	}
	return option{}, false
}

// testOptions are the options the test declares; nil for a test that
// declares none (bulk_insert: sysbench then takes any option).
func testOptions(test string) []option {
	switch test {
	case "fileio":
		return fileioOptions
	case "bulk_insert":
		return nil
	case "select_random_points":
		return slices.Concat(oltpOptions, randomPointsOptions)
	case "select_random_ranges":
		return slices.Concat(oltpOptions, randomRangesOptions)
	}
	return oltpOptions
}

// Start reads args as sysbench 1.0.20 reads its command line and does
// what sysbench does before its test starts: help, version, the
// deprecated options' warnings, the banner, the test's help, and every
// mistake with sysbench's message, stream and exit code (an *Exit). It
// returns the command for dbmark to run otherwise. dbmarkVersion goes in
// the banner.
func Start(args []string, stdout, stderr io.Writer, dbmarkVersion string) (*Command, error) {
	vs := newValues()
	c := &Command{opts: vs, Stderr: stderr, Log: &Log{W: stdout, Verbosity: Notice}}
	var testname, cmdname string
	var rest []string // options left for the test
	for _, a := range args {
		if !strings.HasPrefix(a, "--") {
			switch {
			case testname == "":
				testname = a
			case cmdname == "":
				cmdname = a
			default:
				fmt.Fprintf(stderr, "Unrecognized command line argument: %s\n", a)
				return nil, &Exit{Code: 1}
			}
			continue
		}
		name, value := splitOption(a)
		if name == "test" && value != nil {
			fmt.Fprintln(stderr, "WARNING: the --test option is deprecated. You can pass a script name or path on the command line without any options.")
			testname = *value
			continue
		}
		o, ok := generalKnown(name)
		if !ok || !valid(o, value) {
			rest = append(rest, a)
			continue
		}
		if o.kind == kFile && value != nil {
			if err := readConfig(*value, vs, stderr); err != nil {
				return nil, err
			}
			continue
		}
		vs.put(name, value)
	}
	if vs.flag("help", false) {
		PrintHelp(stdout)
		return nil, &Exit{Code: 0}
	}
	if vs.flag("version", false) {
		fmt.Fprintf(stdout, "sysbench %s\n", Version)
		return nil, &Exit{Code: 0}
	}
	if err := c.init(); err != nil {
		return nil, err
	}
	c.Log.Printf(Notice, "sysbench %s (using dbmark %s)\n", Version, dbmarkVersion)

	if testname == "" || testname == "-" {
		c.Log.Printf(Fatal, "dbmark sysbench runs sysbench's OLTP tests, bulk_insert and fileio; it reads no Lua script from the standard input")
		return nil, &Exit{Code: 1}
	}
	c.Name = strings.TrimSuffix(path.Base(testname), ".lua")
	kind, known := tests[c.Name]
	isBuiltin := isBuiltin(testname)
	switch {
	case isBuiltin && cmdname == "":
		fmt.Fprintf(stderr, "The '%s' test requires a command argument. See 'sysbench %s help'\n", testname, testname)
		return nil, &Exit{Code: 1}
	case isBuiltin && !known:
		c.Log.Printf(Fatal, "dbmark sysbench does not run sysbench's '%s' test (it runs the OLTP tests, bulk_insert and fileio)", testname)
		return nil, &Exit{Code: 1}
	case !known && strings.HasSuffix(testname, ".lua"):
		c.Log.Printf(Fatal, "dbmark sysbench runs sysbench's bundled OLTP scripts, not Lua scripts of their own: '%s' is not one of them", testname)
		return nil, &Exit{Code: 1}
	case !known:
		c.Log.Printf(Fatal, "Cannot find benchmark '%s': no such built-in test, file or module", testname)
		return nil, &Exit{Code: 1}
	}
	if kind != kindFileio {
		c.Name = path.Base(testname) // a script's messages name its file
	}
	c.Test = strings.TrimSuffix(path.Base(testname), ".lua")
	if cmdname == "" && kind != kindFileio {
		c.Log.Printf(Fatal, "Command is required. Supported commands: prepare, prewarm, run, cleanup, help")
		return nil, &Exit{Code: 1}
	}
	// The test's own options: anything else is refused, unless the test
	// declares none.
	topts := testOptions(c.Test)
	for _, a := range rest {
		name, value := splitOption(a)
		o, ok := findOption(topts, name)
		if !ok {
			if g, isGeneral := generalKnown(name); isGeneral && !valid(g, value) || topts != nil {
				fmt.Fprintf(stderr, "invalid option: %s\n", a)
				return nil, &Exit{Code: 1}
			}
			vs.put(name, value) // bulk_insert keeps what it does not know
			continue
		}
		if !valid(o, value) {
			fmt.Fprintf(stderr, "invalid option: %s\n", a)
			return nil, &Exit{Code: 1}
		}
		vs.put(name, value)
	}
	return c.command(cmdname, kind, topts, stdout, stderr)
}

// command checks the command and the test's options and builds what
// dbmark runs.
func (c *Command) command(cmdname, kind string, topts []option, stdout, stderr io.Writer) (*Command, error) {
	switch cmdname {
	case "help":
		if topts == nil {
			fmt.Fprintf(stderr, "'%s' test does not implement the 'help' command.\n", c.Name)
			return nil, &Exit{Code: 1}
		}
		c.printTestHelp(stdout, topts)
		return nil, &Exit{Code: 0}
	case "prepare", "run", "cleanup":
	case "prewarm":
		if kind == kindOLTP {
			break
		}
		fallthrough
	default:
		fmt.Fprintf(stderr, "Unknown command: %s\n", cmdname)
		return nil, &Exit{Code: 1}
	}
	c.Verb = cmdname
	if kind == kindFileio {
		if err := c.fileio(); err != nil {
			return nil, err
		}
		return c, nil
	}
	c.Driver = c.opts.get("db-driver", "mysql")
	drv, ok := drivers[c.Driver]
	if !ok {
		c.Log.Printf(Fatal, "invalid database driver name: '%s'", c.Driver)
		c.Log.Printf(Fatal, "`%s' function failed: failed to initialize the DB driver", cmdname)
		return nil, &Exit{Code: 1}
	}
	if c.Parallel() {
		c.Log.Printf(Notice, "Initializing worker threads...\n")
	}
	c.drv = drv
	if err := c.checkTargets(); err != nil {
		return nil, err
	}
	if c.Verb == "prewarm" && !drv.prewarm {
		c.Log.Printf(Fatal, "`sysbench.cmdline.call_command' function failed: prewarm is currently MySQL only")
		return nil, &Exit{Code: c.FailedCode()}
	}
	if err := c.oltp(topts); err != nil {
		return nil, err
	}
	return c, nil
}

// Parallel says whether sysbench runs the command in its worker threads:
// the OLTP scripts' prepare and prewarm, with more than one thread.
func (c *Command) Parallel() bool {
	return c.Threads > 1 && (c.Verb == "prepare" || c.Verb == "prewarm") && tests[c.Test] == kindOLTP
}

// FailedCode is the exit code of the command when it fails: 1, but 0 for
// a command sysbench 1.0.20 runs in its threads (Parallel), whose failure
// it prints and does not pass on.
func (c *Command) FailedCode() int {
	if c.Parallel() {
		return 0
	}
	return 1
}

// printTestHelp is "sysbench TEST help": the test's options.
func (c *Command) printTestHelp(w io.Writer, topts []option) {
	fmt.Fprintf(w, "%s options:\n", c.Name)
	if c.Test == "fileio" {
		printOptions(w, topts)
	} else {
		printOptions(w, sortedByName(topts))
	}
	fmt.Fprintln(w)
}

// splitOption splits "--name=value"; value is nil without "=".
func splitOption(a string) (string, *string) {
	s := strings.TrimPrefix(a, "--")
	name, value, ok := strings.Cut(s, "=")
	if !ok {
		return name, nil
	}
	return name, &value
}

func findOption(opts []option, name string) (option, bool) {
	for _, o := range opts {
		if key(o.name) == key(name) {
			return o, true
		}
	}
	return option{}, false
}

// valid says whether sysbench takes value for o when parsing: only a
// boolean's value is checked then.
func valid(o option, value *string) bool {
	if o.kind != kBool || value == nil {
		return true
	}
	_, ok := boolOf(*value, false)
	return ok
}

// readConfig reads --config-file as sysbench does: "name = value" lines,
// "#" comments, quoted values.
func readConfig(file string, vs *values, stderr io.Writer) error {
	f, err := os.Open(file)
	if err != nil {
		var pe *os.PathError
		msg := err.Error()
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
			msg = strings.ToUpper(msg[:1]) + msg[1:]
		}
		fmt.Fprintf(stderr, "%s: %s\n", file, msg) // perror's form
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		if i := strings.IndexByte(value, '#'); i >= 0 && !strings.HasPrefix(value, `"`) && !strings.HasPrefix(value, "'") {
			value = strings.TrimSpace(value[:i])
		}
		if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
			value = value[1 : len(value)-1]
		}
		vs.put(strings.TrimSpace(name), &value)
	}
	return nil
}

// init reads the general options as sysbench's init does: the deprecated
// spellings with their warnings, the limits, the forced shutdown, the
// checkpoints, the log's verbosity.
func (c *Command) init() error {
	vs := c.opts
	var err error
	if c.Log.Verbosity, err = c.intOf("verbosity", "3"); err != nil {
		return err
	}
	// sysbench keeps the level in a byte: -1 is 255, 256 is 0.
	v := uint8(c.Log.Verbosity)
	if v > Debug {
		fmt.Fprintf(c.Stderr, "Invalid value for verbosity: %d\n", v)
		return &Exit{Code: 1}
	}
	c.Log.Verbosity = int(v)
	if c.Debug = vs.flag("debug", false); c.Debug {
		c.Log.Verbosity = Debug
	}
	num, err := c.intOf("num-threads", "1")
	if err != nil {
		return err
	}
	if num > 1 {
		c.Log.Printf(Warning, "--num-threads is deprecated, use --threads instead")
		c.Threads = num
	} else if c.Threads, err = c.intOf("threads", "1"); err != nil {
		return err
	}
	if c.Threads <= 0 {
		c.Log.Printf(Fatal, "Invalid value for --threads: %d.\n", c.Threads)
		return &Exit{Code: 1}
	}
	maxReq, err := c.intOf("max-requests", "0")
	if err != nil {
		return err
	}
	if maxReq > 0 {
		c.Log.Printf(Warning, "--max-requests is deprecated, use --events instead")
		c.Events = int64(maxReq)
	} else {
		ev, err := c.intOf("events", "0")
		if err != nil {
			return err
		}
		// sysbench keeps the limit unsigned: a negative one is never
		// reached, so it is no limit.
		c.Events = max(int64(ev), 0)
	}
	maxTime, err := c.intOf("max-time", "0")
	if err != nil {
		return err
	}
	if maxTime > 0 {
		c.Log.Printf(Warning, "--max-time is deprecated, use --time instead")
		c.Time = maxTime
	} else if c.Time, err = c.intOf("time", "10"); err != nil {
		return err
	}
	c.Time = max(c.Time, 0)
	if c.Events == 0 && c.Time == 0 {
		c.Log.Printf(Warning, "Both event and time limits are disabled, running an endless test")
	}
	if c.Time > 0 {
		switch fs := vs.get("forced-shutdown", "off"); {
		case strings.EqualFold(fs, "off"):
		default:
			n, pct, err := leadingInt(fs)
			if err != nil {
				c.Log.Printf(Fatal, "Invalid value for --forced-shutdown: '%s'", fs)
				return &Exit{Code: 1}
			}
			if pct {
				n = n * c.Time / 100
			}
			c.ForcedShutdown = c.Time + n
		}
	}
	c.Validate = vs.flag("validate", false)
	if c.Seed, err = c.intOf("rand-seed", "0"); err != nil {
		return err
	}
	txRate, err := c.intOf("tx-rate", "0")
	if err != nil {
		return err
	}
	if txRate > 0 {
		c.Log.Printf(Warning, "--tx-rate is deprecated, use --rate instead")
		c.Rate = txRate
	} else if c.Rate, err = c.intOf("rate", "0"); err != nil {
		return err
	}
	if c.ReportInterval, err = c.intOf("report-interval", "0"); err != nil {
		return err
	}
	if c.Percentile, err = c.intOf("percentile", "95"); err != nil {
		return err
	}
	if c.Percentile < 0 || c.Percentile > 100 {
		c.Log.Printf(Fatal, "Invalid value for --percentile: %d", c.Percentile)
		return &Exit{Code: 1}
	}
	c.Histogram = vs.flag("histogram", false)
	if cps := vs.get("report-checkpoints", ""); cps != "" {
		for _, s := range strings.Split(cps, ",") {
			if s == "" {
				continue
			}
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 || n > math.MaxInt32 {
				c.Log.Printf(Fatal, "Invalid value for --report-checkpoints: '%s'", s)
				return &Exit{Code: 1}
			}
			c.Checkpoints = append(c.Checkpoints, int(n))
		}
		if len(c.Checkpoints) > 256 {
			c.Log.Printf(Fatal, "Too many checkpoints in --report-checkpoints (up to %d can be defined)", 256)
			return &Exit{Code: 1}
		}
		slices.Sort(c.Checkpoints)
	}
	return nil
}

// leadingInt reads strtol's leading integer of s and whether a % follows
// it, refusing what sysbench refuses.
func leadingInt(s string) (int, bool, error) {
	digits := strings.TrimSuffix(s, "%")
	n, err := strconv.Atoi(digits)
	if err != nil || s == "" {
		return 0, false, errors.New("not a number")
	}
	return n, digits != s, nil
}

// PrintHelp is sysbench's --help: its drivers and its compiled-in tests, of
// which dbmark runs fileio (the others end with one line saying so).
func PrintHelp(w io.Writer) {
	fmt.Fprintln(w, "Usage:")
	fmt.Fprintln(w, "  sysbench [options]... [testname] [command]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands implemented by most tests: prepare run cleanup help")
	fmt.Fprintln(w)
	for _, g := range generalGroups {
		if g.title != "" {
			fmt.Fprintln(w, g.title)
		}
		db := g.title == "General database options:"
		if db {
			fmt.Fprintln(w)
		}
		printOptions(w, g.opts)
		fmt.Fprintln(w)
		if db {
			fmt.Fprintln(w) // sysbench ends its database options with two
		}
	}
	fmt.Fprintln(w, "Compiled-in database drivers:")
	fmt.Fprintln(w, "  mysql - MySQL driver")
	fmt.Fprintln(w, "  pgsql - PostgreSQL driver")
	fmt.Fprintln(w)
	for _, g := range driverGroups {
		fmt.Fprintln(w, g.title)
		printOptions(w, g.opts)
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Compiled-in tests:")
	for _, b := range builtin {
		fmt.Fprintf(w, "  %s - %s\n", b.name, b.desc)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "See 'sysbench <testname> help' for a list of options for each test.")
	fmt.Fprintln(w)
}

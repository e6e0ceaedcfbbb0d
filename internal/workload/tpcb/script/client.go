package script

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/target"
)

// Shared is what all clients of a run share. It is read-only once the
// first client exists.
type Shared struct {
	Scale      int64             // :scale, unless Vars sets it
	RandomSeed uint64            // --random-seed; :random_seed, and every client's random state
	Clients    int               // the number of clients (pgbench draws :default_seed after them)
	Vars       map[string]string // -D name=value, for every client
	Logger     *slog.Logger
	// Debug receives debug()'s lines, as pgbench writes them to stderr;
	// nil logs them at debug level instead.
	Debug io.Writer
	// Stdout receives \shell's standard output (pgbench's own stdout);
	// nil discards it.
	Stdout io.Writer
	// Trace, when set, receives pgbench's -d lines: the script and each
	// command a client executes, each statement it prepares and sends and
	// each result it receives.
	Trace io.Writer
	// prepNames are pgbench's names of the scripts' prepared statements,
	// by script and command (NameStatements).
	prepNames map[*Script][]string
}

// NameStatements names the SQL commands of scripts as pgbench names its
// prepared statements, which its -d lines show: P_0, P_1, ... in the order
// of the scripts and of their commands.
func (sh *Shared) NameStatements(scripts []*Script) {
	sh.prepNames = map[*Script][]string{}
	n := 0
	for _, s := range scripts {
		names := make([]string, len(s.Commands))
		for i, c := range s.Commands {
			if c.Kind == SQL {
				names[i] = "P_" + strconv.Itoa(n)
				n++
			}
		}
		sh.prepNames[s] = names
	}
}

// prepName is pgbench's name of command pc's prepared statement.
func (sh *Shared) prepName(s *Script, pc int) string {
	if names := sh.prepNames[s]; pc < len(names) && names[pc] != "" {
		return names[pc]
	}
	return "P_" + strconv.Itoa(pc)
}

// DefaultSeed is :default_seed, the seed hash() and permute() use when not
// given one: pgbench's next draw from the base sequence after it has
// seeded every client.
func (sh *Shared) DefaultSeed() int64 {
	base := NewRand(sh.RandomSeed)
	for range sh.Clients {
		base.Uint64()
	}
	return int64(base.Uint64())
}

// ThreadRandom returns pgbench's three random states of thread (job) t:
// the one that chooses scripts by weight, the one that schedules --rate
// and the one that samples the log, seeded as pgbench seeds them.
func (sh *Shared) ThreadRandom(t int) (choose, throttle, sample Rand) {
	base := NewRand(sh.RandomSeed)
	for range sh.Clients + 1 + 3*t {
		base.Uint64()
	}
	return NewRand(base.Uint64()), NewRand(base.Uint64()), NewRand(base.Uint64())
}

// Recorder receives the time each executed command took, by its index in
// the script, for per-command reports (-r). Begin is when the first
// command starts, a time the caller may already hold; end is when
// command i ended. Wants says whether command i's own time is wanted: one
// that is not (a \set or, without -r, a statement) is not timed, and its
// time counts in the next timed command's, which saves a clock read; it
// is passed to Count instead. The last command run is always timed, as
// its end is the transaction's. Now reads the clock for a command's end.
// Found is told, after command i that MustFind ran, whether it found a
// row (not when it ran in a pipeline, whose results are read at its end).
type Recorder interface {
	Begin() time.Duration
	Now() time.Duration
	Wants(i int) bool
	Command(i int, end, d time.Duration)
	Count(i int)
	Found(i int, ok bool)
}

// variable is one client variable. Its value is known by its text (from
// -D, \gset), by its typed value (from \set), or both once converted.
type variable struct {
	name   string
	set    bool
	str    []byte // the text, when hasStr
	hasStr bool
	val    value // kNone until the text is parsed
	txt    []byte
	fmtOK  bool // txt holds val's text
}

// Client is one pgbench client: its variables, its random state, its
// connection and its prepared statements. It is used by one goroutine.
type Client struct {
	sh     *Shared
	id     int
	conn   target.Conn
	d      target.Dialect
	vars   []variable
	index  map[string]int
	rnd    Rand
	saved  savedState
	once   bool // no transaction is tried again: nothing to save for Restore
	byScr  map[*Script]*clientScript
	last   *clientScript // the script run last: mostly the one run next
	args   []target.Value
	logger *slog.Logger
	cmdIdx int // the command being run, for debug()

	// PostgreSQL's protocols: nil on engines with one.
	proto  target.ProtocolConn
	simple bool   // -M simple: variables are pasted into the SQL text
	text   []byte // the SQL text being built in simple mode

	rows int64 // the rows the last SQL command returned or affected; -1: not known

	inPipe   bool            // between \startpipeline and \endpipeline
	pipe     target.Pipeline // the open pipeline, on PostgreSQL
	pipeCmds []int           // the commands queued in pipe, in order
}

type savedState struct {
	vars []variable
	rnd  Rand
}

// clientScript is a script as one client runs it.
type clientScript struct {
	s     *Script
	slots []int         // script variable slot -> client variable
	stmts []target.Stmt // by command; nil until first run
}

// NewClient builds client id (0-based) with pgbench's variables: -D's,
// then :scale, :client_id, :default_seed and :random_seed where -D did not
// set them, and the random state pgbench gives client id.
func NewClient(sh *Shared, id int, conn target.Conn, d target.Dialect) (*Client, error) {
	c := &Client{sh: sh, id: id, conn: conn, d: d, index: map[string]int{}, byScr: map[*Script]*clientScript{}, logger: sh.Logger}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if pc, ok := conn.(target.ProtocolConn); ok {
		c.proto, c.simple = pc, pc.Protocol() == "simple"
	}
	for name, v := range sh.Vars {
		if !validName(name) {
			return nil, fmt.Errorf("-D %s=%s: invalid variable name %q", name, v, name)
		}
		c.setStr(c.lookup(name), []byte(v))
	}
	for _, iv := range []struct {
		name string
		v    int64
	}{{"scale", sh.Scale}, {"client_id", int64(id)}, {"default_seed", sh.DefaultSeed()}, {"random_seed", int64(sh.RandomSeed)}} {
		if _, ok := sh.Vars[iv.name]; !ok {
			c.setVal(c.lookup(iv.name), value{k: kInt, i: iv.v})
		}
	}
	base := NewRand(sh.RandomSeed)
	for range id {
		base.Uint64()
	}
	c.rnd = NewRand(base.Uint64())
	return c, nil
}

// validName says whether name can be a variable: a letter, underscore or
// non-ASCII byte, then those or digits.
func validName(name string) bool {
	if name == "" || !isAlpha(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isAlnum(name[i]) {
			return false
		}
	}
	return true
}

// lookup returns the index of variable name, adding it unset if new.
func (c *Client) lookup(name string) int {
	if i, ok := c.index[name]; ok {
		return i
	}
	c.vars = append(c.vars, variable{name: name})
	c.index[name] = len(c.vars) - 1
	return len(c.vars) - 1
}

func (c *Client) setVal(i int, v value) {
	x := &c.vars[i]
	x.set, x.val, x.hasStr, x.str, x.fmtOK = true, v, false, nil, false
}

func (c *Client) setStr(i int, b []byte) {
	x := &c.vars[i]
	x.set, x.val, x.hasStr, x.str, x.fmtOK = true, value{}, true, b, false
}

// text is a set variable's text form.
func (x *variable) text() []byte {
	if x.hasStr {
		return x.str
	}
	if !x.fmtOK {
		x.txt = appendValue(x.txt[:0], x.val)
		x.fmtOK = true
	}
	return x.txt
}

// Var returns a variable's text and whether it is set.
func (c *Client) Var(name string) (string, bool) {
	i, ok := c.index[name]
	if !ok || !c.vars[i].set {
		return "", false
	}
	return string(c.vars[i].text()), true
}

// Restore puts back the variables and the random state saved when the
// last Run started, so that a retried transaction draws the same values.
// It does nothing after TriedOnce.
func (c *Client) Restore() {
	if c.once {
		return
	}
	n := len(c.saved.vars)
	for i := n; i < len(c.vars); i++ {
		delete(c.index, c.vars[i].name)
	}
	c.vars = append(c.vars[:0], c.saved.vars...)
	for i := range c.vars {
		c.vars[i].fmtOK = false
		c.vars[i].txt = nil
	}
	c.rnd = c.saved.rnd
}

// TriedOnce says that no transaction will be tried again (pgbench's
// --max-tries 1), so Run need not save the variables for Restore.
func (c *Client) TriedOnce() { c.once = true }

func (c *Client) save() {
	if c.once {
		return
	}
	c.saved.vars = append(c.saved.vars[:0], c.vars...)
	c.saved.rnd = c.rnd
}

// Close releases the client's prepared statements (not its connection).
func (c *Client) Close() error {
	var errs []error
	for _, cs := range c.byScr {
		for _, st := range cs.stmts {
			if st != nil {
				errs = append(errs, st.Close())
			}
		}
	}
	c.byScr, c.last = map[*Script]*clientScript{}, nil
	return errors.Join(errs...)
}

// Forget drops the client's statements without closing them: they go
// with the connection they were prepared on when -C replaces it, and each
// is prepared again on the new one when first run.
func (c *Client) Forget() {
	for _, cs := range c.byScr {
		clear(cs.stmts)
	}
}

// script returns the client's state for s, binding its variables.
func (c *Client) script(s *Script) *clientScript {
	if c.last != nil && c.last.s == s {
		return c.last
	}
	if cs, ok := c.byScr[s]; ok {
		c.last = cs
		return cs
	}
	cs := &clientScript{s: s, slots: make([]int, len(s.vars)), stmts: make([]target.Stmt, len(s.Commands))}
	for i, name := range s.vars {
		cs.slots[i] = c.lookup(name)
	}
	c.byScr[s] = cs
	c.last = cs
	return cs
}

// traceMeta is pgbench's -d line of a meta-command: its name and the
// words pgbench keeps as arguments (\set's and \if's expressions are not).
func (c *Client) traceMeta(cmd *Command) {
	args := cmd.Args
	switch cmd.Meta {
	case MetaSet:
		args = args[:min(2, len(args))]
	case MetaIf, MetaElif:
		args = args[:min(1, len(args))]
	}
	if len(args) == 0 {
		return
	}
	fmt.Fprintf(c.sh.Trace, "pgbench: client %d executing \\%s\n", c.id, strings.Join(args, " "))
}

// traceSQL is pgbench's -d lines of a statement sent: its text with the
// values in simple mode, with placeholders in extended mode, the prepared
// statement's name in prepared mode (after the line preparing it, the
// first time).
func (c *Client) traceSQL(cs *clientScript, pc int, cmd *Command) {
	var what string
	switch {
	case c.simple:
		what = string(c.simpleText(cs, cmd))
	case c.prepared():
		what = c.sh.prepName(cs.s, pc)
		if cs.stmts[pc] == nil {
			fmt.Fprintf(c.sh.Trace, "pgbench: client %d preparing %s\n", c.id, what)
		}
	default:
		what = c.statementText(cmd)
	}
	fmt.Fprintf(c.sh.Trace, "pgbench: client %d sending %s\n", c.id, what)
	// pgbench says it is receiving each time it looks for the result:
	// at once after sending, and again once the result came.
	fmt.Fprintf(c.sh.Trace, "pgbench: client %d receiving\n", c.id)
}

// prepared says whether the client runs pgbench's -M prepared.
func (c *Client) prepared() bool { return c.proto != nil && c.proto.Protocol() == "prepared" }

// commandError says where err stopped the client: the command, or for an
// error of a pipeline's statement, that statement.
func (c *Client) commandError(s *Script, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err // the run's end, not the command's failure
	}
	i := c.cmdIdx
	var pe *target.PipelineError
	if errors.As(err, &pe) && pe.Index < len(c.pipeCmds) {
		i = c.pipeCmds[pe.Index]
	}
	cmd := s.Commands[i]
	ce := &CommandError{Client: c.id, Script: s.Index, Command: i, Err: err}
	if cmd.Kind == SQL {
		ce.SQL = c.statementText(cmd)
	} else if len(cmd.Args) > 0 {
		ce.Meta = strings.TrimPrefix(cmd.Args[0], "\\")
	}
	return ce
}

// Command is the index of the command the client runs, or the one its
// last Run stopped at with an error.
func (c *Client) Command() int { return c.cmdIdx }

// fail builds the RuntimeError of command i.
func (c *Client) fail(s *Script, i int, format string, args ...any) error {
	return &RuntimeError{Script: s.Name, Line: s.Commands[i].Line, Client: c.id, Msg: fmt.Sprintf(format, args...)}
}

// Run runs the script once: one pgbench transaction.
func (c *Client) Run(ctx context.Context, s *Script, rec Recorder) error {
	cs := c.script(s)
	c.save()
	c.inPipe = false
	var last time.Duration
	if rec != nil {
		last = rec.Begin()
	}
	if c.sh.Trace != nil {
		fmt.Fprintf(c.sh.Trace, "pgbench: client %d executing script \"%s\"\n", c.id, s.Name)
	}
	for pc, n := 0, len(s.Commands); pc < n; {
		cmd := s.Commands[pc]
		c.cmdIdx = pc
		next, err := pc+1, error(nil)
		if cmd.Kind == SQL {
			err = c.execSQL(ctx, cs, pc, cmd)
		} else if i, ok := c.drawn(cs, cmd); ok {
			c.setVal(cs.slots[cmd.setSlot], value{k: kInt, i: i})
		} else {
			if c.sh.Trace != nil {
				c.traceMeta(cmd)
			}
			next, err = c.exec(ctx, cs, pc, cmd)
		}
		if err != nil {
			c.abortPipeline()
			return c.commandError(s, err)
		}
		if rec != nil {
			if cmd.MustFind && c.rows >= 0 {
				rec.Found(pc, c.rows > 0)
			}
			if next >= n || rec.Wants(pc) {
				now := rec.Now()
				rec.Command(pc, now, now-last)
				last = now
			} else {
				rec.Count(pc)
			}
		}
		pc = next
	}
	if c.inPipe {
		c.abortPipeline()
		return &RuntimeError{Script: s.Name, Line: s.Commands[len(s.Commands)-1].Line, Client: c.id, Msg: "end of script reached with pipeline open"}
	}
	return nil
}

// abortPipeline leaves an open pipeline after an error, as pgbench's
// abort does: what was not synced is never committed.
func (c *Client) abortPipeline() {
	if c.pipe != nil {
		c.pipe.Abort()
		c.pipe = nil
	}
	c.inPipe = false
}

// exec runs meta-command pc and returns the index of the next command.
func (c *Client) exec(ctx context.Context, cs *clientScript, pc int, cmd *Command) (int, error) {
	s := cs.s
	switch cmd.Meta {
	case MetaSet:
		// A draw that failed in Run left the random state as it was:
		// eval says what stopped it.
		if cmd.draw == nil && cmd.intExpr && !cmd.badName {
			rnd := c.rnd
			if i, ok := c.evalInt(cs, cmd.expr); ok {
				c.setVal(cs.slots[cmd.setSlot], value{k: kInt, i: i})
				return pc + 1, nil
			}
			c.rnd = rnd // eval draws again and says what stopped evalInt
		}
		v, err := c.eval(cs, cmd.expr)
		if err != nil {
			return 0, c.fail(s, pc, "%s: %v", cmd.Args[0], err)
		}
		if cmd.badName {
			return 0, c.fail(s, pc, "%s: invalid variable name: %q", cmd.Args[0], cmd.Args[1])
		}
		c.setVal(cs.slots[cmd.setSlot], v)
	case MetaIf, MetaElif:
		if cmd.Meta == MetaElif { // reached from a branch that ran
			return cmd.endif + 1, nil
		}
		return c.branch(cs, pc)
	case MetaElse:
		return cmd.endif + 1, nil
	case MetaSleep:
		return pc + 1, c.sleep(ctx, cs, pc, cmd)
	case MetaShell, MetaSetShell:
		return pc + 1, c.shell(ctx, cs, pc, cmd)
	case MetaStartPipeline:
		return pc + 1, c.startPipeline(ctx, cs, pc)
	case MetaSyncPipeline:
		if !c.inPipe {
			return 0, c.fail(s, pc, "%s: not in pipeline mode", cmd.Args[0])
		}
		if c.pipe != nil {
			if err := c.pipe.Sync(); err != nil {
				return 0, fmt.Errorf("client %d: script %s line %d: %w", c.id, s.Name, cmd.Line, err)
			}
		}
	case MetaEndPipeline:
		return pc + 1, c.endPipeline(ctx, cs, pc)
	}
	return pc + 1, nil
}

// drawn is the value of a \set that is an intDraw (Command.draw), when
// evalDraw gives it; not with -d, whose line exec writes first.
func (c *Client) drawn(cs *clientScript, cmd *Command) (int64, bool) {
	if cmd.draw == nil || cmd.badName || c.sh.Trace != nil {
		return 0, false
	}
	return c.evalDraw(cs, cmd.draw)
}

// startPipeline enters pipeline mode on PostgreSQL; elsewhere the
// statements run in order. Like pgbench, it prepares the pipeline's
// statements first, so that no Parse runs inside it (a snapshot taken
// there would break BEGIN ISOLATION LEVEL SERIALIZABLE).
func (c *Client) startPipeline(ctx context.Context, cs *clientScript, pc int) error {
	s, cmd := cs.s, cs.s.Commands[pc]
	if c.simple {
		return c.fail(s, pc, "%s: cannot use pipeline mode with the simple query protocol", cmd.Args[0])
	}
	if c.inPipe {
		return c.fail(s, pc, "%s: already in pipeline mode", cmd.Args[0])
	}
	c.inPipe = true
	if c.proto == nil {
		return nil
	}
	for i := pc + 1; i < len(s.Commands) && s.Commands[i].Meta != MetaEndPipeline; i++ {
		if s.Commands[i].Kind == SQL {
			if _, err := c.stmt(ctx, cs, i); err != nil {
				return err
			}
		}
	}
	p, err := c.proto.StartPipeline(ctx)
	if err != nil {
		return fmt.Errorf("client %d: script %s line %d: %w", c.id, s.Name, cmd.Line, err)
	}
	c.pipe, c.pipeCmds = p, c.pipeCmds[:0]
	return nil
}

// endPipeline reads the pipeline's results; a statement's error names
// that statement's line.
func (c *Client) endPipeline(ctx context.Context, cs *clientScript, pc int) error {
	s, cmd := cs.s, cs.s.Commands[pc]
	if !c.inPipe {
		return c.fail(s, pc, "%s: not in pipeline mode", cmd.Args[0])
	}
	c.inPipe = false
	if c.pipe == nil {
		return nil
	}
	err := c.pipe.End(ctx)
	c.pipe = nil
	if err == nil {
		return nil
	}
	line := cmd.Line
	var pe *target.PipelineError
	if errors.As(err, &pe) && pe.Index < len(c.pipeCmds) {
		line = s.Commands[c.pipeCmds[pe.Index]].Line
	}
	return fmt.Errorf("client %d: script %s line %d: %w", c.id, s.Name, line, err)
}

// branch evaluates the \if at pc and, while conditions are false, the
// \elif branches after it; it returns where execution continues.
func (c *Client) branch(cs *clientScript, pc int) (int, error) {
	s := cs.s
	for {
		cmd := s.Commands[pc]
		switch cmd.Meta {
		case MetaElse, MetaEndif:
			return pc + 1, nil
		}
		v, err := c.eval(cs, cmd.expr)
		if err != nil {
			return 0, c.fail(s, pc, "%s: %v", cmd.Args[0], err)
		}
		if v.truth() {
			return pc + 1, nil
		}
		pc = cmd.next
	}
}

func (c *Client) sleep(ctx context.Context, cs *clientScript, pc int, cmd *Command) error {
	n := cmd.sleep.n
	if cmd.sleep.slot >= 0 {
		x := &c.vars[cs.slots[cmd.sleep.slot]]
		if !x.set {
			return c.fail(cs.s, pc, "%s: undefined variable %q", cmd.Args[0], cmd.Args[1][1:])
		}
		t := x.text()
		n = atoi(string(t))
		if n == 0 && (len(t) == 0 || !isDigit(t[0])) {
			return c.fail(cs.s, pc, "%s: invalid sleep time %q for variable %q", cmd.Args[0], t, cmd.Args[1][1:])
		}
	}
	d := time.Duration(n*cmd.sleep.usecMul) * time.Microsecond
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shell runs \shell or \setshell through /bin/sh, as pgbench's system()
// and popen() do. An argument ":name" is the variable's value, "::x" is
// the text ":x".
func (c *Client) shell(ctx context.Context, cs *clientScript, pc int, cmd *Command) error {
	args := cmd.Args[1:]
	if cmd.Meta == MetaSetShell {
		args = cmd.Args[2:]
	}
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch {
		case strings.HasPrefix(a, "::"):
			b.WriteString(a[1:])
		case strings.HasPrefix(a, ":"):
			v, ok := c.Var(a[1:])
			if !ok {
				return c.fail(cs.s, pc, "%s: undefined variable %q", cmd.Args[0], a)
			}
			b.WriteString(v)
		default:
			b.WriteString(a)
		}
	}
	sh := exec.CommandContext(ctx, "/bin/sh", "-c", b.String())
	if cmd.Meta == MetaShell {
		if c.sh.Stdout != nil {
			sh.Stdout = c.sh.Stdout
		}
		if err := sh.Run(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return c.fail(cs.s, pc, "%s: could not launch shell command: %v", cmd.Args[0], err)
		}
		return nil
	}
	out, err := sh.Output()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	line, _ := bufio.NewReader(strings.NewReader(string(out))).ReadString('\n')
	if len(line) > 63 {
		line = line[:63]
	}
	if line == "" {
		return c.fail(cs.s, pc, "%s: could not read result of shell command (%v)", cmd.Args[0], err)
	}
	num := strings.TrimRight(line, " \t\n\r\f\v")
	n, perr := strconv.ParseInt(strings.TrimLeft(num, " \t\n\r\f\v"), 10, 32)
	if perr != nil {
		return c.fail(cs.s, pc, "%s: shell command must return an integer (not %q)", cmd.Args[0], line)
	}
	c.setVal(cs.slots[cmd.setSlot], value{k: kInt, i: n})
	return nil
}

// debug writes debug()'s line as pgbench does.
func (c *Client) debug(cs *clientScript, v value) {
	var b []byte
	b = fmt.Appendf(b, "debug(script=%d,command=%d): ", cs.s.Index, c.cmdIdx+1)
	switch v.k {
	case kNull:
		b = append(b, "null"...)
	case kBool:
		b = append(b, "boolean "...)
		b = strconv.AppendBool(b, v.b)
	case kInt:
		b = append(b, "int "...)
		b = strconv.AppendInt(b, v.i, 10)
	case kDouble:
		b = append(b, "double "...)
		b = appendDouble(b, v.d)
	}
	if c.sh.Debug == nil {
		c.logger.Debug(string(b), "client", c.id)
		return
	}
	b = append(b, '\n')
	_, _ = c.sh.Debug.Write(b)
}

// statementText is cmd's SQL with the dialect's placeholders, as the
// engine prepares a script's statement.
func (c *Client) statementText(cmd *Command) string {
	var b strings.Builder
	for i, p := range cmd.parts {
		if i > 0 {
			b.WriteString(c.d.Placeholder(i))
		}
		b.WriteString(p)
	}
	return c.d.ScriptStatement(strings.TrimRight(b.String(), " \t\r\n"), cmd.txn)
}

// stmt returns command pc's statement, preparing it on first use.
func (c *Client) stmt(ctx context.Context, cs *clientScript, pc int) (target.Stmt, error) {
	if st := cs.stmts[pc]; st != nil {
		return st, nil
	}
	return c.prepare(ctx, cs, pc)
}

// prepare prepares command pc's statement.
func (c *Client) prepare(ctx context.Context, cs *clientScript, pc int) (target.Stmt, error) {
	cmd := cs.s.Commands[pc]
	st, err := c.conn.Prepare(ctx, c.statementText(cmd))
	if err != nil {
		return nil, fmt.Errorf("client %d: script %s line %d: %w", c.id, cs.s.Name, cmd.Line, err)
	}
	cs.stmts[pc] = st
	return st, nil
}

// simpleText is cmd's SQL with its variables pasted in as pgbench's
// simple mode does: each as its text, unquoted; an undefined one stays
// as written.
func (c *Client) simpleText(cs *clientScript, cmd *Command) []byte {
	b := c.text[:0]
	for i, part := range cmd.parts {
		b = append(b, part...)
		if i == len(cmd.params) {
			break
		}
		slot := cmd.params[i]
		if x := &c.vars[cs.slots[slot]]; x.set {
			b = append(b, x.text()...)
		} else {
			b = append(append(b, ':'), cs.s.vars[slot]...)
		}
	}
	c.text = b
	return b
}

// execSQL runs SQL command pc: in -M simple as text with its variables
// pasted in, otherwise with them as parameters (an undefined one is NULL,
// as pgbench sends it), queued when a pipeline is open.
func (c *Client) execSQL(ctx context.Context, cs *clientScript, pc int, cmd *Command) error {
	if c.inPipe && cmd.Result != Discard {
		word := "gset"
		if cmd.Result == ASet {
			word = "aset"
		}
		return c.fail(cs.s, pc, "\\%s is not allowed in pipeline mode", word)
	}
	var row target.Row
	var err error
	c.rows = -1
	if c.sh.Trace != nil {
		c.traceSQL(cs, pc, cmd)
		defer fmt.Fprintf(c.sh.Trace, "pgbench: client %d receiving\n", c.id)
	}
	if c.simple {
		row, err = c.proto.RunText(ctx, c.simpleText(cs, cmd))
		if err != nil {
			return fmt.Errorf("client %d: script %s line %d: %w", c.id, cs.s.Name, cmd.Line, err)
		}
		c.rows = row.Rows
		if cmd.Result == Discard {
			return nil
		}
		return c.storeRow(cs, pc, cmd, row)
	}
	st, err := c.stmt(ctx, cs, pc)
	if err != nil {
		return err
	}
	if cap(c.args) < len(cmd.params) {
		c.args = make([]target.Value, len(cmd.params))
	}
	args := c.args[:len(cmd.params)]
	for i, slot := range cmd.params {
		x := &c.vars[cs.slots[slot]]
		switch {
		case !x.set:
			args[i].SetNull()
		case !x.hasStr && x.val.k == kInt:
			args[i].SetInt(x.val.i)
		default:
			args[i].SetStr(x.text())
		}
	}
	if c.pipe != nil {
		c.pipeCmds = append(c.pipeCmds, pc)
		if err := c.pipe.Queue(st, args); err != nil {
			return fmt.Errorf("client %d: script %s line %d: %w", c.id, cs.s.Name, cmd.Line, err)
		}
		return nil
	}
	if cmd.Result == Discard {
		if c.rows, err = st.Run(ctx, args); err != nil {
			return fmt.Errorf("client %d: script %s line %d: %w", c.id, cs.s.Name, cmd.Line, err)
		}
		return nil
	}
	rs, ok := st.(target.RowStmt)
	if !ok {
		return c.fail(cs.s, pc, "this target cannot return rows to \\gset or \\aset")
	}
	row, err = rs.RunRow(ctx, args)
	if err != nil {
		return fmt.Errorf("client %d: script %s line %d: %w", c.id, cs.s.Name, cmd.Line, err)
	}
	c.rows = row.Rows
	return c.storeRow(cs, pc, cmd, row)
}

// storeRow sets the variables of \gset or \aset from row.
func (c *Client) storeRow(cs *clientScript, pc int, cmd *Command, row target.Row) error {
	if len(row.Columns) == 0 && !row.Returned {
		row.Rows = 0 // affected rows (an UPDATE) are not a result
	}
	if cmd.Result == GSet && row.Rows != 1 {
		return c.fail(cs.s, pc, "expected one row, got %d", row.Rows)
	}
	if cmd.Result == ASet && len(row.Sets) > 0 {
		// SQL text of several statements: each result's last row.
		for _, set := range row.Sets {
			if err := c.storeSet(cs, pc, cmd, set.Columns, set.Values); err != nil {
				return err
			}
		}
		return nil
	}
	if row.Rows == 0 {
		return nil
	}
	return c.storeSet(cs, pc, cmd, row.Columns, row.Values)
}

// storeSet sets a variable per column, named by the command's prefix and
// the column.
func (c *Client) storeSet(cs *clientScript, pc int, cmd *Command, cols []string, vals [][]byte) error {
	for i, col := range cols {
		name := cmd.Prefix + col
		if _, ok := c.index[name]; !ok && !validName(name) {
			return c.fail(cs.s, pc, "invalid variable name: %q", name)
		}
		c.setStr(c.lookup(name), append([]byte(nil), vals[i]...))
	}
	return nil
}

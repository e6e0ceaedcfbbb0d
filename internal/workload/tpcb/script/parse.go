package script

import (
	"fmt"
	"strings"

	"github.com/dbmark/dbmark/internal/target"
)

// Kind says whether a command is SQL or a meta-command.
type Kind uint8

const (
	SQL  Kind = iota // an SQL statement sent to the server
	Meta             // a backslash command run by the client
)

// MetaCmd is a meta-command's verb.
type MetaCmd uint8

const (
	MetaNone MetaCmd = iota
	MetaSet
	MetaSetShell
	MetaShell
	MetaSleep
	MetaIf
	MetaElif
	MetaElse
	MetaEndif
	MetaStartPipeline
	MetaSyncPipeline
	MetaEndPipeline
)

var metaNames = map[string]MetaCmd{
	"set": MetaSet, "setshell": MetaSetShell, "shell": MetaShell, "sleep": MetaSleep,
	"if": MetaIf, "elif": MetaElif, "else": MetaElse, "endif": MetaEndif,
	"startpipeline": MetaStartPipeline, "syncpipeline": MetaSyncPipeline, "endpipeline": MetaEndPipeline,
	"gset": metaGSet, "aset": metaASet,
}

// \gset and \aset are folded into the SQL command before them.
const (
	metaGSet MetaCmd = 100 + iota
	metaASet
)

// ResultMode is what an SQL command does with the rows it returns.
type ResultMode uint8

const (
	Discard ResultMode = iota
	GSet               // \gset: exactly one row into variables
	ASet               // \aset: the last row, if any, into variables
)

// maxArgs bounds a meta-command's words and an SQL command's variables.
const maxArgs = 256

// Script is one parsed pgbench script.
type Script struct {
	Name     string
	Commands []*Command
	// Index is the script's number in the run, shown by debug() as
	// "script=N"; the workload sets it.
	Index int

	vars  []string // variable names referenced, by slot
	slots map[string]int
}

// Command is one SQL statement or meta-command.
type Command struct {
	Line  int  // 1-based line of its first character
	Kind  Kind // SQL or Meta
	Meta  MetaCmd
	Label string // its first line (at most 127 bytes), for per-command reports
	// Name is an SQL command's own name, from a -- comment line just above
	// it (labels.go); "" for none.
	Name string
	Text string   // the whole command as written (SQL with \; and \: resolved)
	Args []string // a meta-command's words; Args[0] is its name

	// SQL
	Result ResultMode
	Prefix string // \gset or \aset variable prefix
	// MustFind marks a read that must find a row: the builtins' SELECT of
	// the account the transaction drew (markMustFind). Run tells the
	// Recorder whether it did.
	MustFind bool
	parts    []string // the SQL text around its variable references
	params   []int    // the slot of each reference

	// meta-commands
	expr    *node
	intExpr bool     // expr is intOnly: \set tries evalInt first
	draw    *intDraw // \set: expr as an intDraw, tried before evalInt
	setSlot int      // \set, \setshell target
	badName bool     // the target is no variable name: an error when the command runs, as in pgbench
	next    int      // \if, \elif: the next branch or \endif; \elif, \else: the \endif
	endif   int
	sleep   sleepArg
	txn     target.Txn // a builtin's BEGIN or END, which engines spell their own way
}

// sleepArg is \sleep's duration: a number or a variable, times a unit.
type sleepArg struct {
	n       int64
	slot    int // -1 for a literal
	usecMul int64
}

// slot returns the variable slot for name, adding it if new.
func (s *Script) slot(name string) int {
	if i, ok := s.slots[name]; ok {
		return i
	}
	s.slots[name] = len(s.vars)
	s.vars = append(s.vars, name)
	return len(s.vars) - 1
}

// Parse parses a pgbench script. file names it in errors.
func Parse(file, src string) (*Script, error) {
	s := &Script{Name: file, slots: map[string]int{}}
	p := &scriptParser{s: s, file: file, src: src, line: 1}
	if err := p.run(); err != nil {
		return nil, err
	}
	if len(s.Commands) == 0 {
		return nil, fmt.Errorf("%s: empty command list for script", file)
	}
	if err := s.link(); err != nil {
		return nil, err
	}
	s.name(src)
	s.markMustFind()
	return s, nil
}

// The builtins' read of an account and the draw of its id: a script that
// has both, as written there, reads an account that pgbench -i loaded.
const (
	accountRead = "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;"
	accountDraw = `\set aid random(1, 100000 * :scale)`
)

// markMustFind marks the reads that must find a row: a builtin's read of
// its account, or the same read in a script that draws :aid as the
// builtins do and sets it nowhere else (a builtin saved as a custom
// script). Reads of any other form may find nothing by design, so they
// are left alone.
func (s *Script) markMustFind() {
	draws, sets := 0, 0
	for _, c := range s.Commands {
		switch {
		case c.Kind == Meta && c.Meta == MetaSet && len(c.Args) > 1 && c.Args[1] == "aid":
			sets++
			if sameWords(c.Text, accountDraw) {
				draws++
			}
		case c.Kind == Meta && c.Meta == MetaSetShell && len(c.Args) > 1 && c.Args[1] == "aid",
			c.Kind == SQL && c.Result != Discard:
			sets++ // \setshell, \gset or \aset may set :aid too
		}
	}
	if draws != 1 || sets != 1 {
		return
	}
	for _, c := range s.Commands {
		if c.Kind == SQL && sameWords(c.Text, accountRead) {
			c.MustFind = true
		}
	}
}

// sameWords says whether a and b are the same words, whatever the spaces
// between them and the case of their letters.
func sameWords(a, b string) bool {
	fa, fb := strings.Fields(a), strings.Fields(b)
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if !strings.EqualFold(fa[i], fb[i]) {
			return false
		}
	}
	return true
}

type scriptParser struct {
	s    *Script
	file string
	src  string
	pos  int
	line int

	buf     []byte // the SQL command being collected
	bufLine int
	depth   int // parenthesis depth
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// run splits the source into SQL commands (ending at a semicolon outside
// parentheses, quotes and comments, or before a backslash command) and
// backslash commands (ending at the end of their line).
func (p *scriptParser) run() error {
	src := p.src
	for p.pos < len(src) {
		c := src[p.pos]
		if len(p.buf) == 0 {
			switch {
			case isSpace(c):
				p.advance(1)
				continue
			case strings.HasPrefix(src[p.pos:], "--"):
				p.skipTo('\n', false)
				continue
			}
			p.bufLine = p.line
		}
		switch {
		case c == '\\':
			if p.pos+1 < len(src) && (src[p.pos+1] == ';' || src[p.pos+1] == ':') {
				p.buf = append(p.buf, src[p.pos+1])
				p.advance(2)
				continue
			}
			if err := p.flushSQL(); err != nil {
				return err
			}
			if err := p.meta(); err != nil {
				return err
			}
		case strings.HasPrefix(src[p.pos:], "--"):
			p.skipTo('\n', true)
		case strings.HasPrefix(src[p.pos:], "/*"):
			p.comment()
		case c == '\'':
			esc := false
			if n := len(p.buf); n > 0 && (p.buf[n-1] == 'e' || p.buf[n-1] == 'E') && (n == 1 || !isAlnum(p.buf[n-2]) && p.buf[n-2] != '$') {
				esc = true
			}
			p.quoted('\'', esc)
		case c == '"':
			p.quoted('"', false)
		case c == '$' && p.dollarQuote():
		case c == '(':
			p.depth++
			p.buf = append(p.buf, c)
			p.advance(1)
		case c == ')':
			if p.depth > 0 {
				p.depth--
			}
			p.buf = append(p.buf, c)
			p.advance(1)
		case c == ';':
			p.buf = append(p.buf, c)
			p.advance(1)
			if p.depth == 0 {
				if err := p.flushSQL(); err != nil {
					return err
				}
			}
		default:
			p.buf = append(p.buf, c)
			p.advance(1)
		}
	}
	return p.flushSQL()
}

// advance moves n bytes forward, counting lines.
func (p *scriptParser) advance(n int) {
	for _, c := range []byte(p.src[p.pos : p.pos+n]) {
		if c == '\n' {
			p.line++
		}
	}
	p.pos += n
}

// copyTo appends src up to end to the buffer and moves there.
func (p *scriptParser) copyTo(end int) {
	p.buf = append(p.buf, p.src[p.pos:end]...)
	p.advance(end - p.pos)
}

// skipTo moves to the next c (not past it), keeping the text if keep.
func (p *scriptParser) skipTo(c byte, keep bool) {
	end := strings.IndexByte(p.src[p.pos:], c)
	if end < 0 {
		end = len(p.src)
	} else {
		end += p.pos
	}
	if keep {
		p.copyTo(end)
		return
	}
	p.advance(end - p.pos)
}

// comment copies a (nested) /* */ comment.
func (p *scriptParser) comment() {
	depth, i := 0, p.pos
	for i < len(p.src) {
		switch {
		case strings.HasPrefix(p.src[i:], "/*"):
			depth++
			i += 2
		case strings.HasPrefix(p.src[i:], "*/"):
			depth--
			i += 2
			if depth == 0 {
				p.copyTo(i)
				return
			}
		default:
			i++
		}
	}
	p.copyTo(i)
}

// quoted copies a quoted string or identifier; a doubled quote stays
// inside, and with esc a backslash escapes the next character.
func (p *scriptParser) quoted(q byte, esc bool) {
	i := p.pos + 1
	for i < len(p.src) {
		c := p.src[i]
		switch {
		case esc && c == '\\':
			i += 2
			continue
		case c == q && i+1 < len(p.src) && p.src[i+1] == q:
			i += 2
			continue
		case c == q:
			p.copyTo(i + 1)
			return
		}
		i++
	}
	p.copyTo(len(p.src))
}

// dollarQuote copies a $tag$...$tag$ string if one starts here.
func (p *scriptParser) dollarQuote() bool {
	if n := len(p.buf); n > 0 && (isAlnum(p.buf[n-1]) || p.buf[n-1] == '$') {
		return false
	}
	s := p.src[p.pos:]
	j := 1
	if j < len(s) && isAlpha(s[j]) {
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
	}
	if j >= len(s) || s[j] != '$' {
		return false
	}
	tag := s[:j+1]
	end := strings.Index(s[len(tag):], tag)
	if end < 0 {
		p.copyTo(len(p.src))
		return true
	}
	p.copyTo(p.pos + len(tag) + end + len(tag))
	return true
}

// flushSQL ends the SQL command being collected, if any.
func (p *scriptParser) flushSQL() error {
	defer func() {
		p.buf, p.depth = p.buf[:0], 0
	}()
	text := string(p.buf)
	if strings.TrimSpace(text) == "" {
		return nil
	}
	cmd := &Command{Line: p.bufLine, Kind: SQL, Label: firstLine(text), Text: text, setSlot: -1}
	if err := p.splitVars(cmd, text); err != nil {
		return err
	}
	p.s.Commands = append(p.s.Commands, cmd)
	return nil
}

// splitVars finds text's variable references as pgbench does, on the
// text alone: a colon and a name, wherever they stand (in quotes and
// comments too); a run of colons not followed by a name is passed over
// whole, so "x::int" is a cast. "\:" is a colon like any other here.
func (p *scriptParser) splitVars(cmd *Command, text string) error {
	start := 0
	for i := 0; i < len(text); {
		if text[i] != ':' {
			i++
			continue
		}
		j := i + 1
		if j >= len(text) || !isAlpha(text[j]) {
			for i < len(text) && text[i] == ':' {
				i++
			}
			continue
		}
		for j < len(text) && isAlnum(text[j]) {
			j++
		}
		if len(cmd.params) >= maxArgs-1 {
			return &SyntaxError{File: p.file, Line: p.bufLine, Msg: fmt.Sprintf("statement has too many arguments (maximum is %d)", maxArgs-1)}
		}
		cmd.parts = append(cmd.parts, text[start:i])
		cmd.params = append(cmd.params, p.s.slot(text[i+1:j]))
		start, i = j, j
	}
	cmd.parts = append(cmd.parts, text[start:])
	return nil
}

// firstLine is the text up to its first line break, at most 127 bytes.
func firstLine(s string) string {
	if len(s) > 127 {
		s = s[:127]
	}
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}

// word is one word of a meta-command and its offset in the source.
type word struct {
	s  string
	at int
}

// nextWord reads a space-separated word of the current meta-command; ok is
// false at the end of its line (which is consumed).
func (p *scriptParser) nextWord() (word, bool) {
	src := p.src
	for p.pos < len(src) {
		c := src[p.pos]
		switch {
		case c == '\n':
			p.advance(1)
			return word{}, false
		case c == '\\' && strings.HasPrefix(src[p.pos+1:], "\n"):
			p.advance(2)
		case c == '\\' && strings.HasPrefix(src[p.pos+1:], "\r\n"):
			p.advance(3)
		case isSpace(c):
			p.advance(1)
		default:
			start := p.pos
			for p.pos < len(src) && !isSpace(src[p.pos]) {
				p.pos++
			}
			w := src[start:p.pos]
			// "word\<newline>" is the word followed by a continuation.
			if strings.HasSuffix(w, "\\") && p.pos < len(src) && src[p.pos] == '\n' {
				w = w[:len(w)-1]
				p.advance(1)
			} else if strings.HasSuffix(w, "\\") && strings.HasPrefix(src[p.pos:], "\r\n") {
				w = w[:len(w)-1]
				p.advance(2)
			}
			return word{s: w, at: start}, true
		}
	}
	return word{}, false
}

// chompText is the source from start to the parser's position without
// trailing line breaks.
func (p *scriptParser) chompText(start int) string {
	return strings.TrimRight(p.src[start:p.pos], "\r\n")
}

// meta parses the backslash command at p.pos.
func (p *scriptParser) meta() error {
	bs, line := p.pos, p.line
	p.advance(1)
	name, ok := p.nextWord()
	if !ok {
		return nil
	}
	cmd := &Command{Line: line, Kind: Meta, Args: []string{name.s}, setSlot: -1}
	cmd.Meta = metaNames[strings.ToLower(name.s)]
	synErr := func(msg, more string, col int, withText bool) error {
		m := msg
		if more != "" {
			m += " (" + more + ")"
		}
		m += fmt.Sprintf(" in command %q", name.s)
		e := &SyntaxError{File: p.file, Line: line, Msg: m}
		if withText {
			e.Text = cmd.Label
			if col >= 0 {
				e.Col = col + 1
			}
		}
		return e
	}
	switch cmd.Meta {
	case MetaSet, MetaIf, MetaElif:
		if cmd.Meta == MetaSet {
			v, ok := p.nextWord()
			if !ok {
				return synErr("missing argument", "", -1, false)
			}
			cmd.Args = append(cmd.Args, v.s)
			cmd.setSlot = p.s.slot(v.s)
			cmd.badName = !validName(v.s)
		}
		ep := &exprParser{src: p.src, pos: p.pos, start: bs, vars: p.s.slot}
		n, perr := ep.parse()
		if perr != nil {
			ep.pos = max(ep.pos, perr.at+1)
			if perr.at < len(p.src) && p.src[perr.at] != '\n' {
				ep.skipLine()
			}
			p.advance(ep.pos - p.pos)
			cmd.Label = p.chompText(bs)
			return synErr(perr.msg, perr.more, perr.at-bs, true)
		}
		cmd.expr, cmd.intExpr = n, intOnly(n)
		if cmd.Meta == MetaSet {
			cmd.draw = drawOf(n)
		}
		p.advance(ep.pos - p.pos)
		cmd.Label = p.chompText(bs)
		cmd.Text = cmd.Label
		p.s.Commands = append(p.s.Commands, cmd)
		return nil
	}
	var words []word
	words = append(words, name)
	for {
		w, ok := p.nextWord()
		if !ok {
			break
		}
		if len(words) >= maxArgs {
			cmd.Label = p.chompText(bs)
			return synErr("too many arguments", "", -1, true)
		}
		words = append(words, w)
		cmd.Args = append(cmd.Args, w.s)
	}
	cmd.Label = p.chompText(bs)
	cmd.Text = cmd.Label
	switch cmd.Meta {
	case MetaSleep:
		if err := p.parseSleep(cmd, words, bs, synErr); err != nil {
			return err
		}
	case MetaSetShell:
		if len(words) < 3 {
			return synErr("missing argument", "", -1, true)
		}
		cmd.setSlot = p.s.slot(words[1].s)
	case MetaShell:
		if len(words) < 2 {
			return synErr("missing command", "", -1, true)
		}
	case MetaElse, MetaEndif, MetaStartPipeline, MetaSyncPipeline, MetaEndPipeline:
		if len(words) != 1 {
			return synErr("unexpected argument", "", -1, true)
		}
	case metaGSet, metaASet:
		if len(words) > 2 {
			return synErr("too many arguments", "", -1, true)
		}
		return p.attachResult(cmd, line)
	default:
		return synErr("invalid command", "", -1, true)
	}
	p.s.Commands = append(p.s.Commands, cmd)
	return nil
}

// parseSleep checks \sleep's argument and unit ("\sleep 10ms" too).
func (p *scriptParser) parseSleep(cmd *Command, words []word, bs int, synErr func(string, string, int, bool) error) error {
	if len(words) < 2 {
		return synErr("missing argument", "", -1, true)
	}
	if len(words) > 3 {
		return synErr("too many arguments", "", words[3].at-bs, true)
	}
	arg := words[1].s
	cmd.sleep = sleepArg{slot: -1, usecMul: 1_000_000}
	if arg[0] == ':' {
		cmd.sleep.slot = p.s.slot(arg[1:])
	} else {
		i := 0
		if arg[0] == '+' || arg[0] == '-' {
			i++
		}
		digits := i
		for i < len(arg) && isDigit(arg[i]) {
			i++
		}
		if i < len(arg) {
			if len(words) == 2 && i > digits {
				words = append(words, word{s: arg[i:], at: words[1].at + i})
			} else {
				return synErr("invalid sleep time, must be an integer", arg, words[1].at-bs, true)
			}
		}
		cmd.sleep.n = atoi(arg[:i])
	}
	if len(words) == 3 {
		switch strings.ToLower(words[2].s) {
		case "us":
			cmd.sleep.usecMul = 1
		case "ms":
			cmd.sleep.usecMul = 1000
		case "s":
			cmd.sleep.usecMul = 1_000_000
		default:
			return synErr("unrecognized time unit, must be us, ms or s", words[2].s, words[2].at-bs, true)
		}
	}
	return nil
}

// atoi is C's atoi: an optional sign and the leading digits; 0 if none.
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && isDigit(s[i]); i++ {
		n = n*10 + int64(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// attachResult folds \gset or \aset into the SQL command just before it.
func (p *scriptParser) attachResult(cmd *Command, line int) error {
	n := len(p.s.Commands)
	if n == 0 {
		return &SyntaxError{File: p.file, Line: line, Msg: `\gset must follow an SQL command`}
	}
	prev := p.s.Commands[n-1]
	if prev.Kind != SQL || prev.Result != Discard {
		msg := `\gset must follow an SQL command`
		if prev.Kind == Meta { // pgbench names the command only if it is a meta-command
			msg += " (" + prev.Label + ")"
		}
		return &SyntaxError{File: p.file, Line: line, Msg: msg}
	}
	prev.Result = GSet
	if cmd.Meta == metaASet {
		prev.Result = ASet
	}
	if len(cmd.Args) > 1 {
		prev.Prefix = cmd.Args[1]
	}
	return nil
}

// link checks that \if blocks nest and records where each branch jumps.
func (s *Script) link() error {
	type frame struct {
		branches []int
		sawElse  bool
	}
	var stack []*frame
	condErr := func(i int, msg string) error {
		c := s.Commands[i]
		return &SyntaxError{File: s.Name, Line: c.Line, Msg: msg, Text: c.Label}
	}
	for i, c := range s.Commands {
		if c.Kind != Meta {
			continue
		}
		switch c.Meta {
		case MetaIf:
			stack = append(stack, &frame{branches: []int{i}})
		case MetaElif, MetaElse:
			word := `\elif`
			if c.Meta == MetaElse {
				word = `\else`
			}
			if len(stack) == 0 {
				return condErr(i, word+` without matching \if`)
			}
			f := stack[len(stack)-1]
			if f.sawElse {
				return condErr(i, word+` after \else`)
			}
			f.sawElse = c.Meta == MetaElse
			f.branches = append(f.branches, i)
		case MetaEndif:
			if len(stack) == 0 {
				return condErr(i, `\endif without matching \if`)
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for k, b := range f.branches {
				next := i
				if k+1 < len(f.branches) {
					next = f.branches[k+1]
				}
				s.Commands[b].next = next
				s.Commands[b].endif = i
			}
		}
	}
	if len(stack) > 0 {
		return condErr(stack[len(stack)-1].branches[0], `\if without matching \endif`)
	}
	return nil
}

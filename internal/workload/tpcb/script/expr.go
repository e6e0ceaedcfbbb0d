package script

import (
	"math"
	"strconv"
	"strings"
)

// kind is the type of a runtime value.
type kind uint8

const (
	kNone kind = iota // a variable known only by its text
	kNull
	kBool
	kInt
	kDouble
)

// value is one expression result.
type value struct {
	k kind
	b bool
	i int64
	d float64
}

// fn identifies an operator or a function.
type fn uint8

const (
	fAdd fn = iota
	fSub
	fMul
	fDiv
	fMod
	fAbs
	fLeast
	fGreatest
	fDebug
	fPi
	fSqrt
	fLn
	fExp
	fInt
	fDouble
	fRandom
	fRandomGaussian
	fRandomExponential
	fRandomZipfian
	fPow
	fAnd
	fOr
	fNot
	fBitAnd
	fBitOr
	fBitXor
	fLShift
	fRShift
	fEq
	fNe
	fLe
	fLt
	fIs
	fCase
	fHashMurmur2
	fHashFNV1a
	fPermute
)

// Argument counts with special meanings.
const (
	nargsVariable = -1 // least, greatest: one or more
	nargsCase     = -2
	nargsHash     = -3 // one, or two with a seed
	nargsPermute  = -4 // two, or three with a seed
)

// funcs are the functions callable by name; pgbench matches names without
// regard to case. "mod" is both the % operator and a function.
var funcs = map[string]struct {
	f     fn
	nargs int
}{
	"mod": {fMod, 2}, "abs": {fAbs, 1}, "least": {fLeast, nargsVariable},
	"greatest": {fGreatest, nargsVariable}, "debug": {fDebug, 1}, "pi": {fPi, 0},
	"sqrt": {fSqrt, 1}, "ln": {fLn, 1}, "exp": {fExp, 1}, "int": {fInt, 1},
	"double": {fDouble, 1}, "random": {fRandom, 2},
	"random_gaussian": {fRandomGaussian, 3}, "random_exponential": {fRandomExponential, 3},
	"random_zipfian": {fRandomZipfian, 3}, "pow": {fPow, 2}, "power": {fPow, 2},
	"hash": {fHashMurmur2, nargsHash}, "hash_murmur2": {fHashMurmur2, nargsHash},
	"hash_fnv1a": {fHashFNV1a, nargsHash}, "permute": {fPermute, nargsPermute},
}

// node is a parsed expression: a constant, a variable or a call.
type node struct {
	op   nodeOp
	val  value  // constant
	slot int    // variable: the script's variable slot
	name string // variable or function name
	f    fn
	args []*node
}

type nodeOp uint8

const (
	nConst nodeOp = iota
	nVar
	nCall
)

// token kinds of the expression lexer.
type tok uint8

const (
	tEOF tok = iota // end of line or input
	tInt
	tMaxIntPlusOne // 9223372036854775808, legal only after unary minus
	tDouble
	tBool
	tNull
	tVar
	tFunc
	tAnd
	tOr
	tNot
	tIs
	tIsNull
	tNotNull
	tCase
	tWhen
	tThen
	tElse
	tEnd
	tNe
	tLe
	tGe
	tLShift
	tRShift
	tChar // a one-character operator or punctuation, in token.ch
)

type token struct {
	t     tok
	ch    byte
	text  string
	start int // offsets into the source
	end   int
	i     int64
	d     float64
	b     bool
}

var keywords = map[string]tok{
	"and": tAnd, "or": tOr, "not": tNot, "is": tIs, "isnull": tIsNull, "notnull": tNotNull,
	"case": tCase, "when": tWhen, "then": tThen, "else": tElse, "end": tEnd,
	"null": tNull, "true": tBool, "false": tBool,
}

func isAlpha(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isAlpha(c) || isDigit(c) }

// exprParser parses one expression of a \set, \if or \elif command, from
// src[pos] to the end of the line (backslash-newline continues it).
type exprParser struct {
	src     string
	pos     int
	start   int // offset of the command's backslash, for columns
	peeked  bool
	tk      token
	lastEnd int // end offset of the most recently lexed token
	err     *exprError
	vars    func(name string) int
}

// exprError is an error at the end of the token that caused it.
type exprError struct {
	msg, more string
	at        int // offset of the caret
}

func (p *exprParser) fail(msg, more string) {
	if p.err == nil {
		p.err = &exprError{msg: msg, more: more, at: p.lastEnd - 1}
	}
	panic(p.err)
}

// lex reads the next token.
func (p *exprParser) lex() token {
	s := p.src
	for p.pos < len(s) {
		c := s[p.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			p.pos++
			continue
		case c == '\\' && p.pos+1 < len(s) && s[p.pos+1] == '\n':
			p.pos += 2
			continue
		case c == '\\' && p.pos+2 < len(s) && s[p.pos+1] == '\r' && s[p.pos+2] == '\n':
			p.pos += 3
			continue
		}
		break
	}
	t := token{start: p.pos}
	if p.pos >= len(s) {
		t.t, t.end = tEOF, p.pos
		p.lastEnd = p.pos
		return t
	}
	c := s[p.pos]
	if c == '\n' {
		p.pos++
		t.t, t.end = tEOF, p.pos
		p.lastEnd = p.pos
		return t
	}
	two := ""
	if p.pos+1 < len(s) {
		two = s[p.pos : p.pos+2]
	}
	switch {
	case two == "<>" || two == "!=":
		t.t, p.pos = tNe, p.pos+2
	case two == "<=":
		t.t, p.pos = tLe, p.pos+2
	case two == ">=":
		t.t, p.pos = tGe, p.pos+2
	case two == "<<":
		t.t, p.pos = tLShift, p.pos+2
	case two == ">>":
		t.t, p.pos = tRShift, p.pos+2
	case strings.IndexByte("+-*/%()=<>|&#~,", c) >= 0:
		t.t, t.ch, p.pos = tChar, c, p.pos+1
	case c == ':' && p.pos+1 < len(s) && isAlnum(s[p.pos+1]):
		j := p.pos + 1
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
		t.t, t.text, p.pos = tVar, s[p.pos+1:j], j
	case isDigit(c) || c == '.' && p.pos+1 < len(s) && isDigit(s[p.pos+1]):
		p.lexNumber(&t)
	case isAlpha(c):
		j := p.pos
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
		t.text, p.pos = s[p.pos:j], j
		if k, ok := keywords[strings.ToLower(t.text)]; ok {
			t.t = k
			t.b = strings.EqualFold(t.text, "true")
		} else {
			t.t = tFunc
		}
	default:
		p.pos++
		t.end, p.lastEnd = p.pos, p.pos
		p.fail("unexpected character", s[t.start:p.pos])
	}
	t.end = p.pos
	p.lastEnd = p.pos
	return t
}

// lexNumber reads an integer or a double constant.
func (p *exprParser) lexNumber(t *token) {
	s := p.src
	j := p.pos
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	isDouble := false
	if j < len(s) && s[j] == '.' {
		isDouble = true
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			isDouble, j = true, k
		}
	}
	text := s[p.pos:j]
	p.pos = j
	p.lastEnd = j
	if !isDouble {
		if text == "9223372036854775808" {
			t.t = tMaxIntPlusOne
			return
		}
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			p.fail("bigint constant overflow", text)
		}
		t.t, t.i = tInt, v
		return
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(v, 0) {
		p.fail("double constant overflow", text)
	}
	t.t, t.d = tDouble, v
}

func (p *exprParser) peek() token {
	if !p.peeked {
		p.tk = p.lex()
		p.peeked = true
	}
	return p.tk
}

func (p *exprParser) next() token {
	t := p.peek()
	p.peeked = false
	return t
}

func (p *exprParser) isChar(t token, c byte) bool { return t.t == tChar && t.ch == c }

func (p *exprParser) expectChar(c byte) {
	if t := p.next(); !p.isChar(t, c) {
		p.fail("syntax error", "")
	}
}

// Precedence levels, lowest first, as in pgbench's grammar.
const (
	precOr = iota + 1
	precAnd
	precNot
	precIs
	precCmp
	precBit
	precAdd
	precMul
	precUnary
)

// binary returns the precedence and function of a binary operator token.
func binary(t token) (int, fn, bool) {
	switch t.t {
	case tOr:
		return precOr, fOr, true
	case tAnd:
		return precAnd, fAnd, true
	case tNe:
		return precCmp, fNe, true
	case tLe, tGe:
		return precCmp, fLe, true
	case tLShift:
		return precBit, fLShift, true
	case tRShift:
		return precBit, fRShift, true
	case tChar:
		switch t.ch {
		case '=':
			return precCmp, fEq, true
		case '<', '>':
			return precCmp, fLt, true
		case '|':
			return precBit, fBitOr, true
		case '&':
			return precBit, fBitAnd, true
		case '#':
			return precBit, fBitXor, true
		case '+':
			return precAdd, fAdd, true
		case '-':
			return precAdd, fSub, true
		case '*':
			return precMul, fMul, true
		case '/':
			return precMul, fDiv, true
		case '%':
			return precMul, fMod, true
		}
	}
	return 0, 0, false
}

func call(f fn, args ...*node) *node { return &node{op: nCall, f: f, args: args} }
func constant(v value) *node         { return &node{op: nConst, val: v} }

var nullNode = value{k: kNull}

// parseExpr parses operators of precedence min and above (precedence
// climbing, resolving exactly as pgbench's LALR grammar does).
func (p *exprParser) parseExpr(min int) *node {
	left := p.parseUnary()
	lastCmp := false // nonassociative comparison just reduced at this level
	for {
		t := p.peek()
		switch t.t {
		case tIsNull, tNotNull:
			if precIs < min {
				return left
			}
			p.next()
			left = call(fIs, left, constant(nullNode))
			if t.t == tNotNull {
				left = call(fNot, left)
			}
			lastCmp = false
			continue
		case tIs:
			if precIs < min {
				return left
			}
			p.next()
			neg := false
			r := p.next()
			if r.t == tNot {
				neg = true
				r = p.next()
			}
			switch r.t {
			case tNull:
				left = call(fIs, left, constant(nullNode))
			case tBool:
				left = call(fIs, left, constant(value{k: kBool, b: r.b}))
			default:
				p.fail("syntax error", "")
			}
			if neg {
				left = call(fNot, left)
			}
			lastCmp = false
			continue
		}
		prec, f, ok := binary(t)
		if !ok || prec < min {
			return left
		}
		if prec == precCmp && lastCmp {
			p.fail("syntax error", "")
		}
		p.next()
		right := p.parseExpr(prec + 1)
		switch {
		case t.t == tGe || p.isChar(t, '>'):
			left = call(f, right, left) // a > b is b < a
		default:
			left = call(f, left, right)
		}
		lastCmp = prec == precCmp
	}
}

func (p *exprParser) parseUnary() *node {
	t := p.next()
	switch t.t {
	case tChar:
		switch t.ch {
		case '(':
			e := p.parseExpr(0)
			p.expectChar(')')
			return e
		case '+':
			return p.parseExpr(precUnary)
		case '-':
			if p.peek().t == tMaxIntPlusOne {
				p.next()
				return constant(value{k: kInt, i: math.MinInt64})
			}
			return call(fSub, constant(value{k: kInt}), p.parseExpr(precUnary))
		case '~':
			return call(fBitXor, constant(value{k: kInt, i: -1}), p.parseExpr(precBit+1))
		}
	case tNot:
		return call(fNot, p.parseExpr(precNot+1))
	case tNull:
		return constant(nullNode)
	case tBool:
		return constant(value{k: kBool, b: t.b})
	case tInt:
		return constant(value{k: kInt, i: t.i})
	case tDouble:
		return constant(value{k: kDouble, d: t.d})
	case tVar:
		return &node{op: nVar, name: t.text, slot: p.vars(t.text)}
	case tFunc:
		return p.parseCall(t)
	case tCase:
		return p.parseCase()
	}
	p.fail("syntax error", "")
	return nil
}

func (p *exprParser) parseCall(name token) *node {
	def, ok := funcs[strings.ToLower(name.text)]
	if !ok {
		p.fail("unexpected function name", name.text)
	}
	p.expectChar('(')
	var args []*node
	if !p.isChar(p.peek(), ')') {
		for {
			args = append(args, p.parseExpr(0))
			if !p.isChar(p.peek(), ',') {
				break
			}
			p.next()
		}
	}
	p.expectChar(')')
	fname := strings.ToLower(name.text)
	switch def.nargs {
	case nargsVariable:
		if len(args) == 0 {
			p.fail("at least one argument expected", fname)
		}
	case nargsHash:
		if len(args) < 1 || len(args) > 2 {
			p.fail("unexpected number of arguments", fname)
		}
		if len(args) == 1 {
			args = append(args, &node{op: nVar, name: "default_seed", slot: p.vars("default_seed")})
		}
	case nargsPermute:
		if len(args) < 2 || len(args) > 3 {
			p.fail("unexpected number of arguments", fname)
		}
		if len(args) == 2 {
			args = append(args, &node{op: nVar, name: "default_seed", slot: p.vars("default_seed")})
		}
	default:
		if len(args) != def.nargs {
			p.fail("unexpected number of arguments", fname)
		}
	}
	return call(def.f, args...)
}

// parseCase reads CASE WHEN c THEN v ... [ELSE e] END into a call whose
// arguments are the condition/value pairs followed by the else value.
func (p *exprParser) parseCase() *node {
	var args []*node
	for {
		t := p.next()
		if t.t != tWhen {
			if len(args) > 0 && (t.t == tElse || t.t == tEnd) {
				if t.t == tElse {
					args = append(args, p.parseExpr(0))
					if p.next().t != tEnd {
						p.fail("syntax error", "")
					}
				} else {
					args = append(args, constant(nullNode))
				}
				return call(fCase, args...)
			}
			p.fail("syntax error", "")
		}
		cond := p.parseExpr(0)
		if p.next().t != tThen {
			p.fail("syntax error", "")
		}
		args = append(args, cond, p.parseExpr(0))
	}
}

// parse reads a whole expression up to the end of its line.
func (p *exprParser) parse() (n *node, err *exprError) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*exprError)
			if !ok {
				panic(r)
			}
			n, err = nil, e
		}
	}()
	n = p.parseExpr(0)
	if p.next().t != tEOF {
		p.fail("syntax error", "")
	}
	return n, nil
}

// skipLine moves past the rest of the command's line, for error display.
func (p *exprParser) skipLine() {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '\\' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '\n' {
			p.pos += 2
			continue
		}
		p.pos++
		if c == '\n' {
			return
		}
	}
}

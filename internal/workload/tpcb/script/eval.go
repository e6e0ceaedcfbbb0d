package script

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// evalError is a failed evaluation; the client adds script, line and id.
type evalError struct{ msg string }

func (e *evalError) Error() string { return e.msg }

func errorf(format string, args ...any) error { return &evalError{fmt.Sprintf(format, args...)} }

func (v value) typeName() string {
	switch v.k {
	case kNull:
		return "null"
	case kBool:
		return "boolean"
	case kInt:
		return "int"
	case kDouble:
		return "double"
	}
	return "none"
}

func (v value) toBool() (bool, error) {
	if v.k == kBool {
		return v.b, nil
	}
	return false, errorf("cannot coerce %s to boolean", v.typeName())
}

// truth is the value as an \if condition or a CASE branch test.
func (v value) truth() bool {
	switch v.k {
	case kBool:
		return v.b
	case kInt:
		return v.i != 0
	case kDouble:
		return v.d != 0
	}
	return false
}

func (v value) toInt() (int64, error) {
	switch v.k {
	case kInt:
		return v.i, nil
	case kDouble:
		d := math.RoundToEven(v.d)
		if math.IsNaN(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0 {
			return 0, errorf("double to int overflow for %f", d)
		}
		return int64(d), nil
	}
	return 0, errorf("cannot coerce %s to int", v.typeName())
}

func (v value) toDouble() (float64, error) {
	switch v.k {
	case kDouble:
		return v.d, nil
	case kInt:
		return float64(v.i), nil
	}
	return 0, errorf("cannot coerce %s to double", v.typeName())
}

// appendValue appends the text form pgbench gives a value.
func appendValue(b []byte, v value) []byte {
	switch v.k {
	case kNull:
		return append(b, "NULL"...)
	case kBool:
		return strconv.AppendBool(b, v.b)
	case kInt:
		return strconv.AppendInt(b, v.i, 10)
	case kDouble:
		return appendDouble(b, v.d)
	}
	return b
}

// appendDouble formats d as PostgreSQL's snprintf formats "%.15g".
func appendDouble(b []byte, d float64) []byte {
	switch {
	case math.IsNaN(d):
		return append(b, "NaN"...)
	case math.IsInf(d, 1):
		return append(b, "Infinity"...)
	case math.IsInf(d, -1):
		return append(b, "-Infinity"...)
	}
	return strconv.AppendFloat(b, d, 'g', 15, 64)
}

// parseValue reads a variable's text as pgbench does: null, a boolean
// word or prefix, an integer, else a double.
func parseValue(name, s string) (value, error) {
	n := len(s)
	prefixOf := func(word string) bool { return n <= len(word) && strings.EqualFold(s, word[:n]) }
	switch {
	case n == 0:
		return value{}, errorf("malformed variable %q value: %q", name, s)
	case strings.EqualFold(s, "null"):
		return value{k: kNull}, nil
	case prefixOf("true") || prefixOf("yes") || strings.EqualFold(s, "on"):
		return value{k: kBool, b: true}, nil
	case prefixOf("false") || prefixOf("no") || strings.EqualFold(s, "off") || strings.EqualFold(s, "of"):
		return value{k: kBool, b: false}, nil
	case isAnInt(s):
		i, err := strconv.ParseInt(strings.TrimLeft(strings.TrimLeft(s, " \t\n\r\f\v"), "+"), 10, 64)
		if err != nil {
			return value{}, errorf("value %q is out of range for type bigint", s)
		}
		return value{k: kInt, i: i}, nil
	}
	d, err := strconv.ParseFloat(strings.TrimLeft(s, " \t\n\r\f\v"), 64)
	if err != nil && !strings.Contains(err.Error(), "range") || strings.Contains(s, "_") {
		return value{}, errorf("malformed variable %q value: %q", name, s)
	}
	return value{k: kDouble, d: d}, nil
}

// isAnInt matches `^\s*[-+]?[0-9]+$`.
func isAnInt(s string) bool {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// eval evaluates n for the client running cmd.
// maxFuncArgs is pgbench's limit on a function's arguments, checked as
// pgbench checks it: when the function is evaluated.
const maxFuncArgs = 16

func (c *Client) eval(cs *clientScript, n *node) (value, error) {
	switch n.op {
	case nConst:
		return n.val, nil
	case nVar:
		v := &c.vars[cs.slots[n.slot]]
		if !v.set {
			return value{}, errorf("undefined variable %q", n.name)
		}
		if v.val.k == kNone {
			pv, err := parseValue(v.name, string(v.str))
			if err != nil {
				return value{}, err
			}
			v.val = pv
		}
		return v.val, nil
	}
	switch n.f {
	case fAnd, fOr:
		a, err := c.eval(cs, n.args[0])
		if err != nil || a.k == kNull {
			return value{k: kNull}, err
		}
		ba, err := a.toBool()
		if err != nil {
			return value{}, err
		}
		if ba == (n.f == fOr) {
			return value{k: kBool, b: ba}, nil
		}
		b, err := c.eval(cs, n.args[1])
		if err != nil || b.k == kNull {
			return value{k: kNull}, err
		}
		bb, err := b.toBool()
		return value{k: kBool, b: bb}, err
	case fCase:
		args := n.args
		for len(args) > 1 {
			cond, err := c.eval(cs, args[0])
			if err != nil {
				return value{}, err
			}
			if cond.truth() {
				return c.eval(cs, args[1])
			}
			args = args[2:]
		}
		return c.eval(cs, args[0])
	}
	if len(n.args) > maxFuncArgs {
		return value{}, errorf("too many function arguments, maximum is %d", maxFuncArgs)
	}
	var buf [4]value
	vals := buf[:0]
	hasNull := false
	for _, a := range n.args {
		v, err := c.eval(cs, a)
		if err != nil {
			return value{}, err
		}
		hasNull = hasNull || v.k == kNull
		vals = append(vals, v)
	}
	if hasNull && n.f != fIs && n.f != fDebug {
		return value{k: kNull}, nil
	}
	return c.apply(cs, n.f, vals)
}

// intOnly says whether n is built of integer constants, variables, +, -,
// * and random() alone (the builtins' \set lines), which evalInt
// evaluates.
func intOnly(n *node) bool {
	switch n.op {
	case nConst:
		return n.val.k == kInt
	case nVar:
		return true
	}
	switch n.f {
	case fAdd, fSub, fMul, fRandom:
		return len(n.args) == 2 && intOnly(n.args[0]) && intOnly(n.args[1])
	}
	return false
}

// evalInt evaluates an intOnly n where every variable holds an integer
// and nothing fails, as eval would; otherwise it returns false, having
// perhaps drawn from the client's random state, and the caller evaluates
// n with eval from the state it saved. It spares eval's values, errors and
// argument lists on the builtins' scripts' one command a statement.
func (c *Client) evalInt(cs *clientScript, n *node) (int64, bool) {
	switch n.op {
	case nConst:
		return n.val.i, true
	case nVar:
		v := &c.vars[cs.slots[n.slot]]
		return v.val.i, v.set && v.val.k == kInt
	}
	l, ok := c.evalInt(cs, n.args[0])
	if !ok {
		return 0, false
	}
	r, ok := c.evalInt(cs, n.args[1])
	if !ok {
		return 0, false
	}
	switch n.f {
	case fAdd:
		return addInt(l, r)
	case fSub:
		return subInt(l, r)
	case fMul:
		return mulInt(l, r)
	}
	// fRandom
	return c.drawInt(l, r)
}

// drawInt draws from [l, r] where the full evaluator would: not when the
// range is empty or its width overflows (that path reports the error).
func (c *Client) drawInt(l, r int64) (int64, bool) {
	if d := r - l; l > r || d < 0 || d == math.MaxInt64 {
		return 0, false
	}
	return c.rnd.Int64Range(l, r), true
}

// intTerm is a bound of an intDraw: a constant (a negative one too), an
// integer variable, or their product.
type intTerm struct {
	k    int64 // the constant; 1 for a variable alone
	slot int   // the variable's script slot; -1 for a constant
	// vmin and vmax bound the variable's values whose product with k
	// does not overflow, worked out once: no division when it runs.
	vmin, vmax int64
}

// product is the term of constant k times the variable in slot.
func product(k int64, slot int) intTerm {
	t := intTerm{k: k, slot: slot, vmin: math.MinInt64, vmax: math.MaxInt64}
	switch {
	case k == -1:
		t.vmin = math.MinInt64 + 1
	case k < 0:
		t.vmin, t.vmax = math.MaxInt64/k, math.MinInt64/k
	case k > 0:
		t.vmin, t.vmax = math.MinInt64/k, math.MaxInt64/k
	}
	return t
}

// intDraw is a \set of random(lo, hi) whose bounds are intTerms, as every
// \set of the builtin scripts is (random(1, 100000 * :scale)).
type intDraw struct{ lo, hi intTerm }

// drawOf returns n as an intDraw, or nil when it has another form.
func drawOf(n *node) *intDraw {
	if n.op != nCall || n.f != fRandom || len(n.args) != 2 {
		return nil
	}
	lo, ok := termOf(n.args[0])
	if !ok {
		return nil
	}
	hi, ok := termOf(n.args[1])
	if !ok {
		return nil
	}
	return &intDraw{lo, hi}
}

func termOf(n *node) (intTerm, bool) {
	isInt := func(n *node) bool { return n.op == nConst && n.val.k == kInt }
	switch {
	case isInt(n):
		return intTerm{k: n.val.i, slot: -1}, true
	case n.op == nVar:
		return product(1, n.slot), true
	case n.op == nCall && n.f == fSub && len(n.args) == 2 && isInt(n.args[0]) && n.args[0].val.i == 0 && isInt(n.args[1]):
		// a negative constant: unary minus is 0 - x
		if k, ok := subInt(0, n.args[1].val.i); ok {
			return intTerm{k: k, slot: -1}, true
		}
	case n.op == nCall && n.f == fMul && len(n.args) == 2:
		a, b := n.args[0], n.args[1]
		if isInt(a) && b.op == nVar {
			return product(a.val.i, b.slot), true
		}
		if a.op == nVar && isInt(b) {
			return product(b.val.i, a.slot), true
		}
	}
	return intTerm{}, false
}

// evalDraw evaluates d as evalInt evaluates its expression, with neither
// its calls nor its walk of the tree; it draws only when it succeeds.
func (c *Client) evalDraw(cs *clientScript, d *intDraw) (int64, bool) {
	l, ok := c.term(cs, d.lo)
	if !ok {
		return 0, false
	}
	r, ok := c.term(cs, d.hi)
	if !ok {
		return 0, false
	}
	return c.drawInt(l, r)
}

func (c *Client) term(cs *clientScript, t intTerm) (int64, bool) {
	if t.slot < 0 {
		return t.k, true
	}
	v := &c.vars[cs.slots[t.slot]]
	i := v.val.i
	return t.k * i, v.set && v.val.k == kInt && i >= t.vmin && i <= t.vmax
}

// apply runs a function or operator on evaluated, non-null arguments.
func (c *Client) apply(cs *clientScript, f fn, a []value) (value, error) {
	switch f {
	case fAdd, fSub, fMul, fDiv, fMod, fEq, fNe, fLe, fLt:
		if (a[0].k == kDouble || a[1].k == kDouble) && f != fMod {
			l, err := a[0].toDouble()
			if err != nil {
				return value{}, err
			}
			r, err := a[1].toDouble()
			if err != nil {
				return value{}, err
			}
			return doubleOp(f, l, r), nil
		}
		l, err := a[0].toInt()
		if err != nil {
			return value{}, err
		}
		r, err := a[1].toInt()
		if err != nil {
			return value{}, err
		}
		return intOp(f, l, r)
	case fBitAnd, fBitOr, fBitXor, fLShift, fRShift:
		l, err := a[0].toInt()
		if err != nil {
			return value{}, err
		}
		r, err := a[1].toInt()
		if err != nil {
			return value{}, err
		}
		var res int64
		switch f {
		case fBitAnd:
			res = l & r
		case fBitOr:
			res = l | r
		case fBitXor:
			res = l ^ r
		case fLShift:
			res = l << (uint64(r) & 63) // the count wraps as on x86
		default:
			res = l >> (uint64(r) & 63)
		}
		return value{k: kInt, i: res}, nil
	case fNot:
		b, err := a[0].toBool()
		return value{k: kBool, b: !b}, err
	case fPi:
		return value{k: kDouble, d: math.Pi}, nil
	case fAbs:
		if a[0].k == kInt {
			i := a[0].i
			if i < 0 {
				i = -i
			}
			return value{k: kInt, i: i}, nil
		}
		return value{k: kDouble, d: math.Abs(a[0].d)}, nil
	case fDebug:
		c.debug(cs, a[0])
		return a[0], nil
	case fDouble, fSqrt, fLn, fExp:
		d, err := a[0].toDouble()
		switch f {
		case fSqrt:
			d = math.Sqrt(d)
		case fLn:
			d = math.Log(d)
		case fExp:
			d = math.Exp(d)
		}
		return value{k: kDouble, d: d}, err
	case fInt:
		i, err := a[0].toInt()
		return value{k: kInt, i: i}, err
	case fLeast, fGreatest:
		return extremum(f, a)
	case fRandom, fRandomExponential, fRandomGaussian, fRandomZipfian:
		return c.random(f, a)
	case fPow:
		l, err := a[0].toDouble()
		if err != nil {
			return value{}, err
		}
		r, err := a[1].toDouble()
		return value{k: kDouble, d: math.Pow(l, r)}, err
	case fIs:
		return value{k: kBool, b: a[0].k == a[1].k && a[0].b == a[1].b && (a[0].k == kNull || a[0].k == kBool)}, nil
	case fHashFNV1a, fHashMurmur2:
		v, err := a[0].toInt()
		if err != nil {
			return value{}, err
		}
		seed, err := a[1].toInt()
		if err != nil {
			return value{}, err
		}
		if f == fHashFNV1a {
			return value{k: kInt, i: hashFNV1a(v, uint64(seed))}, nil
		}
		return value{k: kInt, i: hashMurmur2(v, uint64(seed))}, nil
	case fPermute:
		var iv [3]int64
		for i := range iv {
			x, err := a[i].toInt()
			if err != nil {
				return value{}, err
			}
			iv[i] = x
		}
		if iv[1] <= 0 {
			return value{}, errorf("permute size parameter must be greater than zero")
		}
		return value{k: kInt, i: permute(iv[0], iv[1], iv[2])}, nil
	}
	return value{}, errorf("unknown function %d", f)
}

func doubleOp(f fn, l, r float64) value {
	switch f {
	case fAdd:
		return value{k: kDouble, d: l + r}
	case fSub:
		return value{k: kDouble, d: l - r}
	case fMul:
		return value{k: kDouble, d: l * r}
	case fDiv:
		return value{k: kDouble, d: l / r}
	case fEq:
		return value{k: kBool, b: l == r}
	case fNe:
		return value{k: kBool, b: l != r}
	case fLe:
		return value{k: kBool, b: l <= r}
	}
	return value{k: kBool, b: l < r}
}

// addInt, subInt and mulInt say false where bigint arithmetic overflows.
func addInt(l, r int64) (int64, bool) {
	s := l + r
	return s, !((l > 0 && r > 0 && s < 0) || (l < 0 && r < 0 && s >= 0))
}

func subInt(l, r int64) (int64, bool) {
	s := l - r
	return s, !((l >= 0 && r < 0 && s < 0) || (l < 0 && r > 0 && s >= 0))
}

func mulInt(l, r int64) (int64, bool) {
	p := l * r
	return p, !(l != 0 && (p/l != r || (l == -1 && r == math.MinInt64) || (r == -1 && l == math.MinInt64)))
}

func intOp(f fn, l, r int64) (value, error) {
	switch f {
	case fAdd:
		s, ok := addInt(l, r)
		if !ok {
			return value{}, errorf("bigint add out of range")
		}
		return value{k: kInt, i: s}, nil
	case fSub:
		s, ok := subInt(l, r)
		if !ok {
			return value{}, errorf("bigint sub out of range")
		}
		return value{k: kInt, i: s}, nil
	case fMul:
		p, ok := mulInt(l, r)
		if !ok {
			return value{}, errorf("bigint mul out of range")
		}
		return value{k: kInt, i: p}, nil
	case fEq:
		return value{k: kBool, b: l == r}, nil
	case fNe:
		return value{k: kBool, b: l != r}, nil
	case fLe:
		return value{k: kBool, b: l <= r}, nil
	case fLt:
		return value{k: kBool, b: l < r}, nil
	}
	// fDiv, fMod
	if r == 0 {
		return value{}, errorf("division by zero")
	}
	if r == -1 {
		if f == fMod {
			return value{k: kInt}, nil
		}
		if l == math.MinInt64 {
			return value{}, errorf("bigint div out of range")
		}
		return value{k: kInt, i: -l}, nil
	}
	if f == fDiv {
		return value{k: kInt, i: l / r}, nil
	}
	return value{k: kInt, i: l % r}, nil
}

// extremum is least() or greatest() (f): over doubles when any argument
// is one, else over integers.
func extremum(f fn, a []value) (value, error) {
	for _, v := range a {
		if v.k == kDouble {
			d, err := pick(f, a, value.toDouble)
			if err != nil {
				return value{}, err
			}
			return value{k: kDouble, d: d}, nil
		}
	}
	i, err := pick(f, a, value.toInt)
	if err != nil {
		return value{}, err
	}
	return value{k: kInt, i: i}, nil
}

// pick is the least or the greatest (f) of a, each value as conv reads it.
func pick[T int64 | float64](f fn, a []value, conv func(value) (T, error)) (T, error) {
	best, err := conv(a[0])
	if err != nil {
		return 0, err
	}
	for _, v := range a[1:] {
		x, err := conv(v)
		if err != nil {
			return 0, err
		}
		if (f == fLeast && x < best) || (f == fGreatest && x > best) {
			best = x
		}
	}
	return best, nil
}

// Parameter bounds of the random functions.
const (
	minGaussianParam = 2.0
	minZipfianParam  = 1.001
	maxZipfianParam  = 1000.0
)

func (c *Client) random(f fn, a []value) (value, error) {
	lo, err := a[0].toInt()
	if err != nil {
		return value{}, err
	}
	hi, err := a[1].toInt()
	if err != nil {
		return value{}, err
	}
	if lo > hi {
		return value{}, errorf("empty range given to random")
	}
	if d := hi - lo; d < 0 || d == math.MaxInt64 { // hi-lo+1 overflows
		return value{}, errorf("random range is too large")
	}
	if f == fRandom {
		return value{k: kInt, i: c.rnd.Int64Range(lo, hi)}, nil
	}
	p, err := a[2].toDouble()
	if err != nil {
		return value{}, err
	}
	switch f {
	case fRandomGaussian:
		if p < minGaussianParam {
			return value{}, errorf("gaussian parameter must be at least %f (not %f)", minGaussianParam, p)
		}
		return value{k: kInt, i: c.rnd.gaussian(lo, hi, p)}, nil
	case fRandomZipfian:
		if p < minZipfianParam || p > maxZipfianParam {
			return value{}, errorf("zipfian parameter must be in range [%.3f, %.0f] (not %f)", minZipfianParam, maxZipfianParam, p)
		}
		return value{k: kInt, i: c.rnd.zipfian(lo, hi, p)}, nil
	}
	if p <= 0 {
		return value{}, errorf("exponential parameter must be greater than zero (not %f)", p)
	}
	return value{k: kInt, i: c.rnd.exponential(lo, hi, p)}, nil
}

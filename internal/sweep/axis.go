// Package sweep turns options given as lists or ranges into the cells of a
// sweep (the cross product of the axes, with zipped axes moving together)
// and decides how many times each cell runs.
package sweep

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxValues caps what one range may expand to, so a typo (1:1000000:1)
// is caught before it starts a week of runs.
const maxValues = 1000

// IsMulti reports whether s asks for several values: a list (it has a
// comma) or a range (FROM:TO:STEP whose parts are all numbers, sizes or
// durations). A URL such as host:port is neither.
func IsMulti(s string) bool {
	if strings.Contains(s, ",") {
		return true
	}
	// A range with a mistake in it counts too, so that Values, not the
	// option's own parser, says what is wrong with it.
	parts := strings.Split(s, ":")
	return len(parts) == 3 && looksLikeRange(parts)
}

// Values expands a list ("1,8,32,128", "seqwr,rndrd") or a range
// ("FROM:TO:STEP" of numbers, sizes with K/M/G/T suffixes like
// 256M:6G:256M, or durations like 10s:60s:10s; TO is included when the
// steps land on it). A single value is returned as it is.
func Values(s string) ([]string, error) {
	if strings.Contains(s, ",") {
		return list(s)
	}
	parts := strings.Split(s, ":")
	// Exactly what IsMulti calls a range: "Inf:Inf:1" parses as numbers
	// but is a single value.
	if len(parts) == 3 && looksLikeRange(parts) {
		k, err := rangeKindOf(parts)
		if err != nil {
			return nil, err
		}
		return expand(s, k, parts)
	}
	return []string{s}, nil
}

func list(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if seen[v] {
			return nil, fmt.Errorf("list %q names %q twice", s, v)
		}
		if parts := strings.Split(v, ":"); len(parts) == 3 && looksLikeRange(parts) {
			return nil, fmt.Errorf("list %q holds the range %q: give either a list or one range (FROM:TO:STEP)", s, v)
		}
		seen[v] = true
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("list %q has no values (give them separated by commas, e.g. 1,8,32)", s)
	}
	if len(out) != len(strings.Split(s, ",")) {
		return nil, fmt.Errorf("list %q has an empty value", s)
	}
	return out, nil
}

type rangeKind int

const (
	kindNumber rangeKind = iota
	kindSize
	kindDuration
)

// looksLikeRange tells a range with a mistake in it (1:10:x) from a value
// that merely has two colons: every part starts with a digit or a sign.
func looksLikeRange(parts []string) bool {
	for _, p := range parts {
		if p == "" || !strings.ContainsAny(p[:1], "0123456789-+.") {
			return false
		}
	}
	return true
}

func rangeKindOf(parts []string) (rangeKind, error) {
	for _, k := range []rangeKind{kindNumber, kindSize, kindDuration} {
		ok := true
		for _, p := range parts {
			if _, err := parse(k, p); err != nil {
				ok = false
				break
			}
		}
		if ok {
			return k, nil
		}
	}
	return 0, fmt.Errorf("range %q: FROM, TO and STEP must all be numbers, all sizes (256M, 1G) or all durations (10s, 1m)", strings.Join(parts, ":"))
}

var sizeUnits = []struct {
	suffix string
	mult   float64
}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}}

func parse(k rangeKind, s string) (float64, error) {
	switch k {
	case kindNumber:
		return strconv.ParseFloat(s, 64)
	case kindSize:
		u := strings.ToUpper(s)
		for _, su := range sizeUnits {
			if n, ok := strings.CutSuffix(u, su.suffix); ok {
				f, err := strconv.ParseFloat(n, 64)
				return f * su.mult, err
			}
		}
		if s == "0" { // nothing is nothing in any unit
			return 0, nil
		}
		return 0, errors.New("no size suffix")
	default:
		d, err := time.ParseDuration(s)
		return float64(d), err
	}
}

func format(k rangeKind, f float64, integers bool) string {
	switch k {
	case kindSize:
		for _, su := range sizeUnits {
			if f >= su.mult && math.Mod(f, su.mult) == 0 {
				return strconv.FormatFloat(f/su.mult, 'f', -1, 64) + su.suffix
			}
		}
		return strconv.FormatFloat(f, 'f', 0, 64)
	case kindDuration:
		return time.Duration(f).String()
	}
	if integers {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strconv.FormatFloat(f, 'g', 12, 64)
}

func expand(s string, k rangeKind, parts []string) ([]string, error) {
	var v [3]float64
	for i, p := range parts {
		v[i], _ = parse(k, p)
	}
	from, to, step := v[0], v[1], v[2]
	for _, x := range v {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("range %q: FROM, TO and STEP must be finite numbers", s)
		}
	}
	if step <= 0 {
		return nil, fmt.Errorf("range %q: STEP must be positive", s)
	}
	if from > to {
		return nil, fmt.Errorf("range %q: FROM is greater than TO (write FROM:TO:STEP)", s)
	}
	n := math.Floor((to-from)/step*(1+1e-12)) + 1
	if n > maxValues {
		return nil, fmt.Errorf("range %q has %.0f values, more than %d; use a larger STEP", s, n, maxValues)
	}
	integers := from == math.Trunc(from) && step == math.Trunc(step)
	out := make([]string, 0, int(n))
	for i := range int(n) {
		// from + i*step, not repeated addition, so no error accumulates.
		out = append(out, format(k, from+float64(i)*step, integers))
	}
	return out, nil
}

// Numeric returns the values of an axis as numbers (sizes in bytes,
// durations in seconds), if they all are.
func Numeric(values []string) ([]float64, bool) {
	for _, k := range []rangeKind{kindNumber, kindSize, kindDuration} {
		out := make([]float64, len(values))
		ok := true
		for i, v := range values {
			f, err := parse(k, v)
			if err != nil {
				ok = false
				break
			}
			if k == kindDuration {
				f /= float64(time.Second)
			}
			out[i] = f
		}
		if ok {
			return out, true
		}
	}
	return nil, false
}

package randgen

import (
	"fmt"
	"math"
)

// Generator draws numbers in one fixed range [lo, hi] from one distribution.
// NewGenerator computes the distribution's constants once (for zipfian they
// depend on the range size), and a Generator never changes afterwards, so
// one can be shared by all workers, each passing its own [Source].
type Generator struct {
	kind   Kind
	lo     int64
	maxOff uint64  // hi - lo
	maxF   float64 // float64(maxOff)
	span   float64 // hi - lo + 1, as float

	iter  int     // gaussian, special
	scale float64 // gaussian: span/iter; special: (hi-lo)/iter

	// special
	coldFrac float64 // probability of the bell-curve branch
	hotWidth float64 // width of the hot region plus one
	hotStart float64 // offset of the hot region from lo

	// pareto
	power float64

	// zipfian
	exp float64
	hX1 float64 // H(1.5) - 1, the lower end of the sampled H range
	hN  float64 // H(n + 0.5), the upper end
	s   float64 // acceptance shortcut threshold
}

// NewGenerator validates d and prepares it for the range [lo, hi].
func NewGenerator(d Dist, lo, hi int64) (*Generator, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if lo > hi {
		return nil, fmt.Errorf("randgen: empty range [%d, %d]", lo, hi)
	}
	g := d.generator(lo, hi)
	return &g, nil
}

// generator builds a Generator without validation, computing only what
// d.Kind needs, so that Dist.Int can build one on the stack per call.
func (d Dist) generator(lo, hi int64) Generator {
	maxOff := uint64(hi - lo)
	g := Generator{
		kind:   d.Kind,
		lo:     lo,
		maxOff: maxOff,
		maxF:   float64(maxOff),
		span:   float64(maxOff) + 1,
		iter:   d.SpecIter,
	}
	switch d.Kind {
	case KindGaussian:
		// sysbench: lo + floor(sum of iter draws of u*(hi-lo+1) / iter).
		g.scale = g.span / float64(d.SpecIter)
	case KindSpecial:
		// sysbench 1.0 works with t = hi-lo here, not hi-lo+1.
		t := g.maxF
		g.scale = t / float64(d.SpecIter)
		g.coldFrac = float64(100-d.SpecRes) / 100
		g.hotWidth = t*float64(d.SpecPct)/100 + 1
		g.hotStart = t/2 - t*float64(d.SpecPct)/200
	case KindPareto:
		// With u uniform, P(u^power < h) = 1-h: h = 0.2 is the 80/20
		// rule (80% of draws in the lowest 20% of the range).
		g.power = math.Log(d.ParetoH) / math.Log(1-d.ParetoH)
	case KindZipfian:
		e := d.ZipfianExp
		g.exp = e
		g.hX1 = zipfH(1.5, e) - 1
		g.hN = zipfH(g.span+0.5, e)
		g.s = 2 - zipfHInv(zipfH(2.5, e)-zipfHat(2, e), e)
	}
	return g
}

// Range returns the bounds g draws from.
func (g *Generator) Range() (lo, hi int64) {
	return g.lo, g.at(g.maxOff)
}

// Int returns the next number in [lo, hi], consuming draws from src.
func (g *Generator) Int(src *Source) int64 {
	switch g.kind {
	case KindGaussian:
		return g.at(g.clamp(src.sum(g.iter) * g.scale))
	case KindSpecial:
		return g.at(g.special(src))
	case KindPareto:
		// exp(power*ln u) is u^power without math.Pow's special-case handling,
		// which costs more than the draw; u = 0 still gives 0.
		return g.at(g.clamp(g.span * math.Exp(g.power*math.Log(src.Float64()))))
	case KindZipfian:
		return g.at(g.zipfian(src))
	default:
		return g.at(src.below(g.maxOff))
	}
}

// special follows sysbench 1.0's sb_rand_special. One draw r picks the
// branch: with probability (100-res)% the result is the bell curve over
// [lo, hi) (the mean of iter uniforms), otherwise it lands in the hot region
// of pct% of the range centred in the middle.
//
// sysbench places the hot value with the same r, which is known to be in
// [coldFrac, 1) on that branch, so hot values only cover the upper res% of
// the nominal hot region (the upper 3/4 with the defaults). That is
// reproduced on purpose: the effective hot set, and so the cache behaviour
// a benchmark sees, matches sysbench's.
func (g *Generator) special(src *Source) uint64 {
	r := src.Float64()
	if r < g.coldFrac {
		return g.clamp(src.sum(g.iter) * g.scale)
	}
	return g.clamp(r*g.hotWidth + g.hotStart)
}

// zipfian is rejection-inversion sampling (Hörmann and Derflinger, 1996)
// of P(k) proportional to k^-exp on k = 1..n, as in sysbench's
// sb_rand_zipfian (after Apache Commons RNG). It needs no O(n) table, and
// nearly every candidate is accepted.
func (g *Generator) zipfian(src *Source) uint64 {
	e := g.exp
	for {
		// u is uniform on (hX1, hN]; inverting H maps it onto the hat
		// function's density over [0.5, n+0.5].
		u := g.hN + src.Float64()*(g.hX1-g.hN)
		x := zipfHInv(u, e)
		// Rounding can push k just outside [1, n].
		k := min(max(math.Floor(x+0.5), 1), g.span)
		// The first test is a cheap sufficient condition for the
		// second, which accepts k with probability k^-e over the
		// hat's mass on [k-0.5, k+0.5].
		if k-x <= g.s || u >= zipfH(k+0.5, e)-zipfHat(k, e) {
			return g.clamp(k - 1)
		}
	}
}

// at turns an offset into a value; the wrap-around of signed addition makes
// it correct even for ranges wider than MaxInt64.
func (g *Generator) at(off uint64) int64 {
	return g.lo + int64(off)
}

// clamp truncates a non-negative offset computed in floating point to an
// integer in [0, maxOff]. sysbench truncates too; the bounds guard against
// rounding for ranges wider than 2^53 and against NaN.
func (g *Generator) clamp(f float64) uint64 {
	if !(f > 0) {
		return 0
	}
	if f >= g.maxF {
		return g.maxOff
	}
	return uint64(f)
}

// sum returns the sum of n draws of Float64.
func (s *Source) sum(n int) float64 {
	var sum float64
	for range n {
		sum += s.Float64()
	}
	return sum
}

// zipfH is H(x) = (x^(1-e) - 1) / (1-e), an antiderivative of x^-e written
// so that it stays finite and continuous at e = 1, where it becomes ln x.
func zipfH(x, e float64) float64 {
	lx := math.Log(x)
	return expm1Over((1-e)*lx) * lx
}

// zipfHat is h(x) = x^-e, the unnormalised Zipf weight.
func zipfHat(x, e float64) float64 {
	return math.Exp(-e * math.Log(x))
}

// zipfHInv is the inverse of zipfH.
func zipfHInv(y, e float64) float64 {
	// y*(1-e) >= -1 in exact arithmetic; rounding can step past it, and
	// log1p(-1-ε) is NaN.
	t := max(y*(1-e), -1)
	return math.Exp(log1pOver(t) * y)
}

// expm1Over returns (e^x - 1)/x, switching to its Taylor series near zero,
// where the quotient loses precision (and at zero, where it is 0/0).
func expm1Over(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x/2*(1+x/3*(1+x/4))
}

// log1pOver returns ln(1+x)/x, switching to its Taylor series near zero.
func log1pOver(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(1.0/2-x*(1.0/3-x/4))
}

// Package stats summarises repeated measurements and tests whether two sets
// of them differ: what a sweep prints per cell and what compare decides on.
package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Level is the confidence level of every interval and test here.
const Level = 0.95

// Summary describes a sample. Quantities a sample is too small for are NaN:
// the spread of one value, the interval of one value.
type Summary struct {
	N      int
	Mean   float64
	Median float64
	StdDev float64 // sample standard deviation (n-1)
	CV     float64 // StdDev/Mean, as a fraction
	// HalfWidth is the half-width of the 95% confidence interval of the
	// mean (Student's t with N-1 degrees of freedom); the interval is
	// Mean ± HalfWidth.
	HalfWidth float64
	// Outliers are the indexes of the values the MAD rule flags.
	Outliers []int
}

// Low and High are the ends of the confidence interval of the mean.
func (s Summary) Low() float64  { return s.Mean - s.HalfWidth }
func (s Summary) High() float64 { return s.Mean + s.HalfWidth }

// Describe summarises xs.
func Describe(xs []float64) Summary {
	s := Summary{N: len(xs), Mean: math.NaN(), Median: math.NaN(), StdDev: math.NaN(), CV: math.NaN(), HalfWidth: math.NaN()}
	if s.N == 0 {
		return s
	}
	s.Median = Median(xs)
	s.Mean = stat.Mean(xs, nil)
	if s.N < 2 {
		return s
	}
	s.StdDev = stat.StdDev(xs, nil)
	if s.Mean != 0 {
		s.CV = s.StdDev / math.Abs(s.Mean)
	}
	s.HalfWidth = TQuantile(1-(1-Level)/2, float64(s.N-1)) * s.StdDev / math.Sqrt(float64(s.N))
	s.Outliers = Outliers(xs)
	return s
}

// Median is the middle of xs (the mean of the two middle values of an
// even count); NaN for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// madZ is the modified z-score beyond which a value is an outlier, as
// Iglewicz and Hoaglin recommend (1993).
const madZ = 3.5

// Outliers returns the indexes of the values whose modified z-score,
// 0.6745·|x - median| / MAD, exceeds 3.5. The median absolute deviation
// stays meaningful for the 3 to 10 repeats a cell has, where Tukey's
// quartile fences rest on one or two values. With fewer than 5 values
// (of 3, the MAD is one distance and flags too easily), or when more than
// half are equal (MAD 0), nothing is flagged.
func Outliers(xs []float64) []int {
	if len(xs) < 5 {
		return nil
	}
	med := Median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - med)
	}
	mad := Median(dev)
	if mad == 0 {
		return nil
	}
	var out []int
	for i, d := range dev {
		if 0.6745*d/mad > madZ {
			out = append(out, i)
		}
	}
	return out
}

// TQuantile is the p quantile of Student's t distribution with df degrees
// of freedom (df need not be an integer: Welch's test makes fractional ones).
func TQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// Test is the outcome of a two-sample test.
type Test struct {
	T  float64 // the statistic: positive when the second sample's mean is larger
	DF float64 // Welch-Satterthwaite degrees of freedom
	P  float64 // two-sided p-value
}

// Significant reports whether the difference is significant at Level.
func (t Test) Significant() bool { return t.P < 1-Level }

// ErrTooFew is returned when a sample is too small to test.
var ErrTooFew = errors.New("too few values")

// Welch is Welch's unequal-variance t-test of mean(b) - mean(a). Repeated
// runs' means are averages of many events, close to normal; with the 3 to
// 10 repeats people run, the Mann-Whitney U test cannot reach significance
// at all below 4 values a side (its smallest two-sided p with 3 and 3 is
// 0.1), so the t-test is the one that can answer.
func Welch(a, b []float64) (Test, error) {
	if len(a) < 2 || len(b) < 2 {
		return Test{}, fmt.Errorf("welch test: %w: need 2 a side, have %d and %d", ErrTooFew, len(a), len(b))
	}
	ma, va := stat.MeanVariance(a, nil)
	mb, vb := stat.MeanVariance(b, nil)
	na, nb := float64(len(a)), float64(len(b))
	sa, sb := va/na, vb/nb
	if sa+sb == 0 {
		// No spread at all: the means are either equal or certainly not.
		if ma == mb {
			return Test{T: 0, DF: na + nb - 2, P: 1}, nil
		}
		return Test{T: math.Copysign(math.Inf(1), mb-ma), DF: na + nb - 2, P: 0}, nil
	}
	t := (mb - ma) / math.Sqrt(sa+sb)
	df := (sa + sb) * (sa + sb) / (sa*sa/(na-1) + sb*sb/(nb-1))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	return Test{T: t, DF: df, P: 2 * dist.CDF(-math.Abs(t))}, nil
}

// Ratio is mean(b)/mean(a) with its 95% confidence interval.
type Ratio struct {
	Value, Low, High float64
}

// ErrUnbounded is returned when the ratio's interval has no bounds: the
// first mean is not clearly away from zero, so the ratio can be anything.
var ErrUnbounded = errors.New("the first mean is not clearly away from zero: the ratio's interval is unbounded")

// RatioOf estimates mean(b)/mean(a) and its confidence interval by
// Fieller's method: the ratios ρ for which Welch's statistic of
// mean(b) - ρ·mean(a) is within the t quantile, with Welch's degrees of
// freedom at ρ = 1. The interval holds 1 exactly when Welch's test of
// the two samples is not significant, so a verdict from the test never
// contradicts the interval; and it widens rightly when the first mean is
// uncertain, where the delta method's shrinks (to [0, 0] for a ratio of
// 0). When the first mean is not clearly away from zero the interval is
// unbounded and ErrUnbounded is returned with the ratio.
func RatioOf(a, b []float64) (Ratio, error) {
	if len(a) < 2 || len(b) < 2 {
		return Ratio{}, fmt.Errorf("ratio: %w: need 2 a side, have %d and %d", ErrTooFew, len(a), len(b))
	}
	ma, va := stat.MeanVariance(a, nil)
	mb, vb := stat.MeanVariance(b, nil)
	if ma == 0 {
		return Ratio{}, errors.New("ratio: the first mean is zero")
	}
	r := mb / ma
	w, err := Welch(a, b)
	if err != nil {
		return Ratio{}, err
	}
	na, nb := float64(len(a)), float64(len(b))
	sa, sb := va/na, vb/nb
	if sa+sb == 0 {
		return Ratio{Value: r, Low: r, High: r}, nil
	}
	t := TQuantile(1-(1-Level)/2, w.DF)
	// (mb - ρ·ma)² ≤ t²·(sb + ρ²·sa), a quadratic in ρ: qa·ρ² + qb·ρ + qc ≤ 0.
	qa := ma*ma - t*t*sa
	if qa <= 0 {
		return Ratio{Value: r, Low: math.Inf(-1), High: math.Inf(1)}, fmt.Errorf("ratio: %w", ErrUnbounded)
	}
	// The discriminant over 4 is t²·(sb·qa + mb²·sa), not negative when qa > 0.
	h := math.Sqrt(t*t*(sb*qa+mb*mb*sa)) / qa
	mid := ma * mb / qa
	return Ratio{Value: r, Low: mid - h, High: mid + h}, nil
}

// BatchMeans splits a time series into k contiguous batches of equal size
// and returns their means. Neighbouring intervals of a run are correlated
// (a checkpoint, a cache warming up), which makes them poor independent
// samples; means of long batches are much less correlated. When len(xs) is
// not a multiple of k, the first values are dropped (they are the ones
// nearest the warm-up).
func BatchMeans(xs []float64, k int) ([]float64, error) {
	if k < 2 || len(xs) < 2*k {
		return nil, fmt.Errorf("batch means: %w: %d values cannot make %d batches of 2 or more", ErrTooFew, len(xs), k)
	}
	size := len(xs) / k
	xs = xs[len(xs)-size*k:]
	out := make([]float64, k)
	for i := range k {
		out[i] = stat.Mean(xs[i*size:(i+1)*size], nil)
	}
	return out, nil
}

// MinBatches is the fewest batches a side worth a test: with 2, Welch's
// test can have one degree of freedom, where t(0.975) is 12.7 and even a
// run of 613 tps against one of 0 is "not significant".
const MinBatches = 4

// Batches is how many batches BatchMeans should make of n intervals: 10
// when there are enough (batches of 2 or more), fewer for a short run, and
// 0 when n < 2·MinBatches, too few to test.
func Batches(n int) int {
	switch {
	case n >= 20:
		return 10
	case n >= 2*MinBatches:
		return n / 2
	}
	return 0
}

package htmlreport

import (
	"math"
	"slices"
)

// box is a box plot's five numbers.
type box struct{ Min, Q1, Median, Q3, Max float64 }

// quartiles returns the five numbers of xs, with the quartiles linearly
// interpolated between order statistics (the method spreadsheets and R's
// default use), so a box of a few iterations is still well defined.
func quartiles(xs []float64) (box, bool) {
	if len(xs) == 0 {
		return box{}, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return box{Min: s[0], Q1: quantile(s, 0.25), Median: quantile(s, 0.5), Q3: quantile(s, 0.75), Max: s[len(s)-1]}, true
}

// quantile of sorted s at q in [0, 1].
func quantile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

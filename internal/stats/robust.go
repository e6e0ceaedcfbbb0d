package stats

import "math"

// RobustSD is the median absolute deviation of xs around center, scaled
// to a normal distribution's standard deviation: a few values far out
// (a dip, a spike) barely move it.
func RobustSD(xs []float64, center float64) float64 {
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - center)
	}
	return 1.4826 * Median(dev)
}

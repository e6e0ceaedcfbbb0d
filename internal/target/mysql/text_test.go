package mysql

import (
	"math"
	"strconv"
	"testing"
)

// decimalLen counts what strconv writes, sign included, at every edge of
// a digit count.
func TestDecimalLen(t *testing.T) {
	xs := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for p := int64(10); p <= 1e18; p *= 10 {
		xs = append(xs, p-1, p, -p+1, -p)
	}
	for _, x := range xs {
		if got, want := decimalLen(x), len(strconv.FormatInt(x, 10)); got != want {
			t.Errorf("decimalLen(%d) = %d, want %d", x, got, want)
		}
	}
}

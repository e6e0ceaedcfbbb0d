package metrics

import (
	"math/rand/v2"
	"testing"
)

// TestSparseMergesExactly records the same values into a dense histogram
// directly and through the sparse table, over several ticks whose values
// spread from a few buckets to thousands (growing and then shrinking the
// table): the histograms must hold the same counts in the same buckets.
func TestSparseMergesExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s sparse
	for tick, spread := range []int64{3, 5000, 1 << 20, highestNS, 100, 2047, 2048, 70, 3} {
		direct, merged := NewHistogram(), NewHistogram()
		n := 1 + rng.IntN(20000)
		for range n {
			v := lowestNS + rng.Int64N(spread)
			if err := direct.RecordValue(v); err != nil {
				t.Fatal(err)
			}
			s.record(v)
		}
		if s.total != int64(n) {
			t.Fatalf("tick %d: total %d, want %d", tick, s.total, n)
		}
		s.mergeInto(merged)
		if !direct.Equals(merged) {
			t.Fatalf("tick %d (values below %d): merged histogram differs: count %d/%d, p50 %d/%d, p99.9 %d/%d, max %d/%d",
				tick, spread, merged.TotalCount(), direct.TotalCount(), merged.ValueAtQuantile(50), direct.ValueAtQuantile(50),
				merged.ValueAtQuantile(99.9), direct.ValueAtQuantile(99.9), merged.Max(), direct.Max())
		}
		if s.total != 0 || s.used != 0 {
			t.Fatalf("tick %d: after the merge %d values in %d slots remain", tick, s.total, s.used)
		}
	}
	if len(s.slots) > 4*sparseMinSize {
		t.Fatalf("after quiet ticks the table keeps %d slots: the room a spread-out tick took was not given back", len(s.slots))
	}
}

// TestBucketFloorSharesTheBucket: a value and its bucket's floor land in
// the same bucket of a dense histogram, and the floor of a floor is itself.
func TestBucketFloorSharesTheBucket(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	h := NewHistogram()
	for range 100000 {
		v := lowestNS + rng.Int64N(highestNS)>>rng.IntN(40)
		f := bucketFloor(v)
		if f > v || bucketFloor(f) != f {
			t.Fatalf("bucketFloor(%d) = %d", v, f)
		}
		if !h.ValuesAreEquivalent(v, f) || (f > lowestNS && h.ValuesAreEquivalent(f-1, f)) {
			t.Fatalf("value %d: floor %d is not the lowest value of its hdrhistogram bucket", v, f)
		}
	}
}

package metrics

import (
	"math/rand/v2"
	"testing"
)

// TestSparseMergesExactly records the same values into a dense histogram
// directly and through the sparse table, over several ticks whose values
// spread from a few buckets to thousands (growing the table): the
// histograms must hold the same counts in the same buckets, and quiet
// ticks then shrink the table again.
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
	for range 2 * sparseWindow {
		s.mergeInto(NewHistogram())
	}
	if len(s.slots) != sparseMinSize {
		t.Fatalf("after a window of quiet ticks the table keeps %d slots: the room a spread-out tick took was not given back", len(s.slots))
	}
}

// TestSparseKeepsItsTableOverQuietTicks: a worker whose ticks alternate
// between a hundred spread-out values and none (hundreds of connections
// on two cores) records and merges without allocating once its table has
// grown.
func TestSparseKeepsItsTableOverQuietTicks(t *testing.T) {
	var s sparse
	h := NewHistogram()
	busy := func() {
		for i := range int64(300) {
			s.record(1_000_000 + i*40_000) // 300 buckets: 1024 slots
		}
		s.mergeInto(h)
	}
	busy()
	allocs := testing.AllocsPerRun(20, func() {
		busy()
		s.record(5_000_000)
		s.mergeInto(h)
		s.mergeInto(h) // a tick with nothing recorded
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per busy and quiet pair of ticks, want 0: the table was shrunk and grown again", allocs)
	}
	if want := int64(22*300 + 21); h.TotalCount() != want {
		t.Fatalf("merged %d values, want %d", h.TotalCount(), want)
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

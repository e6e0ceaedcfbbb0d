package randgen

import (
	"slices"
	"testing"
)

// assertDistinct fails if vs holds a repeated value.
func assertDistinct(t *testing.T, what string, vs []uint32) {
	t.Helper()
	vs = slices.Clone(vs)
	slices.Sort(vs)
	for i := 1; i < len(vs); i++ {
		if vs[i] == vs[i-1] {
			t.Fatalf("%s: value %d repeats", what, vs[i])
		}
	}
}

func TestQuadraticResidueIsOneToOne(t *testing.T) {
	// The permutation's edge cases are around 0, p/2 (where the branch
	// switches), p (the fixed points) and 2^32.
	const w = 1 << 18
	for _, start := range []uint32{0, uniquePrime/2 - w/2, uniquePrime - w/2, 1<<32 - w} {
		var out []uint32
		for i := range uint32(w) {
			out = append(out, quadraticResidue(start+i))
		}
		assertDistinct(t, "quadraticResidue window", out)
	}
	// Values at or above the prime are fixed points; those below stay below.
	for x := uint32(uniquePrime); x != 0; x++ {
		if quadraticResidue(x) != x {
			t.Fatalf("quadraticResidue(%d) = %d, want fixed point", x, quadraticResidue(x))
		}
	}
	if got := quadraticResidue(uniquePrime - 1); got >= uniquePrime {
		t.Fatalf("quadraticResidue(p-1) = %d, want < p", got)
	}
}

func TestUniqueWithinStream(t *testing.T) {
	src := New(8, 0)
	out := make([]uint32, 1<<20)
	for i := range out {
		out[i] = Unique(src)
	}
	assertDistinct(t, "one stream", out)
}

func TestUniqueAcrossStreams(t *testing.T) {
	tests := []struct {
		workers, each int
	}{
		{2, 1 << 19},
		{16, 1 << 16},
		{256, 1 << 12},
	}
	for _, tt := range tests {
		var out []uint32
		for w := range tt.workers {
			src := New(77, uint64(w))
			for range tt.each {
				out = append(out, Unique(src))
			}
		}
		assertDistinct(t, "all streams of a run", out)
	}
}

func TestUniqueDeterministic(t *testing.T) {
	a, b := New(5, 9), New(5, 9)
	for range 1000 {
		if x, y := Unique(a), Unique(b); x != y {
			t.Fatalf("same seed and stream: %d != %d", x, y)
		}
	}
	// A different seed is a different permutation.
	c, d := New(5, 0), New(6, 0)
	same := 0
	for range 1000 {
		if Unique(c) == Unique(d) {
			same++
		}
	}
	if same > 10 {
		t.Fatalf("seeds 5 and 6 agree on %d of 1000 unique values", same)
	}
}

// TestUniqueStreamSpacing checks the bound documented on Unique: streams
// 0..W-1 start at least 2^32/(3W) apart on the cycle.
func TestUniqueStreamSpacing(t *testing.T) {
	for w := 2; w <= 1024; w++ {
		starts := make([]uint32, w)
		for i := range starts {
			starts[i] = uniqueStart(0x12345678, uint64(i))
		}
		slices.Sort(starts)
		minGap := uint64(1<<32) - uint64(starts[w-1]) + uint64(starts[0]) // wrap-around gap
		for i := 1; i < w; i++ {
			minGap = min(minGap, uint64(starts[i]-starts[i-1]))
		}
		if limit := uint64(1<<32) / uint64(3*w); minGap < limit {
			t.Fatalf("%d workers: closest starts %d apart, documented at least %d", w, minGap, limit)
		}
	}
}

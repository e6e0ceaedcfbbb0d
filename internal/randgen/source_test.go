package randgen

import (
	"math"
	"slices"
	"testing"
)

// trace exercises every consuming API so that determinism covers them all.
func trace(src *Source, n int) []uint64 {
	zipf, err := NewGenerator(Dist{Kind: KindZipfian, SpecIter: 12, SpecPct: 1, SpecRes: 75, ParetoH: 0.2, ZipfianExp: 0.8}, 1, 1000)
	if err != nil {
		panic(err)
	}
	d := DefaultDist()
	var out []uint64
	var buf []byte
	for range n {
		buf = FillTemplate(buf[:0], "###-@@@", src)
		out = append(out,
			src.Uint64(),
			math.Float64bits(src.Float64()),
			uint64(src.Uniform(-5, 5)),
			uint64(d.Int(src, 1, 1_000_000)),
			uint64(zipf.Int(src)),
			uint64(Unique(src)),
			uint64(buf[0])<<8|uint64(buf[4]),
		)
	}
	return out
}

func TestDeterminism(t *testing.T) {
	tests := []struct {
		name           string
		seedA, streamA uint64
		seedB, streamB uint64
		wantSame       bool
	}{
		{"same seed and stream", 42, 3, 42, 3, true},
		{"zero seed and stream", 0, 0, 0, 0, true},
		{"different stream", 42, 3, 42, 4, false},
		{"different seed", 42, 3, 43, 3, false},
		{"seed and stream swapped", 3, 42, 42, 3, false},
		{"equal seed and stream", 7, 7, 7, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := trace(New(tt.seedA, tt.streamA), 200)
			b := trace(New(tt.seedB, tt.streamB), 200)
			if tt.wantSame {
				if !slices.Equal(a, b) {
					t.Fatal("same seed and stream produced different sequences")
				}
				return
			}
			same := 0
			for i := range a {
				if a[i] == b[i] {
					same++
				}
			}
			// Small-range draws (digits, -5..5) coincide by chance;
			// unrelated streams agree on well under half.
			if same > len(a)/3 {
				t.Fatalf("%d of %d values equal: streams are correlated", same, len(a))
			}
		})
	}
}

func TestSeedResets(t *testing.T) {
	s := New(1, 2)
	want := trace(s, 50)
	s.Seed(1, 2)
	if got := trace(s, 50); !slices.Equal(got, want) {
		t.Fatal("Seed did not restore the sequence of New")
	}
}

func TestStreamsStartApart(t *testing.T) {
	// Worker streams of one run must not share their first outputs.
	seen := make(map[uint64]uint64)
	for stream := range uint64(4096) {
		v := New(99, stream).Uint64()
		if prev, ok := seen[v]; ok {
			t.Fatalf("streams %d and %d start with the same value", prev, stream)
		}
		seen[v] = stream
	}
}

func TestFloat64(t *testing.T) {
	src := New(5, 0)
	const n = 200_000
	var sum float64
	for range n {
		f := src.Float64()
		if f < 0 || f >= 1 {
			t.Fatalf("Float64() = %v, want [0, 1)", f)
		}
		sum += f
	}
	if mean := sum / n; math.Abs(mean-0.5) > 0.005 {
		t.Fatalf("mean %v, want about 0.5", mean)
	}
}

// chiSquare compares observed counts with expected ones; it pools the
// bins expected to hold fewer than 5 draws, where the statistic is
// unreliable, and returns the statistic with its degrees of freedom.
func chiSquare(counts []int, expected []float64) (stat float64, df int) {
	var poolObs, poolExp float64
	bins := 0
	for i, e := range expected {
		if e < 5 {
			poolObs += float64(counts[i])
			poolExp += e
			continue
		}
		d := float64(counts[i]) - e
		stat += d * d / e
		bins++
	}
	if poolExp > 0 {
		d := poolObs - poolExp
		stat += d * d / max(poolExp, 1)
		bins++
	}
	return stat, bins - 1
}

// chiSquareLimit is beyond any plausible chance value (5 sigma) but well
// below what a wrong distribution produces with these sample sizes.
func chiSquareLimit(df int) float64 {
	return float64(df) + 5*math.Sqrt(2*float64(df)) + 5
}

func TestUniformChiSquare(t *testing.T) {
	tests := []struct {
		lo, hi int64
	}{
		{0, 1},
		{-5, 44},
		{1, 10},
		{1, 97},
		{100, 355},
		{math.MaxInt64 - 9, math.MaxInt64},
		{math.MinInt64, math.MinInt64 + 30},
	}
	for _, tt := range tests {
		src := New(11, uint64(tt.hi))
		n := int(tt.hi - tt.lo + 1)
		draws := 2000 * n
		counts := make([]int, n)
		for range draws {
			v := src.Uniform(tt.lo, tt.hi)
			if v < tt.lo || v > tt.hi {
				t.Fatalf("Uniform(%d, %d) = %d, out of range", tt.lo, tt.hi, v)
			}
			counts[v-tt.lo]++
		}
		expected := make([]float64, n)
		for i := range expected {
			expected[i] = float64(draws) / float64(n)
		}
		if stat, df := chiSquare(counts, expected); stat > chiSquareLimit(df) {
			t.Errorf("Uniform(%d, %d): chi-square %.1f with %d df, not uniform", tt.lo, tt.hi, stat, df)
		}
	}
}

func TestUniformWideRanges(t *testing.T) {
	src := New(3, 3)
	tests := []struct{ lo, hi int64 }{
		{math.MinInt64, math.MaxInt64},
		{math.MinInt64, 0},
		{-1, math.MaxInt64},
		{7, 7},
	}
	for _, tt := range tests {
		var below, above int // halves of the range, to catch a stuck high bit
		mid := tt.lo/2 + tt.hi/2
		for range 10_000 {
			v := src.Uniform(tt.lo, tt.hi)
			if v < tt.lo || v > tt.hi {
				t.Fatalf("Uniform(%d, %d) = %d, out of range", tt.lo, tt.hi, v)
			}
			if v < mid {
				below++
			} else {
				above++
			}
		}
		if tt.lo != tt.hi && (below < 4500 || above < 4500) {
			t.Errorf("Uniform(%d, %d): %d below the middle, %d above", tt.lo, tt.hi, below, above)
		}
	}
}

func TestUniformPanicsOnEmptyRange(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Uniform(2, 1) did not panic")
		}
	}()
	New(1, 1).Uniform(2, 1)
}

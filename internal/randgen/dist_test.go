package randgen

import (
	"math"
	"strings"
	"testing"
)

// dist returns the defaults with kind k, adjusted by opts.
func dist(k Kind, opts ...func(*Dist)) Dist {
	d := DefaultDist()
	d.Kind = k
	for _, o := range opts {
		o(&d)
	}
	return d
}

func TestParseKind(t *testing.T) {
	for _, name := range []string{"uniform", "gaussian", "special", "pareto", "zipfian"} {
		k, err := ParseKind(name)
		if err != nil {
			t.Fatalf("ParseKind(%q): %v", name, err)
		}
		if k.String() != name {
			t.Fatalf("ParseKind(%q).String() = %q", name, k.String())
		}
	}
	for _, bad := range []string{"", "Uniform", "normal", "zipf"} {
		if _, err := ParseKind(bad); err == nil || !strings.Contains(err.Error(), "rand-type") {
			t.Errorf("ParseKind(%q) = %v, want a rand-type error", bad, err)
		}
	}
	if s := Kind(200).String(); s != "Kind(200)" {
		t.Errorf("Kind(200).String() = %q", s)
	}
}

func TestDefaultsMatchOptions(t *testing.T) {
	var d Dist
	for _, o := range Options() {
		if err := d.SetOption(o.Name, o.Default); err != nil {
			t.Fatalf("default of %s: %v", o.Name, err)
		}
	}
	if d != DefaultDist() {
		t.Fatalf("Options defaults give %+v, DefaultDist is %+v", d, DefaultDist())
	}
	if err := d.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	// sysbench 1.0's defaults.
	want := Dist{Kind: KindSpecial, SpecIter: 12, SpecPct: 1, SpecRes: 75, ParetoH: 0.2, ZipfianExp: 0.8}
	if d != want {
		t.Fatalf("defaults %+v, want sysbench 1.0's %+v", d, want)
	}
}

func TestParseDist(t *testing.T) {
	tests := []struct {
		name    string
		opts    map[string]string
		want    Dist
		wantErr string
	}{
		{name: "no options", want: DefaultDist()},
		{
			name: "all options",
			opts: map[string]string{"rand-type": "zipfian", "--rand-spec-iter": "3", "rand-spec-pct": "10", "rand-spec-res": "90", "rand-pareto-h": "0.1", "rand-zipfian-exp": "1.2"},
			want: Dist{Kind: KindZipfian, SpecIter: 3, SpecPct: 10, SpecRes: 90, ParetoH: 0.1, ZipfianExp: 1.2},
		},
		{name: "bad type", opts: map[string]string{"rand-type": "normal"}, wantErr: `invalid rand-type "normal"`},
		{name: "bad integer", opts: map[string]string{"rand-spec-pct": "1.5"}, wantErr: `rand-spec-pct: invalid value "1.5"`},
		{name: "bad float", opts: map[string]string{"rand-pareto-h": "x"}, wantErr: `rand-pareto-h: invalid value "x"`},
		{name: "unknown option", opts: map[string]string{"rand-seed": "1"}, wantErr: `unknown random number option "rand-seed"`},
		{name: "out of range", opts: map[string]string{"rand-spec-pct": "101"}, wantErr: "rand-spec-pct must be between 0 and 100 (got 101)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDist(tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		d       Dist
		wantErr []string // all must appear; nil means valid
	}{
		{"defaults", DefaultDist(), nil},
		{"limits", Dist{Kind: KindSpecial, SpecIter: 1, SpecPct: 0, SpecRes: 100, ParetoH: 0.999, ZipfianExp: 0}, nil},
		{"other limits", Dist{Kind: KindZipfian, SpecIter: 1000, SpecPct: 100, SpecRes: 0, ParetoH: 1e-9, ZipfianExp: 50}, nil},
		{"unknown kind", dist(Kind(9)), []string{"rand-type 9 is not a known distribution"}},
		{"zero iter", dist(KindGaussian, func(d *Dist) { d.SpecIter = 0 }), []string{"rand-spec-iter must be at least 1 (got 0)"}},
		{"pct negative", dist(KindSpecial, func(d *Dist) { d.SpecPct = -1 }), []string{"rand-spec-pct must be between 0 and 100 (got -1)"}},
		{"pct too big", dist(KindSpecial, func(d *Dist) { d.SpecPct = 101 }), []string{"rand-spec-pct must be between 0 and 100"}},
		{"res too big", dist(KindSpecial, func(d *Dist) { d.SpecRes = 200 }), []string{"rand-spec-res must be between 0 and 100 (got 200)"}},
		{"pareto h zero", dist(KindPareto, func(d *Dist) { d.ParetoH = 0 }), []string{"rand-pareto-h must be between 0 and 1, exclusive (got 0)"}},
		{"pareto h one", dist(KindPareto, func(d *Dist) { d.ParetoH = 1 }), []string{"rand-pareto-h must be between 0 and 1"}},
		{"pareto h NaN", dist(KindPareto, func(d *Dist) { d.ParetoH = math.NaN() }), []string{"rand-pareto-h must be between 0 and 1"}},
		{"zipf negative", dist(KindZipfian, func(d *Dist) { d.ZipfianExp = -0.1 }), []string{"rand-zipfian-exp must be a finite number >= 0 (got -0.1)"}},
		{"zipf infinite", dist(KindZipfian, func(d *Dist) { d.ZipfianExp = math.Inf(1) }), []string{"rand-zipfian-exp must be a finite number >= 0"}},
		{"zipf NaN", dist(KindZipfian, func(d *Dist) { d.ZipfianExp = math.NaN() }), []string{"rand-zipfian-exp"}},
		// Unused settings are checked too, and every problem is reported.
		{"several", dist(KindUniform, func(d *Dist) { d.SpecIter, d.SpecRes, d.ZipfianExp = -3, -1, -1 }),
			[]string{"rand-spec-iter", "rand-spec-res", "rand-zipfian-exp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.d.Validate()
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.wantErr)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestNewGeneratorErrors(t *testing.T) {
	if _, err := NewGenerator(DefaultDist(), 5, 4); err == nil || !strings.Contains(err.Error(), "empty range") {
		t.Errorf("empty range: error %v", err)
	}
	if _, err := NewGenerator(dist(KindPareto, func(d *Dist) { d.ParetoH = 2 }), 1, 10); err == nil || !strings.Contains(err.Error(), "rand-pareto-h") {
		t.Errorf("invalid dist: error %v", err)
	}
	g, err := NewGenerator(DefaultDist(), -3, 8)
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := g.Range(); lo != -3 || hi != 8 {
		t.Errorf("Range() = %d, %d", lo, hi)
	}
}

// variants covers every kind with default and extreme parameters.
func variants() []Dist {
	return []Dist{
		dist(KindUniform),
		dist(KindGaussian),
		dist(KindGaussian, func(d *Dist) { d.SpecIter = 1 }),
		dist(KindSpecial),
		dist(KindSpecial, func(d *Dist) { d.SpecRes = 0 }),
		dist(KindSpecial, func(d *Dist) { d.SpecRes = 100 }),
		dist(KindSpecial, func(d *Dist) { d.SpecPct = 0 }),
		dist(KindSpecial, func(d *Dist) { d.SpecPct, d.SpecRes, d.SpecIter = 100, 50, 1 }),
		dist(KindPareto),
		dist(KindPareto, func(d *Dist) { d.ParetoH = 0.001 }),
		dist(KindPareto, func(d *Dist) { d.ParetoH = 0.999 }),
		dist(KindZipfian),
		dist(KindZipfian, func(d *Dist) { d.ZipfianExp = 0 }),
		dist(KindZipfian, func(d *Dist) { d.ZipfianExp = 1 }),
		dist(KindZipfian, func(d *Dist) { d.ZipfianExp = 5 }),
		dist(KindZipfian, func(d *Dist) { d.ZipfianExp = 0.01 }),
	}
}

func TestBounds(t *testing.T) {
	ranges := []struct{ lo, hi int64 }{
		{0, 0},
		{5, 5},
		{-3, 3},
		{1, 2},
		{1, 10},
		{1, 1_000_000},
		{0, 1 << 60},
		{math.MaxInt64 - 5, math.MaxInt64},
		{math.MinInt64, math.MinInt64 + 3},
		{math.MinInt64, math.MaxInt64},
	}
	for _, d := range variants() {
		for _, r := range ranges {
			g, err := NewGenerator(d, r.lo, r.hi)
			if err != nil {
				t.Fatalf("%+v: %v", d, err)
			}
			// Dist.Int and a Generator must agree draw for draw.
			a, b := New(1, 1), New(1, 1)
			for range 5000 {
				v := g.Int(a)
				if v < r.lo || v > r.hi {
					t.Fatalf("%s %+v: %d outside [%d, %d]", d.Kind, d, v, r.lo, r.hi)
				}
				if w := d.Int(b, r.lo, r.hi); w != v {
					t.Fatalf("%s %+v on [%d, %d]: Generator gave %d, Dist.Int %d", d.Kind, d, r.lo, r.hi, v, w)
				}
			}
		}
	}
}

func TestDistIntPanicsOnEmptyRange(t *testing.T) {
	for _, d := range variants() {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Int(src, 1, 0) did not panic", d.Kind)
				}
			}()
			d.Int(New(1, 1), 1, 0)
		}()
	}
}

// histogram draws n values from d over [lo, hi] and counts each offset.
func histogram(t *testing.T, d Dist, lo, hi int64, n int) []int {
	t.Helper()
	g, err := NewGenerator(d, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	src := New(2024, 0)
	counts := make([]int, hi-lo+1)
	for range n {
		counts[g.Int(src)-lo]++
	}
	return counts
}

func TestGaussianShape(t *testing.T) {
	tests := []struct {
		iter        int
		maxTailFrac float64 // share outside the middle half of the range
	}{
		{1, 0.52}, // one iteration is uniform: half is outside
		{2, 0.27},
		{12, 0.01},
		{30, 0.0005},
	}
	const lo, hi, n = 1000, 10_999, 200_000
	for _, tt := range tests {
		counts := histogram(t, dist(KindGaussian, func(d *Dist) { d.SpecIter = tt.iter }), lo, hi, n)
		span := float64(hi - lo + 1)
		var sum, sumSq float64
		tail := 0
		for off, c := range counts {
			x := float64(off)
			sum += x * float64(c)
			sumSq += x * x * float64(c)
			if x < span/4 || x >= 3*span/4 {
				tail += c
			}
		}
		mean := sum / n
		sd := math.Sqrt(sumSq/n - mean*mean)
		// The mean of iter uniforms on [0, span) has mean span/2 and
		// standard deviation span/sqrt(12*iter); flooring shifts the
		// mean by half a unit.
		wantSD := span / math.Sqrt(12*float64(tt.iter))
		if math.Abs(mean-(span-1)/2) > 0.005*span {
			t.Errorf("iter %d: mean offset %.1f, want about %.1f", tt.iter, mean, (span-1)/2)
		}
		if math.Abs(sd-wantSD) > 0.03*wantSD {
			t.Errorf("iter %d: standard deviation %.1f, want about %.1f", tt.iter, sd, wantSD)
		}
		if frac := float64(tail) / n; frac > tt.maxTailFrac {
			t.Errorf("iter %d: %.4f of draws in the outer half, want at most %.4f", tt.iter, frac, tt.maxTailFrac)
		}
	}
}

func TestSpecialHotSpot(t *testing.T) {
	tests := []struct {
		pct, res int
	}{
		{1, 75}, // sysbench defaults
		{5, 50},
		{10, 90},
		{20, 0},
		{0, 100},
		{100, 100},
	}
	const lo, hi, n = 1, 100_000, 200_000
	for _, tt := range tests {
		counts := histogram(t, dist(KindSpecial, func(d *Dist) { d.SpecPct, d.SpecRes = tt.pct, tt.res }), lo, hi, n)
		// The hot region: offsets in [start, start + pct% of (hi-lo) + 1)
		// with start = (hi-lo)/2 - pct/2 % of (hi-lo), as in sysbench.
		t0 := float64(hi - lo)
		start := t0/2 - t0*float64(tt.pct)/200
		first := int(start)
		last := int(math.Ceil(start+t0*float64(tt.pct)/100+1)) - 1
		hot := 0
		for off := first; off <= last; off++ {
			hot += counts[off]
		}
		frac := float64(hot) / n
		// res% of draws go there directly; the bell curve of the rest
		// adds at most its peak density (under 4.8/range for 12
		// iterations) times the region's width.
		res := float64(tt.res) / 100
		bell := min(1, 4.8*float64(tt.pct)/100+float64(last-first+1)/t0)
		wantMin, wantMax := res-0.01, res+(1-res)*bell+0.01
		if frac < wantMin || frac > wantMax {
			t.Errorf("pct %d res %d: %.4f of draws in the hot region [%d, %d], want %.4f..%.4f",
				tt.pct, tt.res, frac, first+lo, last+lo, wantMin, wantMax)
		}
	}
}

// TestSpecialHotBranchQuirk pins down a sysbench 1.0 detail reproduced on
// purpose: the hot value reuses the branch-selecting draw, so only the upper
// res% of the hot region receives hot draws.
func TestSpecialHotBranchQuirk(t *testing.T) {
	const n = 200_000
	counts := histogram(t, dist(KindSpecial, func(d *Dist) { d.SpecPct, d.SpecRes = 10, 50 }), 0, 100_000, n)
	// Hot region [45000, 55000]; hot draws land in [50000, 55000].
	lower, upper := 0, 0
	for off := 45_000; off < 50_000; off++ {
		lower += counts[off]
	}
	for off := 50_000; off <= 55_000; off++ {
		upper += counts[off]
	}
	// Expected: lower about 11% (bell curve only), upper about 61%.
	if float64(upper) < 3*float64(lower) || float64(upper)/n < 0.55 {
		t.Errorf("hot region halves: lower %d, upper %d of %d draws", lower, upper, n)
	}
}

func TestParetoCDF(t *testing.T) {
	const lo, hi, n = 1, 1000, 200_000
	for _, h := range []float64{0.05, 0.2, 0.4, 0.5} {
		counts := histogram(t, dist(KindPareto, func(d *Dist) { d.ParetoH = h }), lo, hi, n)
		// offset < m exactly when u < (m/span)^(1/power).
		power := math.Log(h) / math.Log(1-h)
		span := float64(hi - lo + 1)
		below := 0
		for m := 1; m < len(counts); m++ {
			below += counts[m-1]
			if m%50 != 0 {
				continue
			}
			want := math.Pow(float64(m)/span, 1/power)
			if got := float64(below) / n; math.Abs(got-want) > 0.006 {
				t.Errorf("h %v: P(offset < %d) = %.4f, want %.4f", h, m, got, want)
			}
		}
		// The 80/20 reading of h.
		if got := float64(sumCounts(counts[:int(h*span)])) / n; math.Abs(got-(1-h)) > 0.006 {
			t.Errorf("h %v: %.4f of draws in the lowest %v of the range, want %.4f", h, got, h, 1-h)
		}
	}
}

func sumCounts(c []int) int {
	s := 0
	for _, v := range c {
		s += v
	}
	return s
}

func TestZipfianPMF(t *testing.T) {
	const lo, hi, n = 1, 100, 1_000_000
	for _, exp := range []float64{0, 0.5, 0.8, 0.99, 1, 1.01, 1.5, 3} {
		counts := histogram(t, dist(KindZipfian, func(d *Dist) { d.ZipfianExp = exp }), lo, hi, n)
		// P(lo+k-1) is proportional to k^-exp.
		expected := make([]float64, len(counts))
		var norm float64
		for k := range expected {
			expected[k] = math.Pow(float64(k+1), -exp)
			norm += expected[k]
		}
		for k := range expected {
			expected[k] *= n / norm
		}
		if stat, df := chiSquare(counts, expected); stat > chiSquareLimit(df) {
			t.Errorf("exp %v: chi-square %.1f with %d df against k^-exp", exp, stat, df)
		}
	}
}

func TestZipfianLargeRange(t *testing.T) {
	// For a large n the share of the first k values is about
	// H(k+0.5)/H(n+0.5); check the head against the exact sum.
	const lo, hi, n = 0, 999_999_999, 100_000
	g, err := NewGenerator(dist(KindZipfian), lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	src := New(1, 0)
	first := 0
	for range n {
		if g.Int(src) == lo {
			first++
		}
	}
	var norm float64 // sum of k^-0.8 for k = 1..1e9, via the integral tail
	for k := 1; k <= 1000; k++ {
		norm += math.Pow(float64(k), -0.8)
	}
	norm += (math.Pow(1e9+0.5, 0.2) - math.Pow(1000.5, 0.2)) / 0.2
	want := 1 / norm
	if got := float64(first) / n; math.Abs(got-want) > 0.15*want {
		t.Errorf("P(lo) = %.5f, want about %.5f", got, want)
	}
}

func TestSkew(t *testing.T) {
	tests := []struct {
		d        Dist
		minRatio float64 // draws of the 10 lowest values over the 10 highest
	}{
		{dist(KindPareto), 100},
		{dist(KindPareto, func(d *Dist) { d.ParetoH = 0.4 }), 5},
		{dist(KindZipfian), 50},
		{dist(KindZipfian, func(d *Dist) { d.ZipfianExp = 0.5 }), 10},
		{dist(KindZipfian, func(d *Dist) { d.ZipfianExp = 1.2 }), 500},
	}
	const lo, hi, n = 1, 1000, 200_000
	for _, tt := range tests {
		counts := histogram(t, tt.d, lo, hi, n)
		low, high := sumCounts(counts[:10]), sumCounts(counts[len(counts)-10:])
		if float64(low) < tt.minRatio*float64(max(high, 1)) {
			t.Errorf("%s %+v: lowest 10 values drawn %d times, highest 10 %d times; want ratio >= %v",
				tt.d.Kind, tt.d, low, high, tt.minRatio)
		}
	}
	// Uniform must not be skewed.
	counts := histogram(t, dist(KindUniform), lo, hi, n)
	low, high := sumCounts(counts[:10]), sumCounts(counts[len(counts)-10:])
	if r := float64(low) / float64(high); r < 0.8 || r > 1.25 {
		t.Errorf("uniform: lowest/highest ratio %.2f", r)
	}
}

func TestNoAllocs(t *testing.T) {
	src := New(1, 1)
	buf := make([]byte, 0, 256)
	tests := []struct {
		name string
		fn   func()
	}{
		{"Uint64", func() { src.Uint64() }},
		{"Float64", func() { src.Float64() }},
		{"Uniform", func() { src.Uniform(1, 1_000_000) }},
		{"Unique", func() { Unique(src) }},
		{"FillTemplate", func() { buf = FillTemplate(buf[:0], "###########-@@@@@@@@@@@", src) }},
	}
	for _, d := range variants() {
		g, err := NewGenerator(d, 1, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		tests = append(tests,
			struct {
				name string
				fn   func()
			}{"Generator.Int/" + d.Kind.String(), func() { g.Int(src) }},
			struct {
				name string
				fn   func()
			}{"Dist.Int/" + d.Kind.String(), func() { d.Int(src, 1, 1_000_000) }},
		)
	}
	for _, tt := range tests {
		if a := testing.AllocsPerRun(1000, tt.fn); a != 0 {
			t.Errorf("%s: %v allocations per call, want 0", tt.name, a)
		}
	}
}

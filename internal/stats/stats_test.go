package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6g, want %.6g (±%g)", what, got, want, tol)
	}
}

// Two-sided 95% critical values of Student's t, from the table in any
// statistics textbook (e.g. NIST/SEMATECH e-Handbook, section 1.3.6.7.2).
func TestTQuantileMatchesTable(t *testing.T) {
	for _, c := range []struct{ df, want float64 }{
		{1, 12.706}, {2, 4.303}, {4, 2.776}, {7, 2.365}, {9, 2.262}, {30, 2.042}, {100, 1.984},
	} {
		near(t, "t(0.975)", TQuantile(0.975, c.df), c.want, 0.0006)
	}
}

// The sample 2,4,4,4,5,5,7,9 is the textbook example of a standard
// deviation (population 2, sample sqrt(32/7) = 2.13809).
func TestDescribe(t *testing.T) {
	s := Describe([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	near(t, "mean", s.Mean, 5, 1e-12)
	near(t, "median", s.Median, 4.5, 1e-12)
	near(t, "stddev", s.StdDev, 2.13809, 1e-5)
	near(t, "cv", s.CV, 2.13809/5, 1e-5)
	// t(0.975, 7) = 2.365 (table) × 2.13809 / √8
	near(t, "half-width", s.HalfWidth, 2.365*2.13809/math.Sqrt(8), 0.001)
	// Median 4.5, MAD 0.5: 9 has modified z 0.6745×4.5/0.5 = 6.1 > 3.5;
	// 2 and 7 have 3.4.
	if !slices.Equal(s.Outliers, []int{7}) {
		t.Errorf("outliers %v, want [7]", s.Outliers)
	}
	one := Describe([]float64{42})
	if one.Mean != 42 || one.Median != 42 || !math.IsNaN(one.StdDev) || !math.IsNaN(one.HalfWidth) {
		t.Errorf("one value: %+v; want mean and median 42, no spread", one)
	}
	if none := Describe(nil); none.N != 0 || !math.IsNaN(none.Mean) {
		t.Errorf("no values: %+v", none)
	}
}

func TestOutliersMAD(t *testing.T) {
	// Median 10.05, MAD 0.05: 13 has modified z 0.6745×2.95/0.05 = 39.8;
	// 9.9 has 2.0, under 3.5.
	if got := Outliers([]float64{10, 10.1, 9.9, 10.05, 13}); !slices.Equal(got, []int{4}) {
		t.Errorf("outliers = %v, want [4]", got)
	}
	if got := Outliers([]float64{114595, 90016, 86769, 88000}); got != nil {
		t.Errorf("four values: %v, want none", got)
	}
	if got := Outliers([]float64{5, 5, 5, 9, 5}); got != nil {
		t.Errorf("MAD 0: %v, want none", got)
	}
}

// Wikipedia's worked example of Welch's t-test (its "Examples" section,
// samples A1 and A2): t = -2.46, ν = 25.0, p = 0.021.
func TestWelchReference(t *testing.T) {
	a1 := []float64{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4}
	a2 := []float64{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4}
	r, err := Welch(a2, a1) // mean(a1) - mean(a2)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "t", r.T, -2.46, 0.005)
	near(t, "df", r.DF, 25.0, 0.05)
	near(t, "p", r.P, 0.021, 0.0005)
	if !r.Significant() {
		t.Error("p 0.021 not significant at 95%")
	}
	same, err := Welch([]float64{1, 2, 3}, []float64{1, 2, 3})
	if err != nil || same.P != 1 || same.Significant() {
		t.Errorf("identical samples: %+v, %v", same, err)
	}
	flat, err := Welch([]float64{5, 5}, []float64{6, 6})
	if err != nil || flat.P != 0 || !flat.Significant() {
		t.Errorf("different constants: %+v, %v", flat, err)
	}
	if _, err := Welch([]float64{1}, []float64{1, 2}); err == nil {
		t.Error("one value tested")
	}
}

func TestRatioOf(t *testing.T) {
	// Fieller's interval. a: mean 100, variance of the mean sa = 2.5/5 =
	// 0.5; b: mean 200, sb = 10/5 = 2. Welch's df = 2.5²/(0.5²/4 + 2²/4)
	// = 5.882, t(0.975, 5.882) = 2.4588. The ends solve
	// (200 - 100ρ)² = t²(2 + 0.5ρ²): qa = 100² - t²·0.5 = 9996.977,
	// centre 100·200/qa = 2.000605, half-width
	// √(t²(2·qa + 200²·0.5))/qa = 0.049188.
	a := []float64{98, 99, 100, 101, 102}
	b := []float64{196, 198, 200, 202, 204}
	r, err := RatioOf(a, b)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "ratio", r.Value, 2, 1e-12)
	near(t, "low", r.Low, 2.000605-0.049188, 0.00001)
	near(t, "high", r.High, 2.000605+0.049188, 0.00001)
	c, err := RatioOf([]float64{4, 4}, []float64{2, 2})
	if err != nil || c.Value != 0.5 || c.Low != 0.5 || c.High != 0.5 {
		t.Errorf("constants: %+v, %v", c, err)
	}
	if _, err := RatioOf([]float64{0, 0}, []float64{1, 2}); err == nil {
		t.Error("ratio to a zero mean")
	}
	// A ratio of 0 to a first mean known only roughly: the interval is
	// not [0, 0] (the delta method's) but holds 1, as Welch's test, with
	// one degree of freedom, finds no difference.
	z, err := RatioOf([]float64{200, 1026}, []float64{0, 0})
	w, _ := Welch([]float64{200, 1026}, []float64{0, 0})
	if w.Significant() || !(errors.Is(err, ErrUnbounded) || err == nil && z.Low < 1 && z.High > 1) {
		t.Errorf("0 against a mean of 613 from 2 values: %+v, %v (p %g)", z, err, w.P)
	}
	if _, err := RatioOf([]float64{-1, 1, 2}, []float64{1, 2, 3}); !errors.Is(err, ErrUnbounded) {
		t.Errorf("a first mean not clear of zero: %v", err)
	}
}

// The interval holds 1 exactly when Welch's test is not significant.
func TestRatioAgreesWithWelch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		a := make([]float64, 2+rng.IntN(8))
		b := make([]float64, 2+rng.IntN(8))
		sa, sb, shift := rng.Float64()*50, rng.Float64()*50, rng.NormFloat64()*30
		for j := range a {
			a[j] = 100 + rng.NormFloat64()*sa
		}
		for j := range b {
			b[j] = 100 + shift + rng.NormFloat64()*sb
		}
		w, _ := Welch(a, b)
		r, err := RatioOf(a, b)
		if errors.Is(err, ErrUnbounded) {
			continue // no interval given
		}
		if err != nil {
			t.Fatal(err)
		}
		holds := r.Low <= 1 && 1 <= r.High
		if holds == w.Significant() && math.Abs(w.P-0.05) > 1e-9 {
			t.Errorf("draw %d: interval [%g, %g], p = %g", i, r.Low, r.High, w.P)
		}
	}
}

func TestBatchMeans(t *testing.T) {
	xs := []float64{100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10} // 11 values: the first is dropped
	got, err := BatchMeans(xs, 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{1.5, 3.5, 5.5, 7.5, 9.5}; !slices.Equal(got, want) {
		t.Errorf("batch means = %v, want %v", got, want)
	}
	if _, err := BatchMeans([]float64{1, 2, 3}, 2); err == nil {
		t.Error("3 values made 2 batches of 2")
	}
	for n, want := range map[int]int{3: 0, 4: 0, 7: 0, 8: 4, 9: 4, 19: 9, 20: 10, 600: 10} {
		if got := Batches(n); got != want {
			t.Errorf("Batches(%d) = %d, want %d", n, got, want)
		}
	}
}

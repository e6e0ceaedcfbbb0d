package standing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// planted is a set of 80 results on three CPU models and two file
// systems, at random, half on NVMe and half on HDD; NVMe doubles the
// headline, with ±15% noise (log-normal) on every result.
func planted(rng *rand.Rand, better string) (heads []float64, facts []map[string]string) {
	cpus := []string{"EPYC 7763", "Xeon 6338", "Ryzen 7950X"}
	fss := []string{"ext4", "xfs"}
	for i := range 80 {
		storage, v := "HDD", 1000.0
		if i%2 == 0 {
			storage, v = "NVMe", 2000.0
		}
		v *= math.Exp(rng.NormFloat64() * 0.15)
		if better == "lower" {
			v = 1e6 / v // a latency: NVMe halves it
		}
		f := map[string]string{"cpu_model": cpus[rng.IntN(3)], "fs": fss[rng.IntN(2)], "storage": storage, Known: "yes"}
		if i%3 == 0 {
			f[SettingPrefix+"fsync"] = "off" // unrelated to the headline
		}
		heads, facts = append(heads, v), append(facts, f)
	}
	return heads, facts
}

func TestPlantedEffectFound(t *testing.T) {
	for _, better := range []string{"higher", "lower"} {
		t.Run(better, func(t *testing.T) {
			heads, facts := planted(rand.New(rand.NewPCG(1, 2)), better)
			g := NewGroup(better)
			for i := range heads {
				g.Add(heads[i], facts[i])
			}
			a := g.Analysis()
			if len(a.Findings) != 1 {
				t.Fatalf("findings %+v, want storage alone", a.Findings)
			}
			f := a.Findings[0]
			if f.Fact != "storage" || f.Value != "NVMe" {
				t.Fatalf("found %s = %s, want storage = NVMe (the better side)", f.Fact, f.Value)
			}
			if f.Ratio < 1.8 || f.Ratio > 2.2 {
				t.Errorf("ratio %.2f, want about 2", f.Ratio)
			}
			if f.N != 40 || f.Others != 40 {
				t.Errorf("N %d, others %d, want 40 and 40", f.N, f.Others)
			}
			if f.Superiority < 0.95 || f.BetterHalf < 0.9 || f.OthersBetterHalf > 0.1 {
				t.Errorf("superiority %.2f, better half %.2f against %.2f: NVMe should nearly always win", f.Superiority, f.BetterHalf, f.OthersBetterHalf)
			}
			// The best NVMe result beats nearly all others; the median of the
			// set stands in the middle.
			if p, n, _ := a.Percentile(heads[0], true); n != 79 || p < 40 {
				t.Errorf("an NVMe result at the %.0fth percentile of %d", p, n)
			}
			mid := 1000 * math.Sqrt2
			if better == "lower" {
				mid = 1e6 / mid
			}
			if p, n, _ := a.Percentile(mid, false); n != 80 || math.Abs(p-50) > 5 {
				t.Errorf("a headline between the two clusters at the %.1fth percentile of %d, want 50", p, n)
			}
		})
	}
}

// TestShuffledInventsNothing shuffles the planted set's headlines over its
// results, which leaves no fact related to the headline: 200 shuffles
// (seeded) may report a finding in a few at most. Bonferroni holds each
// set's chance of any false finding to Alpha (1%): 2 expected in 200,
// and 8 or more has a chance below 0.1%.
func TestShuffledInventsNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	heads, facts := planted(rng, "higher")
	wrong := 0
	for range 200 {
		rng.Shuffle(len(heads), func(i, j int) { heads[i], heads[j] = heads[j], heads[i] })
		g := NewGroup("higher")
		for i := range heads {
			g.Add(heads[i], facts[i])
		}
		a := g.Analysis()
		if a.Tests == 0 {
			t.Fatal("nothing was tested")
		}
		if len(a.Findings) > 0 {
			wrong++
			t.Logf("shuffled set: %+v", a.Findings)
		}
	}
	if wrong >= 8 {
		t.Errorf("%d of 200 shuffled sets have findings, want fewer than 8", wrong)
	}
}

func TestSmallSetsAndBadHeadlines(t *testing.T) {
	g := NewGroup("higher")
	g.Add(0, map[string]string{"storage": "NVMe"})
	g.Add(math.NaN(), nil)
	g.Add(math.Inf(1), nil)
	if g.Len() != 0 {
		t.Fatalf("unrankable headlines added: %d", g.Len())
	}
	if _, _, ok := g.Analysis().Percentile(10, false); ok {
		t.Error("a percentile in an empty set")
	}
	for i := range 8 {
		g.Add(float64(100+i), map[string]string{"storage": fmt.Sprint(i % 2)})
	}
	a := g.Analysis()
	if a.Tests != 0 || len(a.Findings) != 0 {
		t.Errorf("4 against 4 results were tested: %d tests, %+v", a.Tests, a.Findings)
	}
	if p, n, ok := a.Percentile(107, true); !ok || n != 7 || p != 100 {
		t.Errorf("the best of 8: %.1f of %d (%v), want 100 of 7", p, n, ok)
	}
	if p, _, _ := a.Percentile(100, true); p != 0 {
		t.Errorf("the worst of 8: %.1f, want 0", p)
	}
}

// TestSettingDefaults counts a result that reports its settings and lacks
// one as having the default: a non-default setting is tested against it.
func TestSettingDefaults(t *testing.T) {
	g := NewGroup("higher")
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 60 {
		f := map[string]string{Known: "yes"}
		v := 1000 * math.Exp(rng.NormFloat64()*0.1)
		if i%3 == 0 {
			f[SettingPrefix+"synchronous_commit"] = "off"
			v *= 1.5
		}
		g.Add(v, f)
	}
	g.Add(5000, nil) // no settings reported: in neither side
	a := g.Analysis()
	if len(a.Findings) != 1 {
		t.Fatalf("findings %+v", a.Findings)
	}
	f := a.Findings[0]
	if f.Value != "off" || f.N != 20 || f.Others != 40 || f.Ratio < 1.35 || f.Ratio > 1.65 {
		t.Errorf("finding %+v, want synchronous_commit off, 20 against 40 at the default, ratio 1.5", f)
	}
}

// bigGroup is the worst case of a set: 100,000 results in one.
func bigGroup() *Group {
	rng := rand.New(rand.NewPCG(1, 1))
	g := NewGroup("higher")
	for i := range 100_000 {
		g.Add(1000*math.Exp(rng.NormFloat64()), map[string]string{"cpu_model": fmt.Sprint(rng.IntN(8)), "cpus": fmt.Sprint(rng.IntN(7)),
			"storage": fmt.Sprint(i % 3), "fs": fmt.Sprint(rng.IntN(4)), Known: "yes", SettingPrefix + "x": fmt.Sprint(rng.IntN(2))})
	}
	return g
}

// BenchmarkAnalysis100k is a set of 100,000 analysed again after a
// result was added.
func BenchmarkAnalysis100k(b *testing.B) {
	g := bigGroup()
	for b.Loop() {
		g.Add(1000, nil)
		g.Analysis()
	}
}

// BenchmarkFindings100k is the facts' analysis of a set of 100,000.
func BenchmarkFindings100k(b *testing.B) {
	g := bigGroup()
	for b.Loop() {
		g.analyse()
	}
}

// TestLargeSetRegrows: a set of more than RegrowFrom results keeps its
// findings until it has grown by Regrow, while its percentiles count
// every result at once.
func TestLargeSetRegrows(t *testing.T) {
	g := NewGroup("higher")
	for i := range 2000 {
		g.Add(float64(1+i), map[string]string{"storage": fmt.Sprint(i % 2)})
	}
	a := g.Analysis()
	if a.From != 2000 || a.Len() != 2000 {
		t.Fatalf("from %d, len %d", a.From, a.Len())
	}
	for range 5 {
		g.Add(1e9, nil)
	}
	b := g.Analysis()
	if b.From != 2000 || b.Len() != 2005 {
		t.Errorf("after 5 more: from %d, len %d; want the findings of 2000, the scores of 2005", b.From, b.Len())
	}
	if p, n, _ := b.Percentile(1e9, true); n != 2004 || p < 99.8 {
		t.Errorf("a new best at %.2f of %d", p, n)
	}
	if p, _, _ := a.Percentile(1e9, false); p != 100 {
		t.Errorf("the earlier analysis changed with the group: %.2f", p)
	}
	for range 20 {
		g.Add(1e9, nil)
	}
	if c := g.Analysis(); c.From != 2025 {
		t.Errorf("after 1%% more, the findings are of %d results, want 2025", c.From)
	}
}

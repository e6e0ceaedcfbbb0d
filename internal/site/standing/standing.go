// Package standing says where a result stands among comparable results,
// and which facts (CPU model, cores, storage kind, file system, engine
// settings...) separate the better half of them from the worse: each
// fact's value against the others of its kind, by a rank test, with its
// effect size and the number of results behind it. What it finds is an
// observation on the results submitted, not a cause.
//
// A Group collects a set's results one at a time (a site adds each new
// one as it is stored) and analyses them again only after it changed.
package standing

import (
	"math"
	"slices"
	"sort"
	"strings"
)

// SettingPrefix starts the name of a fact that is an engine setting. A
// result that reports its engine's settings (Known) and lacks one has it
// at its default: DefaultValue.
const (
	SettingPrefix = "setting "
	Known         = "settings known"
	DefaultValue  = "(default)"
)

// Limits of the analysis.
const (
	// MinResults is how many results each side of a comparison needs: a
	// fact's value held by fewer, or by all but fewer, is not tested.
	MinResults = 5
	// Alpha is the chance, with no fact related to the headline at all,
	// that any finding is reported for a set: the tests' p-values are
	// held to Alpha over the number of tests made (Bonferroni), so a
	// set's findings are wrong together at most this often.
	Alpha = 0.01
	// MaxFindings are the findings kept, the largest effects first.
	MaxFindings = 8
)

// Group is a set of comparable results, added one at a time. Facts are
// kept as small integers: a set of 100,000 results costs a few MB.
type Group struct {
	better   string // "higher" or "lower"
	dims     dict
	vals     []dict // by dim
	rows     []row
	analysis *Analysis
}

type row struct {
	score float64 // higher is better: the headline's log, negated when lower is better
	facts []fact
	known bool // has Known
}

type fact struct{ dim, val int32 }

type dict struct {
	code  map[string]int32
	names []string
}

func (d *dict) intern(s string) int32 {
	if c, ok := d.code[s]; ok {
		return c
	}
	if d.code == nil {
		d.code = map[string]int32{}
	}
	c := int32(len(d.names))
	d.code[s] = c
	d.names = append(d.names, s)
	return c
}

// NewGroup is an empty set whose headlines are better when higher, or
// lower when better is "lower".
func NewGroup(better string) *Group { return &Group{better: better} }

// Len is how many results the group holds.
func (g *Group) Len() int { return len(g.rows) }

// score turns a headline into a score where higher is better; ok is false
// for a headline that cannot be ranked (zero, negative, not finite).
func score(better string, headline float64) (float64, bool) {
	if !(headline > 0) || math.IsInf(headline, 0) {
		return 0, false
	}
	s := math.Log(headline)
	if better == "lower" {
		s = -s
	}
	return s, true
}

// Add adds a result: its headline and its facts by name. A headline that
// cannot be ranked is not added.
func (g *Group) Add(headline float64, facts map[string]string) {
	s, ok := score(g.better, headline)
	if !ok {
		return
	}
	r := row{score: s}
	for _, k := range slices.Sorted(mapKeys(facts)) {
		if k == Known {
			r.known = true
			continue
		}
		d := g.dims.intern(k)
		for int(d) >= len(g.vals) {
			g.vals = append(g.vals, dict{})
		}
		r.facts = append(r.facts, fact{d, g.vals[d].intern(facts[k])})
	}
	g.rows = append(g.rows, r)
	g.analysis = nil
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Finding is one fact's value that the better and the worse results of a
// set hold unequally.
type Finding struct {
	Fact  string // the fact's name: cpu_model, storage, "setting fsync"...
	Value string
	// N results have the value; Others have another value of the fact
	// (results that do not report the fact are in neither).
	N, Others int
	// Ratio is the median headline of the N over the Others', turned so
	// that above 1 is better.
	Ratio float64
	// Superiority is the chance that a result with the value beats one
	// with another (the rank test's U over N×Others): 0.5 is no effect.
	Superiority float64
	// BetterHalf and OthersBetterHalf are the shares of the N and of the
	// Others in the better half of the whole set.
	BetterHalf, OthersBetterHalf float64
	// P is the rank test's two-sided p-value, before the correction for
	// the number of tests.
	P float64
}

// Analysis is a group's scores in order and its findings.
type Analysis struct {
	scores   []float64 // ascending
	better   string
	Findings []Finding
	// Tests is how many values were tested: each finding passed P <
	// Alpha/Tests.
	Tests int
}

// Len is how many results were analysed.
func (a *Analysis) Len() int { return len(a.scores) }

// Percentile is the share (0 to 100) of the set's other results that a
// headline beats, ties counting half; member says the headline's result
// is one of the set (it is then not counted against itself). ok is false
// when there is nothing to compare with.
func (a *Analysis) Percentile(headline float64, member bool) (pct float64, others int, ok bool) {
	s, valid := score(a.better, headline)
	if !valid {
		return 0, 0, false
	}
	below := sort.SearchFloat64s(a.scores, s)
	equal := sort.Search(len(a.scores), func(i int) bool { return a.scores[i] > s }) - below
	others = len(a.scores)
	if member && equal > 0 {
		equal--
		others--
	}
	if others <= 0 {
		return 0, 0, false
	}
	return 100 * (float64(below) + 0.5*float64(equal)) / float64(others), others, true
}

// Analysis analyses the group, or returns the analysis made since it last
// changed. The group must not change while the analysis is made.
func (g *Group) Analysis() *Analysis {
	if g.analysis != nil {
		return g.analysis
	}
	n := len(g.rows)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return g.rows[order[a]].score < g.rows[order[b]].score })
	a := &Analysis{scores: make([]float64, n), better: g.better}
	for i, r := range order {
		a.scores[i] = g.rows[r].score
	}
	// The better half: above the median rank of the whole set.
	rankAll := midRanks(a.scores)
	betterHalf := make([]bool, n)
	for i, r := range order {
		betterHalf[r] = rankAll[i] > float64(n+1)/2
	}
	type test struct {
		dim, val int32
		f        Finding
	}
	var tests []test
	for d := range g.dims.names {
		dim := int32(d)
		name := g.dims.names[d]
		setting := strings.HasPrefix(name, SettingPrefix)
		// Each result's value of this fact in score order, -1 unknown.
		defaultCode := int32(-1)
		if setting {
			defaultCode = g.vals[d].intern(DefaultValue)
		}
		codes := make([]int32, 0, n)
		var scores []float64
		var half []bool
		for _, r := range order {
			c := valueOf(g.rows[r], dim)
			if c < 0 && setting && g.rows[r].known {
				c = defaultCode
			}
			if c < 0 {
				continue
			}
			codes = append(codes, c)
			scores = append(scores, g.rows[r].score)
			half = append(half, betterHalf[r])
		}
		m := len(codes)
		count := make([]int, len(g.vals[d].names))
		for _, c := range codes {
			count[c]++
		}
		var testable []int32
		for c, k := range count {
			if k >= MinResults && m-k >= MinResults {
				testable = append(testable, int32(c))
			}
		}
		if len(testable) == 0 {
			continue
		}
		ranks := midRanks(scores)
		tieTerm := tieCorrection(scores)
		var dimTests []test
		for _, c := range testable {
			var rankSum float64
			var in, out []float64
			var inHalf, outHalf int
			for i, x := range codes {
				if x == c {
					rankSum += ranks[i]
					in = append(in, scores[i])
					if half[i] {
						inHalf++
					}
				} else {
					out = append(out, scores[i])
					if half[i] {
						outHalf++
					}
				}
			}
			n1, n2 := float64(len(in)), float64(len(out))
			u := rankSum - n1*(n1+1)/2
			mean := n1 * n2 / 2
			sd := math.Sqrt(n1 * n2 / 12 * (float64(m+1) - tieTerm/float64(m*(m-1))))
			p := 1.0
			if sd > 0 {
				z := (math.Abs(u-mean) - 0.5) / sd // continuity correction
				p = math.Erfc(max(z, 0) / math.Sqrt2)
			}
			// in and out are in score order: their medians are at the middle.
			ratio := math.Exp(medianSorted(in) - medianSorted(out))
			dimTests = append(dimTests, test{dim, c, Finding{Fact: name, Value: g.vals[d].names[c], N: len(in), Others: len(out),
				Ratio: ratio, Superiority: u / (n1 * n2), BetterHalf: float64(inHalf) / n1, OthersBetterHalf: float64(outHalf) / n2, P: p}})
		}
		// A fact with two values tested is one test seen from two sides:
		// keep the side that does better.
		if len(dimTests) == 2 && len(testable) == len(nonZero(count)) {
			if dimTests[0].f.Superiority < dimTests[1].f.Superiority {
				dimTests = dimTests[1:]
			} else {
				dimTests = dimTests[:1]
			}
		}
		tests = append(tests, dimTests...)
	}
	a.Tests = len(tests)
	for _, t := range tests {
		if t.f.P < Alpha/float64(a.Tests) {
			a.Findings = append(a.Findings, t.f)
		}
	}
	sort.SliceStable(a.Findings, func(i, j int) bool {
		return math.Abs(a.Findings[i].Superiority-0.5) > math.Abs(a.Findings[j].Superiority-0.5)
	})
	if len(a.Findings) > MaxFindings {
		a.Findings = a.Findings[:MaxFindings]
	}
	g.analysis = a
	return a
}

func nonZero(count []int) []int {
	var out []int
	for _, k := range count {
		if k > 0 {
			out = append(out, k)
		}
	}
	return out
}

func valueOf(r row, dim int32) int32 {
	for _, f := range r.facts {
		if f.dim == dim {
			return f.val
		}
	}
	return -1
}

// midRanks ranks sorted scores from 1, ties sharing their mean rank.
func midRanks(sorted []float64) []float64 {
	ranks := make([]float64, len(sorted))
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		mid := float64(i+j+1) / 2 // mean of ranks i+1..j
		for k := i; k < j; k++ {
			ranks[k] = mid
		}
		i = j
	}
	return ranks
}

// tieCorrection is the sum of t³-t over the groups of t tied scores.
func tieCorrection(sorted []float64) float64 {
	var sum float64
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		t := float64(j - i)
		sum += t*t*t - t
		i = j
	}
	return sum
}

func medianSorted(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

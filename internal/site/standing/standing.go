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
	"maps"
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
	better string // "higher" or "lower"
	dims   dict
	vals   []dict // by dim
	rows   []row
	// sorted are the rows' scores, ascending, and order the rows in that
	// order: kept as rows are added, so a percentile is always exact.
	sorted []float64
	order  []int32
	// analysis is the last one made, nil after a change; findings and
	// tests are the last findings, made from found rows.
	analysis *Analysis
	findings []Finding
	tests    int
	found    int
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
	for _, k := range slices.Sorted(maps.Keys(facts)) {
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
	at := sort.Search(len(g.sorted), func(i int) bool { return g.sorted[i] > s }) // after its equals: the order of arrival
	g.sorted = slices.Insert(g.sorted, at, s)
	g.order = slices.Insert(g.order, at, int32(len(g.rows)))
	g.rows = append(g.rows, r)
	g.analysis = nil
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
	// From is how many results the findings were made from: a large set
	// analyses its facts again when it has grown by Regrow, its
	// percentiles are always of every result.
	From int
}

// Regrow is how much a set of more than RegrowFrom results grows before
// its facts are analysed again (the percentiles follow every result).
const (
	Regrow     = 0.01
	RegrowFrom = 1000
)

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
// changed. The scores of the returned analysis are its own: the group
// may change after.
func (g *Group) Analysis() *Analysis {
	if g.analysis != nil {
		return g.analysis
	}
	n := len(g.rows)
	if g.found == 0 || n <= RegrowFrom || float64(n) >= float64(g.found)*(1+Regrow) || n < g.found {
		g.findings, g.tests = g.analyse()
		g.found = n
	}
	g.analysis = &Analysis{scores: slices.Clone(g.sorted), better: g.better, Findings: g.findings, Tests: g.tests, From: g.found}
	return g.analysis
}

// analyse tests every fact's values against the others of the fact: one
// pass over the rows in score order per fact, none per value.
func (g *Group) analyse() ([]Finding, int) {
	n := len(g.rows)
	// The better half: above the median rank of the whole set.
	rankAll := midRanks(g.sorted)
	betterHalf := make([]bool, n)
	for i, r := range g.order {
		betterHalf[r] = rankAll[i] > float64(n+1)/2
	}
	var tests []Finding
	codes := make([]int32, 0, n)
	scores := make([]float64, 0, n)
	half := make([]bool, 0, n)
	for d := range g.dims.names {
		dim := int32(d)
		name := g.dims.names[d]
		setting := strings.HasPrefix(name, SettingPrefix)
		defaultCode := int32(-1)
		if setting {
			defaultCode = g.vals[d].intern(DefaultValue)
		}
		// Each known value of the fact, in score order.
		codes, scores, half = codes[:0], scores[:0], half[:0]
		for _, r := range g.order {
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
		nv := len(g.vals[d].names)
		count := make([]int, nv)
		for _, c := range codes {
			count[c]++
		}
		var testable []int32
		present := 0
		for c, k := range count {
			if k > 0 {
				present++
			}
			if k >= MinResults && m-k >= MinResults {
				testable = append(testable, int32(c))
			}
		}
		if len(testable) == 0 {
			continue
		}
		ranks := midRanks(scores)
		tieTerm := tieCorrection(scores)
		rankSum := make([]float64, nv)
		inHalf := make([]int, nv)
		halfAll := 0
		for i, c := range codes {
			rankSum[c] += ranks[i]
			if half[i] {
				inHalf[c]++
				halfAll++
			}
		}
		var dimTests []Finding
		for _, c := range testable {
			n1, n2 := float64(count[c]), float64(m-count[c])
			u := rankSum[c] - n1*(n1+1)/2
			sd := math.Sqrt(n1 * n2 / 12 * (float64(m+1) - tieTerm/float64(m*(m-1))))
			p := 1.0
			if sd > 0 {
				z := (math.Abs(u-n1*n2/2) - 0.5) / sd // continuity correction
				p = math.Erfc(max(z, 0) / math.Sqrt2)
			}
			ratio := math.Exp(medianOf(codes, scores, c, true) - medianOf(codes, scores, c, false))
			dimTests = append(dimTests, Finding{Fact: name, Value: g.vals[d].names[c], N: count[c], Others: m - count[c],
				Ratio: ratio, Superiority: u / (n1 * n2), BetterHalf: float64(inHalf[c]) / n1,
				OthersBetterHalf: float64(halfAll-inHalf[c]) / n2, P: p})
		}
		// A fact with two values tested is one test seen from two sides:
		// keep the side that does better.
		if len(dimTests) == 2 && present == 2 {
			if dimTests[0].Superiority < dimTests[1].Superiority {
				dimTests = dimTests[1:]
			} else {
				dimTests = dimTests[:1]
			}
		}
		tests = append(tests, dimTests...)
	}
	var found []Finding
	for _, f := range tests {
		if f.P < Alpha/float64(len(tests)) {
			found = append(found, f)
		}
	}
	sort.SliceStable(found, func(i, j int) bool {
		return math.Abs(found[i].Superiority-0.5) > math.Abs(found[j].Superiority-0.5)
	})
	if len(found) > MaxFindings {
		found = found[:MaxFindings]
	}
	return found, len(tests)
}

// medianOf is the median score of the rows whose code is c (in), or of
// those whose code is not (not in); codes and scores are in score order.
func medianOf(codes []int32, scores []float64, c int32, in bool) float64 {
	k := 0
	for _, x := range codes {
		if (x == c) == in {
			k++
		}
	}
	lo, hi := (k-1)/2, k/2 // the middle one, or the middle two
	var a, b float64
	i := 0
	for j, x := range codes {
		if (x == c) != in {
			continue
		}
		if i == lo {
			a = scores[j]
		}
		if i == hi {
			b = scores[j]
			break
		}
		i++
	}
	return (a + b) / 2
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

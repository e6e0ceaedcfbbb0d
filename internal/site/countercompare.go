package site

// counterCompare lays out the counters that moved from the first result's
// best run to another's (compare.Diff's, as dbmark compare prints them):
// the top ones with their typical values before and after (per second for
// rates), B/A and the effect in robust standard deviations; those that
// moved with the throughput on a line of their own.
type counterCompare struct {
	Base, Other    string
	Throughput     string
	Compared       int
	Rows           []counterCompareRow
	WithThroughput []string
}

type counterCompareRow struct{ Name, A, B, Ratio, Effect string }

// countersCompared lays out cs, each against base.
func countersCompared(base string, cs []CounterComparison) []counterCompare {
	out := make([]counterCompare, 0, len(cs))
	for _, c := range cs {
		m := c.Moves
		v := counterCompare{Base: base, Other: c.ID, Throughput: m.ThroughputText(), Compared: m.Compared,
			WithThroughput: m.WithThroughputText()}
		for _, mv := range m.Top {
			v.Rows = append(v.Rows, counterCompareRow{Name: mv.Name, A: mv.AText(), B: mv.BText(), Ratio: mv.RatioText(), Effect: mv.EffectText()})
		}
		out = append(out, v)
	}
	return out
}

// uncounted are the results after the first whose comparison has no
// counters: it or the first sampled none.
func uncounted(ids []string, cs []CounterComparison) []string {
	have := map[string]bool{}
	for _, c := range cs {
		have[c.ID] = true
	}
	var out []string
	for _, id := range ids[1:] {
		if !have[id] {
			out = append(out, id)
		}
	}
	return out
}

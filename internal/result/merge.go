package result

import "strings"

// MergeIntervals combines two neighbouring series intervals, a before b,
// into one covering both, for a long run's series kept within a number of
// points. Rates become their mean over the combined time, exactly as if
// the interval had been measured whole. Latency percentiles cannot be
// combined exactly without the histograms, so each becomes the higher of
// the two: a combined point shows the worst of the intervals it covers.
// In Extra, a name ending in "_per_s" is a rate; any other is a level, and
// the later value stays. A warm-up interval is never combined with a
// measured one.
func MergeIntervals(a, b Interval) (Interval, bool) {
	if a.Warmup != b.Warmup {
		return a, false
	}
	d := a.DurationS + b.DurationS
	if d <= 0 {
		return b, true
	}
	wa, wb := a.DurationS/d, b.DurationS/d
	mean := func(x, y float64) float64 { return x*wa + y*wb }
	m := Interval{
		T:            b.T,
		DurationS:    d,
		Warmup:       a.Warmup,
		EventsPerS:   mean(a.EventsPerS, b.EventsPerS),
		ReadsPerS:    mean(a.ReadsPerS, b.ReadsPerS),
		WritesPerS:   mean(a.WritesPerS, b.WritesPerS),
		OtherPerS:    mean(a.OtherPerS, b.OtherPerS),
		ReadMiBPerS:  mean(a.ReadMiBPerS, b.ReadMiBPerS),
		WriteMiBPerS: mean(a.WriteMiBPerS, b.WriteMiBPerS),
		ErrorsPerS:   mean(a.ErrorsPerS, b.ErrorsPerS),
		ReconnPerS:   mean(a.ReconnPerS, b.ReconnPerS),
		RetriesPerS:  mean(a.RetriesPerS, b.RetriesPerS),
		Latency:      worstPercentiles(a.Latency, b.Latency),
	}
	// The schedule lag is a mean per event.
	if ea, eb := a.EventsPerS*a.DurationS, b.EventsPerS*b.DurationS; ea+eb > 0 {
		m.LagMeanMS = (a.LagMeanMS*ea + b.LagMeanMS*eb) / (ea + eb)
	}
	if len(a.ServersEventsPerS) == len(b.ServersEventsPerS) {
		for i, v := range b.ServersEventsPerS {
			m.ServersEventsPerS = append(m.ServersEventsPerS, mean(a.ServersEventsPerS[i], v))
		}
	}
	if len(a.Extra)+len(b.Extra) > 0 {
		m.Extra = make(map[string]float64, len(b.Extra))
		for k, v := range a.Extra {
			m.Extra[k] = v
		}
		for k, v := range b.Extra {
			if av, ok := a.Extra[k]; ok && strings.HasSuffix(k, "_per_s") {
				v = mean(av, v)
			}
			m.Extra[k] = v
		}
	}
	return m, true
}

func worstPercentiles(a, b []Percentile) []Percentile {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]Percentile, len(a))
	copy(out, a)
	for i := range out {
		for _, q := range b {
			if q.P == out[i].P && q.MS > out[i].MS {
				out[i].MS = q.MS
			}
		}
	}
	return out
}

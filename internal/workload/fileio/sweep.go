package fileio

import (
	"fmt"
	"sort"
)

// plateauDrop is how far the rate must fall below the current plateau's
// level to start a new one: well above run-to-run noise, well below the
// steps between a cloud volume's cache tiers (2x and more).
const plateauDrop = 0.25

// Plateaus splits a rate series along growing file sizes into plateaus:
// runs of points at about one level. A point starts a new plateau when it
// and the point after it (if any) are both more than plateauDrop below
// the current plateau's median, so a single noisy point does not. It
// returns the index where each plateau starts (the first is 0).
func Plateaus(ys []float64) []int {
	if len(ys) == 0 {
		return nil
	}
	starts := []int{0}
	cur := []float64{ys[0]}
	for i := 1; i < len(ys); i++ {
		limit := median(cur) * (1 - plateauDrop)
		if ys[i] < limit && (i+1 == len(ys) || ys[i+1] < limit) {
			starts = append(starts, i)
			cur = cur[:0]
		}
		cur = append(cur, ys[i])
	}
	return starts
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// AnnotateSweep marks, on the file-total-size axis, the sizes where the
// rate falls to a new plateau: where the files stop fitting in a cache
// (the page cache, a cloud volume's burst or host cache).
func (w *Workload) AnnotateSweep(axis string, xs, ys []float64) []string {
	if axis != "file-total-size" || len(xs) != len(ys) || len(xs) < 2 {
		return nil
	}
	starts := Plateaus(ys)
	if len(starts) < 2 {
		return []string{fmt.Sprintf("one plateau from %s to %s: no cache tier ends in this range",
			FormatSize(int64(xs[0])), FormatSize(int64(xs[len(xs)-1])))}
	}
	var notes []string
	for k, s := range starts {
		end := len(ys)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		level := median(ys[s:end])
		note := fmt.Sprintf("plateau %d: %s to %s at about %.0f iops", k+1, FormatSize(int64(xs[s])), FormatSize(int64(xs[end-1])), level)
		if k > 0 {
			prev := median(ys[starts[k-1]:s])
			note += fmt.Sprintf(" (the rate falls %.0f%% at %s: the files no longer fit in a cache tier of about %s)",
				100*(1-level/prev), FormatSize(int64(xs[s])), FormatSize(int64(xs[s-1])))
		}
		notes = append(notes, note)
	}
	return notes
}

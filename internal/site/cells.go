package site

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site/sitestore"
	"github.com/dbmark/dbmark/internal/stats"
)

// CellStat is one cell of a sweep as the site shows it: its settings, how
// many of its runs ended ok, and the statistics of their headlines.
type CellStat struct {
	Cell map[string]string
	// Label is the cell's settings in the sweep's axis order:
	// "threads=4 mode=rndrd".
	Label   string
	Runs    int
	OK      int
	Stats   stats.Summary // of the ok runs' headlines
	Min     float64
	Max     float64
	results []*result.Result
}

// Cells are a sweep's cells in the order the sweep ran them, each with
// the statistics of its repeats; nil for a single run.
func (s *Submission) Cells() []CellStat {
	if s.Sweep == nil {
		return nil
	}
	var order []string
	by := map[string]*CellStat{}
	for _, r := range s.Runs {
		var cell map[string]string
		if r.Sweep != nil {
			cell = r.Sweep.Cell
		}
		label := cellLabel(s.Sweep, cell)
		c := by[label]
		if c == nil {
			c = &CellStat{Cell: cell, Label: label}
			by[label] = c
			order = append(order, label)
		}
		c.Runs++
		c.results = append(c.results, r)
	}
	out := make([]CellStat, 0, len(order))
	for _, label := range order {
		c := by[label]
		var vals []float64
		for _, r := range c.results {
			if r.Status == result.StatusOK {
				vals = append(vals, r.Summary.Headline)
			}
		}
		c.OK = len(vals)
		c.Stats = stats.Describe(vals)
		c.Min, c.Max = math.NaN(), math.NaN()
		if len(vals) > 0 {
			c.Min, c.Max = slices.Min(vals), slices.Max(vals)
		}
		out = append(out, *c)
	}
	return out
}

// cellLabel names a cell by its settings, in the order of the sweep's
// axes (any others after, sorted).
func cellLabel(sw *result.Sweep, cell map[string]string) string {
	var parts []string
	seen := map[string]bool{}
	for _, a := range sw.Axes {
		if v, ok := cell[a.Name]; ok {
			parts = append(parts, a.Name+"="+v)
			seen[a.Name] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cell)) {
		if !seen[k] {
			parts = append(parts, k+"="+cell[k])
		}
	}
	if len(parts) == 0 {
		return "(one cell)"
	}
	return strings.Join(parts, " ")
}

// Headline is what a submission's headline figure is: a single run's
// headline; for a sweep, the median of the repeats of its best cell (by
// that median), never one lucky repeat. Of names the cell and the number
// of repeats ("" for a single run); Run is the run that stands for it in
// lists and tables (result.Primary).
type Headline struct {
	Value float64
	Of    string
	Run   *result.Result
	Cell  *CellStat
}

// Headline picks the submission's headline (see the type).
func (s *Submission) Headline() Headline {
	cells := s.Cells()
	if cells == nil {
		return Headline{Value: s.Runs[0].Summary.Headline, Run: s.Runs[0]}
	}
	best := -1
	for i, c := range cells {
		if c.OK == 0 {
			continue
		}
		// The runs' direction: validated on each, where the sweep's record
		// may leave it out.
		if best < 0 || betterThan(s.Runs[0].Workload.Better, c.Stats.Median, cells[best].Stats.Median) {
			best = i
		}
	}
	if best < 0 {
		// No cell ended ok: the first run stands for it, named as such.
		c := cells[0]
		return Headline{Value: s.Runs[0].Summary.Headline, Run: s.Runs[0], Cell: &c,
			Of: fmt.Sprintf("%s, a run that did not end ok", c.Label)}
	}
	c := cells[best]
	h := Headline{Value: c.Stats.Median, Cell: &c, Of: fmt.Sprintf("%s, median of %d runs", c.Label, c.OK)}
	if c.OK == 1 {
		h.Of = c.Label + ", 1 run"
	}
	// The run that stands for the cell is its ok run nearest the median
	// (the lower of the two middle ones of an even count).
	dist := math.Inf(1)
	for _, r := range c.results {
		if r.Status != result.StatusOK {
			continue
		}
		if d := math.Abs(r.Summary.Headline - c.Stats.Median); d < dist {
			h.Run, dist = r, d
		}
	}
	return h
}

// namedHeadline is an entry's headline with its unit and, for a sweep,
// the cell it is the median of: "342995 tps (threads=4, median of 3 runs)".
func namedHeadline(e *sitestore.Entry) string {
	s := num(e.Headline) + " " + e.HeadlineUnit
	if e.HeadlineOf != "" {
		s += " (" + e.HeadlineOf + ")"
	}
	return s
}

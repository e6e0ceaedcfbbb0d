package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dbmark/dbmark/internal/stats"
	"github.com/dbmark/dbmark/internal/sweep"
)

// SweepCell is one cell of a sweep with the headline values of its
// finished runs.
type SweepCell struct {
	Cell   sweep.Cell
	Values []float64
}

// Sweep is what the sweep tables show.
type Sweep struct {
	Title    string // "sweep 3 (uuid): oltp_point_select on SQLite 3.46"
	Headline string // the metric's name and unit, e.g. "tps"
	Axes     []sweep.Axis
	Cells    []SweepCell
	// Rows and Cols name the axes laid out down and across; empty picks
	// the last axis as columns and the one before as rows.
	Rows, Cols string
	Notes      []string
}

// layout picks the row and column axes and the others (one table per
// combination of their values).
func (s *Sweep) layout() (rows, cols int, others []int, err error) {
	idx := func(name, flag string) (int, error) {
		for i, a := range s.Axes {
			if a.Name == name {
				return i, nil
			}
		}
		names := make([]string, len(s.Axes))
		for i, a := range s.Axes {
			names[i] = a.Name
		}
		return 0, fmt.Errorf("--%s %s: not a swept option (swept: %s)", flag, name, strings.Join(names, ", "))
	}
	rows, cols = -1, -1
	if s.Cols != "" {
		if cols, err = idx(s.Cols, "cols-by"); err != nil {
			return
		}
	}
	if s.Rows != "" {
		if rows, err = idx(s.Rows, "rows-by"); err != nil {
			return
		}
	}
	if rows >= 0 && rows == cols {
		return 0, 0, nil, fmt.Errorf("--rows-by and --cols-by both name %s", s.Rows)
	}
	n := len(s.Axes)
	if cols < 0 && n >= 2 {
		for i := n - 1; i >= 0; i-- {
			if i != rows {
				cols = i
				break
			}
		}
	}
	if rows < 0 && n >= 1 {
		for i := n - 1; i >= 0; i-- {
			if i != cols {
				rows = i
				break
			}
		}
	}
	for i := range n {
		if i != rows && i != cols {
			others = append(others, i)
		}
	}
	return rows, cols, others, nil
}

// Validate checks --rows and --cols before a sweep starts.
func (s *Sweep) Validate() error {
	_, _, _, err := s.layout()
	return err
}

func (s *Sweep) find(c sweep.Cell) *SweepCell {
	k := c.Key()
	for i := range s.Cells {
		if s.Cells[i].Cell.Key() == k {
			return &s.Cells[i]
		}
	}
	return nil
}

// entry renders a cell: "mean ± half-width (cv 1.2%)", a star when an
// outlier was flagged, "-" when nothing finished.
func entry(c *SweepCell) string {
	if c == nil || len(c.Values) == 0 {
		return "-"
	}
	st := stats.Describe(c.Values)
	if st.N == 1 {
		return num(st.Mean)
	}
	s := fmt.Sprintf("%s ± %s (cv %.1f%%)", num(st.Mean), num(st.HalfWidth), st.CV*100)
	if len(st.Outliers) > 0 {
		s += " *"
	}
	return s
}

func num(f float64) string {
	switch a := math.Abs(f); {
	case math.IsNaN(f):
		return "-"
	case a >= 100:
		return strconv.FormatFloat(f, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(f, 'f', 2, 64)
	}
	return strconv.FormatFloat(f, 'g', 3, 64)
}

// SweepText writes the tables: rows one axis, columns another, one table
// per combination of the other axes.
func SweepText(w io.Writer, s *Sweep) error {
	rows, cols, others, err := s.layout()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\n%s: mean ± 95%% confidence half-width (coefficient of variation)\n", s.Title, s.Headline)
	// Every combination of the other axes' values.
	combos := []sweep.Cell{{}}
	for _, o := range others {
		var next []sweep.Cell
		for _, c := range combos {
			for _, v := range s.Axes[o].Values {
				next = append(next, append(slices.Clone(c), sweep.Setting{Name: s.Axes[o].Name, Value: v}))
			}
		}
		combos = next
	}
	outliers := false
	for _, combo := range combos {
		fmt.Fprintln(w)
		if len(combo) > 0 {
			fmt.Fprintln(w, combo.Key())
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		cell := func(r, c int) *SweepCell {
			set := map[string]string{}
			for _, st := range combo {
				set[st.Name] = st.Value
			}
			if rows >= 0 {
				set[s.Axes[rows].Name] = s.Axes[rows].Values[r]
			}
			if cols >= 0 {
				set[s.Axes[cols].Name] = s.Axes[cols].Values[c]
			}
			return s.find(keyCell(s.Axes, set))
		}
		nr, nc := 1, 1
		head := []string{s.Headline}
		if rows >= 0 {
			nr = len(s.Axes[rows].Values)
			head[0] = s.Axes[rows].Name
		}
		if cols >= 0 {
			nc = len(s.Axes[cols].Values)
			head = append(head[:1], prefixed(s.Axes[cols].Name, s.Axes[cols].Values)...)
		} else if rows >= 0 {
			head = append(head, s.Headline)
		}
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		for r := range nr {
			var line []string
			if rows >= 0 {
				line = append(line, s.Axes[rows].Values[r])
			}
			for c := range nc {
				e := entry(cell(r, c))
				outliers = outliers || strings.HasSuffix(e, "*")
				line = append(line, e)
			}
			fmt.Fprintln(tw, strings.Join(line, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if outliers {
		fmt.Fprintln(w, "\n* a run of this cell is an outlier (modified z-score over 3.5, from the median absolute deviation)")
	}
	if len(s.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range s.Notes {
			fmt.Fprintln(w, n)
		}
	}
	return nil
}

func prefixed(name string, vals []string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = name + "=" + v
	}
	return out
}

func keyCell(axes []sweep.Axis, m map[string]string) sweep.Cell {
	c := make(sweep.Cell, len(axes))
	for i, a := range axes {
		c[i] = sweep.Setting{Name: a.Name, Value: m[a.Name]}
	}
	return c
}

// SweepCSV writes one row per cell with every statistic.
func SweepCSV(w io.Writer, s *Sweep) error {
	cw := csv.NewWriter(w)
	head := []string{}
	for _, a := range s.Axes {
		head = append(head, a.Name)
	}
	head = append(head, "metric", "n", "mean", "median", "stddev", "cv", "ci95_low", "ci95_high", "outliers", "values")
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	for _, c := range s.Cells {
		st := stats.Describe(c.Values)
		var rec []string
		for _, set := range c.Cell {
			rec = append(rec, set.Value)
		}
		vals := make([]string, len(c.Values))
		for i, v := range c.Values {
			vals[i] = f(v)
		}
		rec = append(rec, s.Headline, strconv.Itoa(st.N), f(st.Mean), f(st.Median), f(st.StdDev), f(st.CV),
			f(st.Low()), f(st.High()), strconv.Itoa(len(st.Outliers)), strings.Join(vals, " "))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

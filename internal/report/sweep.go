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

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/stats"
	"github.com/dbmark/dbmark/internal/sweep"
)

// SweepCell is one cell of a sweep with the headline values of its
// finished runs and every metric they measured.
type SweepCell struct {
	Cell   sweep.Cell
	Values []float64
	// Metrics are each metric's values over the finished runs
	// (sweep.Measures), by name; the headline's are Values.
	Metrics map[string][]float64
}

// values are the cell's values of metric m ("" or sweep.Headline: the
// headline's).
func (c *SweepCell) values(m string) []float64 {
	if m == "" || m == sweep.Headline {
		return c.Values
	}
	return c.Metrics[m]
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
	// Metric is what the tables show: a metric's name, "" for the
	// headline. Known are the metrics the cells hold, in order (the CSV's
	// columns).
	Metric string
	Known  []sweep.Metric
}

// shown names what the tables show: the headline's unit, or the metric
// and its unit ("p95 (ms)").
func (s *Sweep) shown() string {
	if s.Metric == "" || s.Metric == sweep.Headline {
		return s.Headline
	}
	for _, m := range s.Known {
		if m.Name == s.Metric && m.Unit != "" {
			return m.Name + " (" + m.Unit + ")"
		}
	}
	return s.Metric
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
func entry(c *SweepCell, metric string) string {
	if c == nil || len(c.values(metric)) == 0 {
		return "-"
	}
	st := stats.Describe(c.values(metric))
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

// sweepGrid is how the tables lay a sweep out: one table per combination
// of the other axes (combos), rows one axis and columns another (-1: none).
type sweepGrid struct {
	s          *Sweep
	rows, cols int
	others     []int
	combos     []sweep.Cell
	nr, nc     int
}

func (s *Sweep) grid() (*sweepGrid, error) {
	rows, cols, others, err := s.layout()
	if err != nil {
		return nil, err
	}
	g := &sweepGrid{s: s, rows: rows, cols: cols, others: others, combos: []sweep.Cell{{}}, nr: 1, nc: 1}
	// Every combination of the other axes' values.
	for _, o := range others {
		var next []sweep.Cell
		for _, c := range g.combos {
			for _, v := range s.Axes[o].Values {
				next = append(next, append(slices.Clone(c), sweep.Setting{Name: s.Axes[o].Name, Value: v}))
			}
		}
		g.combos = next
	}
	if rows >= 0 {
		g.nr = len(s.Axes[rows].Values)
	}
	if cols >= 0 {
		g.nc = len(s.Axes[cols].Values)
	}
	return g, nil
}

// at is the cell of combo at row r and column c, nil when it has none.
func (g *sweepGrid) at(combo sweep.Cell, r, c int) *SweepCell {
	set := map[string]string{}
	for _, st := range combo {
		set[st.Name] = st.Value
	}
	if g.rows >= 0 {
		set[g.s.Axes[g.rows].Name] = g.s.Axes[g.rows].Values[r]
	}
	if g.cols >= 0 {
		set[g.s.Axes[g.cols].Name] = g.s.Axes[g.cols].Values[c]
	}
	return g.s.find(keyCell(g.s.Axes, set))
}

// head is a table's first line: the rows' axis, then a column per value
// of the columns' axis ("transactions=10").
func (g *sweepGrid) head() []string {
	s := g.s
	head := []string{s.shown()}
	if g.rows >= 0 {
		head[0] = s.Axes[g.rows].Name
	}
	if g.cols >= 0 {
		head = append(head[:1], prefixed(s.Axes[g.cols].Name, s.Axes[g.cols].Values)...)
	} else if g.rows >= 0 {
		head = append(head, s.shown())
	}
	return head
}

// rowName is the value of the rows' axis at r, "" when there is none.
func (g *sweepGrid) rowName(r int) []string {
	if g.rows < 0 {
		return nil
	}
	return []string{g.s.Axes[g.rows].Values[r]}
}

// SweepText writes the tables: rows one axis, columns another, one table
// per combination of the other axes.
func SweepText(w io.Writer, s *Sweep) error {
	g, err := s.grid()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\n%s: mean ± 95%% confidence half-width (coefficient of variation)\n", s.Title, s.shown())
	outliers := false
	for _, combo := range g.combos {
		fmt.Fprintln(w)
		if len(combo) > 0 {
			fmt.Fprintln(w, combo.Key())
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(g.head(), "\t"))
		for r := range g.nr {
			line := g.rowName(r)
			for c := range g.nc {
				e := entry(g.at(combo, r, c), s.Metric)
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

// SweepTableCSV writes the table SweepText prints as one CSV sheet: the
// other axes' values first, then the rows' axis, then the mean of the
// metric shown (the headline unless Metric names another) in each column's
// cell (empty where no run finished). The statistics of each cell are in
// SweepCSV.
func SweepTableCSV(w io.Writer, s *Sweep) error {
	g, err := s.grid()
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	var head []string
	for _, o := range g.others {
		head = append(head, s.Axes[o].Name)
	}
	if err := cw.Write(append(head, g.head()...)); err != nil {
		return err
	}
	for _, combo := range g.combos {
		var lead []string
		for _, st := range combo {
			lead = append(lead, st.Value)
		}
		for r := range g.nr {
			line := append(slices.Clone(lead), g.rowName(r)...)
			for c := range g.nc {
				v := ""
				if cell := g.at(combo, r, c); cell != nil && len(cell.values(s.Metric)) > 0 {
					v = strconv.FormatFloat(stats.Describe(cell.values(s.Metric)).Mean, 'g', -1, 64)
				}
				line = append(line, v)
			}
			if err := cw.Write(line); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
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

// SweepCSV writes one row per cell: the axes' values, then every statistic
// of the headline (its unit in the metric column), then for each other
// metric the cells hold (Known, less the headline) its mean, 95%
// confidence interval and coefficient of variation over the cell's runs,
// in columns named after it ("p95_mean", "p95_ci95_low", "p95_ci95_high",
// "p95_cv"); empty where the cell has none.
func SweepCSV(w io.Writer, s *Sweep) error {
	cw := csv.NewWriter(w)
	head := []string{}
	for _, a := range s.Axes {
		head = append(head, a.Name)
	}
	head = append(head, "metric", "n", "mean", "median", "stddev", "cv", "ci95_low", "ci95_high", "outliers", "values")
	var more []string
	for _, m := range s.Known {
		if m.Name != sweep.Headline {
			more = append(more, m.Name)
			head = append(head, m.Name+"_mean", m.Name+"_ci95_low", m.Name+"_ci95_high", m.Name+"_cv")
		}
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, c := range s.Cells {
		st := stats.Describe(c.Values)
		var rec []string
		for _, set := range c.Cell {
			rec = append(rec, set.Value)
		}
		vals := make([]string, len(c.Values))
		for i, v := range c.Values {
			vals[i] = csvNum(v)
		}
		rec = append(rec, s.Headline, strconv.Itoa(st.N), csvNum(st.Mean), csvNum(st.Median), csvNum(st.StdDev), csvNum(st.CV),
			csvNum(st.Low()), csvNum(st.High()), strconv.Itoa(len(st.Outliers)), strings.Join(vals, " "))
		for _, m := range more {
			if vs := c.Metrics[m]; len(vs) > 0 {
				st := stats.Describe(vs)
				rec = append(rec, csvNum(st.Mean), csvNum(st.Low()), csvNum(st.High()), csvNum(st.CV))
			} else {
				rec = append(rec, "", "", "", "")
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvNum is a number as the CSV tables write it: empty when undefined.
func csvNum(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// SweepCells are the cells with every metric's values and statistics, as
// the sweep's record and its JSON export keep them.
func SweepCells(s *Sweep) []result.SweepCell {
	out := make([]result.SweepCell, 0, len(s.Cells))
	for _, c := range s.Cells {
		rc := result.SweepCell{Cell: c.Cell.Map(), Runs: len(c.Values), Metrics: []result.SweepMetric{}}
		for _, m := range s.Known {
			vs := c.values(m.Name)
			if len(vs) == 0 {
				continue
			}
			st := stats.Describe(vs)
			rc.Metrics = append(rc.Metrics, result.SweepMetric{Name: m.Name, Unit: m.Unit, Values: slices.Clone(vs),
				Mean: jsonNum(st.Mean), CI95Low: jsonNum(st.Low()), CI95High: jsonNum(st.High()), CV: jsonNum(st.CV)})
		}
		out = append(out, rc)
	}
	return out
}

// jsonNum is x for a JSON document: nil (null) when undefined.
func jsonNum(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dbmark/dbmark/internal/redact"
	"github.com/dbmark/dbmark/internal/report"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/stats"
	"github.com/dbmark/dbmark/internal/store"
	"github.com/dbmark/dbmark/internal/sweep"
	"github.com/dbmark/dbmark/internal/workload"
)

// exportFlags are the options of results export.
type exportFlags struct {
	format, series, out, dir string
	noRedact                 bool
}

// sweepCSV is one of a sweep's own CSV tables.
type sweepCSV struct {
	name  string
	write func(io.Writer, *report.Sweep) error
}

// sweepSeries are a sweep's own CSV tables, the default first.
var sweepSeries = []sweepCSV{{"table", report.SweepTableCSV}, {"cells", report.SweepCSV}}

func (ex *exportFlags) check(isSweep bool) error {
	if ex.format != "json" && ex.format != "csv" {
		return fmt.Errorf("--format %q: must be json or csv", ex.format)
	}
	if ex.dir != "" && ex.out != "" {
		return errors.New("--out-dir writes a file per table and -o one file: give one of them")
	}
	if ex.series == "" {
		return nil
	}
	if ex.format != "csv" && ex.dir == "" {
		return fmt.Errorf("--series %s: a table of the CSV export; add --format csv (JSON holds every table)", ex.series)
	}
	var names []string
	for _, s := range report.RunSeries() {
		names = append(names, s.Name)
	}
	if isSweep {
		for _, s := range sweepSeries {
			names = append(names, s.name)
		}
	}
	if !slices.Contains(names, ex.series) {
		return fmt.Errorf("--series %q: must be one of %s", ex.series, strings.Join(names, ", "))
	}
	if isSweep && ex.dir == "" && !slices.ContainsFunc(sweepSeries, func(s sweepCSV) bool { return s.name == ex.series }) {
		return fmt.Errorf("--series %s: each run of a sweep has its own; use --out-dir DIR for all of them, or export one run by its ID", ex.series)
	}
	return nil
}

// export writes a result or a sweep (sweep:ID) as results export's flags
// say.
func (a *App) export(ctx context.Context, ref string, ex *exportFlags) error {
	sref, isSweep := strings.CutPrefix(ref, "sweep:")
	if err := ex.check(isSweep); err != nil {
		return withCode(ExitUsage, err)
	}
	if !isSweep {
		return a.withResult(ctx, ref, false, func(_ store.Store, id store.ID, r *result.Result) error {
			if !ex.noRedact {
				var err error
				if r, err = redact.Result(r); err != nil {
					return err
				}
			}
			if ex.dir != "" {
				return a.writeRunTables(ex, int64(id), r)
			}
			return ex.toOutput(a.Stdout, func(w io.Writer) error {
				if ex.format == "json" {
					b, err := result.Marshal(r)
					if err != nil {
						return err
					}
					_, err = w.Write(b)
					return err
				}
				series := ex.series
				if series == "" {
					series = report.DefaultSeries(r)
				}
				for _, s := range report.RunSeries() {
					if s.Name == series {
						if !s.Has(r) {
							return fmt.Errorf("result %d has no %s series (%s); it has: %s", id, s.Name, s.About, strings.Join(seriesOf(r), ", "))
						}
						return s.Write(w, r)
					}
				}
				return nil
			})
		})
	}
	return a.withStore(ctx, func(st store.Store) error {
		sw, err := a.loadSweep(ctx, st, sref)
		if err != nil {
			return err
		}
		if !ex.noRedact {
			if err := sw.redact(); err != nil {
				return err
			}
		}
		if ex.dir != "" {
			for _, s := range sweepSeries {
				if ex.series == "" || ex.series == s.name {
					if err := a.writeTable(filepath.Join(ex.dir, fmt.Sprintf("sweep-%d-%s.csv", sw.id, s.name)), func(w io.Writer) error {
						return s.write(w, sw.table)
					}); err != nil {
						return err
					}
				}
			}
			for _, r := range sw.runs {
				if err := a.writeRunTables(ex, r.id, r.r); err != nil {
					return err
				}
			}
			return nil
		}
		return ex.toOutput(a.Stdout, func(w io.Writer) error {
			if ex.format == "json" {
				return sw.writeJSON(w)
			}
			for _, s := range sweepSeries {
				if ex.series == s.name || ex.series == "" {
					return s.write(w, sw.table)
				}
			}
			return nil
		})
	})
}

// seriesOf names the CSV tables r holds.
func seriesOf(r *result.Result) []string {
	var out []string
	for _, s := range report.RunSeries() {
		if s.Has(r) {
			out = append(out, s.Name)
		}
	}
	return out
}

// toOutput runs write on -o's file, or on stdout.
func (ex *exportFlags) toOutput(stdout io.Writer, write func(io.Writer) error) error {
	if ex.out == "" || ex.out == "-" {
		return write(stdout)
	}
	return writeFile(ex.out, write)
}

// writeFile runs write on a new file at path.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("export to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("export to %s: %w", path, err)
	}
	return nil
}

// writeRunTables writes each CSV table r holds (or the one --series names)
// into --out-dir as run-ID-SERIES.csv.
func (a *App) writeRunTables(ex *exportFlags, id int64, r *result.Result) error {
	for _, s := range report.RunSeries() {
		if (ex.series != "" && ex.series != s.Name) || !s.Has(r) {
			continue
		}
		path := filepath.Join(ex.dir, fmt.Sprintf("run-%d-%s.csv", id, s.Name))
		if err := a.writeTable(path, func(w io.Writer) error { return s.Write(w, r) }); err != nil {
			return err
		}
	}
	return nil
}

// writeTable writes one file of --out-dir (made when missing) and names it.
func (a *App) writeTable(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := writeFile(path, write); err != nil {
		return err
	}
	fmt.Fprintln(a.Stdout, path)
	return nil
}

// storedSweep is a sweep read back from the store: its record, its table
// as dbmark sweep printed it, and its runs in the order they ran.
type storedSweep struct {
	id    store.ID
	rec   *result.Sweep
	table *report.Sweep
	runs  []storedRun
}

type storedRun struct {
	id int64
	r  *result.Result
}

// loadSweep reads sweep ref (its number or UUID prefix) and rebuilds its
// table from its stored arguments and runs.
func (a *App) loadSweep(ctx context.Context, st store.Store, ref string) (*storedSweep, error) {
	id, rec, err := resolveSweep(ctx, st, ref)
	if err != nil {
		return nil, err
	}
	runs, err := loadRuns(ctx, st, []string{"sweep:" + ref})
	if err != nil {
		return nil, err
	}
	sw := &storedSweep{id: id, rec: rec}
	var results []*result.Result
	for _, r := range runs {
		sw.runs = append(sw.runs, storedRun{r.ID, r.Result})
		results = append(results, r.Result)
	}
	s, err := a.newSweepSetup(rec.Workload, rec.Args)
	if err != nil {
		return nil, err
	}
	axes := s.axes.axes()
	cells, err := sweep.Cells(axes, s.sf.zipped())
	if err != nil {
		return nil, fmt.Errorf("sweep %d: %w", id, err)
	}
	measures := map[string][][]sweep.Measure{}
	for _, r := range results {
		if r.Sweep != nil && r.Status == result.StatusOK {
			k := sweep.KeyOf(axes, r.Sweep.Cell)
			measures[k] = append(measures[k], sweep.Measures(r))
		}
	}
	sw.table = &report.Sweep{Headline: rec.Headline, Axes: axes, Rows: s.sf.rows, Cols: s.sf.cols}
	fillTable(sw.table, id, rec, s.w, cells, measures)
	// The metric the sweep was shown with, while its runs have it.
	if sweep.CheckKnown(s.sf.metric, sw.table.Known) == nil {
		sw.table.Metric = s.sf.metric
	}
	return sw, nil
}

// fillTable sets the title, the cells (with every metric of each finished
// run, measures by cell key) and the workload's notes of a sweep's table.
func fillTable(tbl *report.Sweep, id store.ID, rec *result.Sweep, w workload.Spec, cells []sweep.Cell, measures map[string][][]sweep.Measure) {
	tbl.Title = fmt.Sprintf("sweep %d (%s): %s, %s", id, rec.ID, rec.Workload, rec.Status)
	tbl.Cells = nil
	var all [][]sweep.Measure
	for _, c := range cells {
		cell := report.SweepCell{Cell: c, Metrics: map[string][]float64{}}
		for _, run := range measures[c.Key()] {
			for _, m := range run {
				if m.Name == sweep.Headline {
					cell.Values = append(cell.Values, m.Value)
				} else {
					cell.Metrics[m.Name] = append(cell.Metrics[m.Name], m.Value)
				}
			}
		}
		all = append(all, measures[c.Key()]...)
		tbl.Cells = append(tbl.Cells, cell)
	}
	tbl.Known = sweep.Known(all)
	tbl.Notes = annotate(w, tbl.Axes, tbl.Cells)
}

// redact removes what is personal from the record, the runs and the
// table's words (an axis of directories, a note naming one).
func (sw *storedSweep) redact() error {
	rec, err := redact.Sweep(sw.rec)
	if err != nil {
		return err
	}
	sw.rec = rec
	for i := range sw.runs {
		if sw.runs[i].r, err = redact.Result(sw.runs[i].r); err != nil {
			return fmt.Errorf("redact result %d: %w", sw.runs[i].id, err)
		}
	}
	t := sw.table
	for i := range t.Axes {
		t.Axes[i].Values = slices.Clone(t.Axes[i].Values)
		for j, v := range t.Axes[i].Values {
			t.Axes[i].Values[j] = redact.Text(v)
		}
	}
	for i := range t.Cells {
		c := slices.Clone(t.Cells[i].Cell)
		for j := range c {
			c[j].Value = redact.Text(c[j].Value)
		}
		t.Cells[i].Cell = c
	}
	for i, n := range t.Notes {
		t.Notes[i] = redact.Text(n)
	}
	return nil
}

// show prints the table dbmark sweep printed, then one line a run.
func (sw *storedSweep) show(w io.Writer) error {
	if err := report.SweepText(w, sw.table); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nruns (dbmark results show ID):\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCELL\tITERATION\tHEADLINE\tSTATUS")
	for _, r := range sw.runs {
		cell := ""
		if r.r.Sweep != nil {
			cell = sweep.KeyOf(sw.table.Axes, r.r.Sweep.Cell)
		}
		it := 0
		if r.r.Sweep != nil {
			it = r.r.Sweep.Iteration
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%.2f %s\t%s\n", r.id, cell, it, r.r.Summary.Headline, r.r.Summary.HeadlineUnit, r.r.Status)
	}
	return tw.Flush()
}

// sweepDoc is a sweep's JSON export: its record, its table and its runs.
type sweepDoc struct {
	Sweep *result.Sweep    `json:"sweep"`
	Table []sweepDocCell   `json:"table"`
	Runs  []*result.Result `json:"runs"`
}

// sweepDocCell is one cell of the table: the headline of each finished run
// and their statistics (null where too few runs give none), then every
// metric's.
type sweepDocCell struct {
	Cell     map[string]string    `json:"cell"`
	Values   []float64            `json:"values"`
	N        int                  `json:"n"`
	Mean     *float64             `json:"mean"`
	CI95Low  *float64             `json:"ci95_low"`
	CI95High *float64             `json:"ci95_high"`
	CV       *float64             `json:"cv"`
	Metrics  []result.SweepMetric `json:"metrics"`
}

func (sw *storedSweep) writeJSON(w io.Writer) error {
	num := func(f float64) *float64 {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return &f
	}
	doc := sweepDoc{Sweep: sw.rec, Table: []sweepDocCell{}}
	all := report.SweepCells(sw.table)
	for i, c := range sw.table.Cells {
		m := map[string]string{}
		for _, s := range c.Cell {
			m[s.Name] = s.Value
		}
		st := stats.Describe(c.Values)
		doc.Table = append(doc.Table, sweepDocCell{Cell: m, Values: append([]float64{}, c.Values...), N: st.N,
			Mean: num(st.Mean), CI95Low: num(st.Low()), CI95High: num(st.High()), CV: num(st.CV), Metrics: all[i].Metrics})
	}
	for _, r := range sw.runs {
		doc.Runs = append(doc.Runs, r.r)
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode sweep: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

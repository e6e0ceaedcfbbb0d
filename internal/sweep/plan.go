package sweep

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbmark/dbmark/internal/stats"
)

// Axis is an option swept over values, in the order given.
type Axis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// Setting is one option's value in a cell.
type Setting struct {
	Name, Value string
}

// Cell is one combination of the axes' values, in axis order.
type Cell []Setting

// Map is the cell as the result document's sweep reference holds it.
func (c Cell) Map() map[string]string {
	m := make(map[string]string, len(c))
	for _, s := range c {
		m[s.Name] = s.Value
	}
	return m
}

// Key is the cell as text, "threads=8 tables=2"; equal cells have equal keys.
func (c Cell) Key() string {
	parts := make([]string, len(c))
	for i, s := range c {
		parts[i] = s.Name + "=" + s.Value
	}
	return strings.Join(parts, " ")
}

// KeyOf is the key of the cell that map m describes, with the axes of axes.
func KeyOf(axes []Axis, m map[string]string) string {
	c := make(Cell, len(axes))
	for i, a := range axes {
		c[i] = Setting{a.Name, m[a.Name]}
	}
	return c.Key()
}

// Cells is the cross product of the axes, the first axis varying slowest.
// Axes named together in a zip group move together instead: their i-th
// values make one step, so they must have as many values each.
func Cells(axes []Axis, zip [][]string) ([]Cell, error) {
	byName := map[string]int{}
	for i, a := range axes {
		if len(a.Values) == 0 {
			return nil, fmt.Errorf("--%s has no values", a.Name)
		}
		byName[a.Name] = i
	}
	// group[i] is the zip group of axis i; an unzipped axis is its own.
	group := make([]int, len(axes))
	for i := range group {
		group[i] = i
	}
	for _, z := range zip {
		if len(z) < 2 {
			return nil, fmt.Errorf("--zip %s: name two or more swept options", strings.Join(z, ","))
		}
		first := -1
		for _, name := range z {
			i, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("--zip %s: --%s is not swept (give it a list or a range)", strings.Join(z, ","), name)
			}
			if first < 0 {
				first = i
				continue
			}
			if n, m := len(axes[first].Values), len(axes[i].Values); n != m {
				return nil, fmt.Errorf("--zip %s: --%s has %d values and --%s has %d; zipped options need as many each", strings.Join(z, ","), axes[first].Name, n, name, m)
			}
			group[i] = group[first]
		}
	}
	// Steps of each group, in the order the groups first appear.
	var order []int
	for _, g := range group {
		if !slices.Contains(order, g) {
			order = append(order, g)
		}
	}
	cells := []Cell{{}}
	for _, g := range order {
		n := len(axes[g].Values)
		var next []Cell
		for _, c := range cells {
			for k := range n {
				nc := slices.Clone(c)
				for i, a := range axes {
					if group[i] == g {
						nc = append(nc, Setting{a.Name, a.Values[k]})
					}
				}
				next = append(next, nc)
			}
		}
		cells = next
	}
	// Settings back in axis order, whatever the grouping.
	for _, c := range cells {
		slices.SortStableFunc(c, func(x, y Setting) int { return byName[x.Name] - byName[y.Name] })
	}
	return cells, nil
}

// Policy says how many times a cell runs.
type Policy struct {
	// Iterations is the number of runs, or with UntilCV the least number.
	Iterations int
	// UntilCV, when above 0, repeats a cell until the coefficient of
	// variation of its headline falls to it (a fraction: 0.03 for 3%)...
	UntilCV float64
	// ...or MaxIterations runs have been made.
	MaxIterations int
}

// Validate checks the policy, naming the flag at fault.
func (p Policy) Validate() error {
	if p.Iterations < 1 {
		return fmt.Errorf("--iterations %d: must be 1 or more", p.Iterations)
	}
	if p.UntilCV < 0 || p.UntilCV >= 1 || math.IsNaN(p.UntilCV) {
		return fmt.Errorf("--until-cv %g%%: must be between 0%% and 100%%", p.UntilCV*100)
	}
	if p.UntilCV > 0 && p.MaxIterations < max(p.Iterations, 2) {
		return fmt.Errorf("--max-iterations %d: must be at least --iterations (%d) and 2 with --until-cv", p.MaxIterations, p.Iterations)
	}
	return nil
}

// More reports whether a cell whose finished runs measured values needs
// another run.
func (p Policy) More(values []float64) bool {
	n := len(values)
	if n < p.Iterations {
		return true
	}
	if p.UntilCV <= 0 || n >= p.MaxIterations {
		return false
	}
	cv := stats.Describe(values).CV
	return math.IsNaN(cv) || cv > p.UntilCV
}

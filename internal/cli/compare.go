package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbmark/dbmark/internal/compare"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/store"
	"github.com/dbmark/dbmark/internal/sweep"
)

func (a *App) compareCmd() *cobra.Command {
	var counters int
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare two runs or sweeps: each metric's ratio B/A with its confidence interval and a verdict, and what differed",
		Long: `A and B are each a run (its id or uuid prefix, as "results show" takes) or a sweep
(sweep:ID, with the sweep's id or uuid prefix). With repeats on both sides, each metric is tested
with Welch's t-test over the runs; with one run a side, over batch means of the interval series.
Two sweeps are compared cell by cell. Runs of a query suite (query, wisconsin) are also compared
query by query: each query's cold, hot and median times, the ratio B/A of its mean time (lower is
better) with a test over its iterations, and the geometric mean of the queries' ratios.
After the metrics come the sampled OS and engine counters whose typical per-second rates moved
most between the sides (in robust standard deviations), those that only moved with the
throughput named apart.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return withCode(ExitUsage, errors.New("compare needs two runs or sweeps: dbmark compare A B (a run id, or sweep:ID)"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd.Context(), func(st store.Store) error {
				ctx := cmd.Context()
				sa, err := loadSide(ctx, st, args[0])
				if err != nil {
					return err
				}
				sb, err := loadSide(ctx, st, args[1])
				if err != nil {
					return err
				}
				if sa.workload != sb.workload {
					return fmt.Errorf("%s is %s and %s is %s: compare runs of the same workload", args[0], sa.workload, args[1], sb.workload)
				}
				pairs := matchCells(sa, sb)
				if len(pairs) == 0 {
					return fmt.Errorf("%s and %s have no cell in common to compare (give cells of the same options, or two runs)", args[0], args[1])
				}
				fmt.Fprintf(a.Stdout, "A: %s\nB: %s\n", sa.label, sb.label)
				first := pairs[0]
				diff := compare.Diff(first.a[0], first.b[0])
				compare.WriteNotComparable(a.Stdout, diff)
				compare.WriteNotDurable(a.Stdout, compare.NotDurable([]string{"A", "B"}, []*result.Result{first.a[0], first.b[0]}, a.Targets.Unsafe))
				for _, p := range pairs {
					if p.title != "" {
						fmt.Fprintf(a.Stdout, "\n%s\n", p.title)
					}
					compare.Write(a.Stdout, compare.Of(p.a, p.b))
					if counters > 0 {
						compare.WriteCounters(a.Stdout, compare.Counters(p.a, p.b, counters))
					}
					if compare.QueryResults(append(slices.Clone(p.a), p.b...)...) {
						compare.WriteQueries(a.Stdout, compare.QueriesOf(p.a, p.b))
					}
				}
				compare.WriteDiff(a.Stdout, diff)
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&counters, "counters", compare.TopCounters, "how many of the counters that moved most to list (0: none)")
	return cmd
}

// side is one argument of compare: the finished runs of a run or a sweep,
// by cell.
type side struct {
	label, workload string
	cells           map[string][]*result.Result // by cell key ("" for a lone run)
	order           []string
}

func loadSide(ctx context.Context, st store.Store, ref string) (*side, error) {
	if sref, ok := strings.CutPrefix(ref, "sweep:"); ok {
		rec, err := getSweep(ctx, st, sref)
		if err != nil {
			return nil, err
		}
		runs, err := st.SweepRuns(ctx, rec.ID)
		if err != nil {
			return nil, err
		}
		axes := make([]sweep.Axis, len(rec.Axes))
		for i, ax := range rec.Axes {
			axes[i] = sweep.Axis{Name: ax.Name, Values: ax.Values}
		}
		s := &side{label: fmt.Sprintf("sweep %s (%s), %s", sref, rec.ID, rec.Workload), workload: rec.Workload, cells: map[string][]*result.Result{}}
		for _, r := range runs {
			if r.Status != result.StatusOK || r.Sweep == nil {
				continue
			}
			k := sweep.KeyOf(axes, r.Sweep.Cell)
			if _, seen := s.cells[k]; !seen {
				s.order = append(s.order, k)
			}
			s.cells[k] = append(s.cells[k], r)
		}
		if len(s.order) == 0 {
			return nil, fmt.Errorf("sweep %s has no finished run to compare", sref)
		}
		return s, nil
	}
	id, err := st.Resolve(ctx, ref)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no result %q (see: dbmark results list; a sweep is sweep:ID)", ref)
	}
	if err != nil {
		return nil, err
	}
	r, err := st.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return &side{label: fmt.Sprintf("run %d (%s), %s, %s", id, r.ID, r.Workload.Name, r.Status), workload: r.Workload.Name,
		cells: map[string][]*result.Result{"": {r}}, order: []string{""}}, nil
}

type cellPair struct {
	title string
	a, b  []*result.Result
}

// matchCells pairs the cells of a and b with the same options; two sides
// of one cell each are compared whatever their cells.
func matchCells(a, b *side) []cellPair {
	if len(a.order) == 1 && len(b.order) == 1 {
		title := ""
		if a.order[0] != b.order[0] {
			title = strings.TrimSpace(a.order[0] + " vs " + b.order[0])
		} else {
			title = a.order[0]
		}
		return []cellPair{{title, a.cells[a.order[0]], b.cells[b.order[0]]}}
	}
	var out []cellPair
	for _, k := range a.order {
		if rb, ok := b.cells[k]; ok {
			out = append(out, cellPair{k, a.cells[k], rb})
		}
	}
	return out
}

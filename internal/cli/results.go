package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dbmark/dbmark/internal/dips"
	"github.com/dbmark/dbmark/internal/report"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/saturation"
	"github.com/dbmark/dbmark/internal/store"
	"github.com/dbmark/dbmark/internal/sweep"
)

func (a *App) resultsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "results", Short: "List, show, export, import and delete stored results"}
	var f store.Filter
	var all bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List stored results, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(st store.Store) error {
				// All that match, to say how many a limit left out.
				q := f
				q.Limit = 0
				rows, err := st.List(cmd.Context(), q)
				if err != nil {
					return err
				}
				total := len(rows)
				if !all && f.Limit > 0 && total > f.Limit {
					rows = rows[:f.Limit]
				}
				tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tWHEN\tWORKLOAD\tTARGET\tHEADLINE\tSTATUS")
				for _, r := range rows {
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.2f %s\t%s\n", r.ID, r.StartedAt.Local().Format("2006-01-02 15:04:05"),
						r.Workload, r.Target, r.Headline, r.HeadlineUnit, r.Status)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				if len(rows) < total {
					fmt.Fprintf(a.Stdout, "showing the newest %d of %d; --limit N or --all for more\n", len(rows), total)
				}
				return nil
			})
		},
	}
	list.Flags().StringVar(&f.Workload, "workload", "", "only this workload")
	list.Flags().StringVar(&f.Status, "status", "", "only this status: ok, degraded, interrupted or failed")
	list.Flags().IntVar(&f.Limit, "limit", 50, "at most this many (0: all)")
	list.Flags().BoolVar(&all, "all", false, "every one (as --limit 0)")

	var showMetric string
	show := &cobra.Command{
		Use:   "show ID|sweep:ID",
		Short: "Print a stored result's summary, or a sweep's table and runs",
		Args:  exactlyOne("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ref, ok := strings.CutPrefix(args[0], "sweep:"); ok {
				return a.withStore(cmd.Context(), func(st store.Store) error {
					sw, err := a.loadSweep(cmd.Context(), st, ref)
					if err != nil {
						return err
					}
					if showMetric != "" {
						showMetric = headlineAlias(showMetric, sw.rec.Headline)
						if err := sweep.CheckKnown(showMetric, sw.table.Known); err != nil {
							return withCode(ExitUsage, err)
						}
						sw.table.Metric = showMetric
					}
					return sw.show(a.Stdout)
				})
			}
			if showMetric != "" {
				return withCode(ExitUsage, errors.New("--metric picks what a sweep's table shows: give sweep:ID"))
			}
			return a.withResult(cmd.Context(), args[0], false, func(_ store.Store, _ store.ID, r *result.Result) error {
				if r.Summary.Dips == nil {
					// Kept before dips were looked for: looked for now.
					r.Summary.Dips = dips.Find(r)
				}
				if r.Summary.Saturated == nil {
					r.Summary.Saturated = saturation.Find(r)
				}
				report.Summary(a.Stdout, r)
				return nil
			})
		},
	}

	show.Flags().StringVar(&showMetric, "metric", "", "for a sweep, what the table shows: headline (default), p95, mean, qps, op:NAME... (dbmark sweep --help)")

	var ex exportFlags
	export := &cobra.Command{
		Use:   "export ID|sweep:ID",
		Short: "Export a stored result or sweep as JSON (the whole document) or CSV (one table a file)",
		Long: `Export a result as JSON, the whole document, or as CSV, one table at a time (--series):
  intervals  one row per interval: rates, errors, latency percentiles, the workload's own figures (default)
  rows       one row per row mark (iibench): insert and query rates and latencies, table size, against rows
  counters   one row per sample time, one column per OS or engine counter
  queries    a query suite's runs: one row per iteration, one column per query (its default)
  ops        one row per operation (a script's statements, a test's queries): count, rate, latency, text
A sweep (sweep:ID) exports as JSON with its record, its table and all its runs, or as CSV:
  table      the table dbmark sweep prints (e.g. tpcb's clients x transactions), the mean of each cell (default)
  cells      one row per cell with every statistic of every metric (dbmark sweep --format csv)
--out-dir DIR writes every table there is as its own CSV file (a sweep's, and each of its runs'),
named run-ID-SERIES.csv and sweep-ID-SERIES.csv, and prints their names.
Host names, addresses, user names and paths are removed unless --no-redact.`,
		Args: exactlyOne("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.export(cmd.Context(), args[0], &ex)
		},
	}
	export.Flags().StringVar(&ex.format, "format", "json", "json or csv")
	export.Flags().StringVar(&ex.series, "series", "", "with --format csv, the table: intervals (default), rows, counters, queries (a query suite's default) or ops (one row per operation); for a sweep: table (default) or cells")
	export.Flags().StringVarP(&ex.out, "output", "o", "", "write to this file instead of standard output")
	export.Flags().StringVar(&ex.dir, "out-dir", "", "write every table as its own CSV file in this directory")
	export.Flags().BoolVar(&ex.noRedact, "no-redact", false, "keep host names, addresses, serial numbers, user names and paths (for your own use only)")

	del := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a stored result",
		Args:  exactlyOne("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withResult(cmd.Context(), args[0], true, func(st store.Store, id store.ID, r *result.Result) error {
				if err := st.Delete(cmd.Context(), id); err != nil {
					return err
				}
				fmt.Fprintf(a.Stdout, "deleted result %d (%s %s)\n", id, r.Workload.Name, r.StartedAt.Local().Format("2006-01-02 15:04:05"))
				return nil
			})
		},
	}
	imp := &cobra.Command{
		Use:   "import FILE",
		Short: "Store results exported on another machine (results export's JSON), keeping their context",
		Long: `Store the results of a JSON document that dbmark results export wrote, a run's or a
sweep's (sweep:ID), or that run --json wrote, so that results from another machine can be listed,
shown, compared and reported here beside your own. Each keeps its machine, target and settings;
a run whose id is already stored is left as it is. FILE may be - for standard input.`,
		Args: exactlyOne("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.importResults(cmd.Context(), args[0])
		},
	}
	cmd.AddCommand(list, show, export, imp, del)
	return cmd
}

func exactlyOne(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return withCode(ExitUsage, fmt.Errorf("%s needs exactly one %s (see: dbmark results list)", cmd.CommandPath(), what))
		}
		return nil
	}
}

// withStore runs fn on the store opened for reading: listing, showing and
// exporting work on a full disk and never change the store's file.
func (a *App) withStore(ctx context.Context, fn func(store.Store) error) error {
	return a.useStore(ctx, store.OpenRead, fn)
}

func (a *App) useStore(ctx context.Context, open func(context.Context, string, *slog.Logger) (store.Store, error), fn func(store.Store) error) error {
	st, err := open(ctx, a.storeDSN, a.Logger)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	defer st.Close()
	if err := fn(st); err != nil {
		return withCode(ExitUsage, err)
	}
	return nil
}

// withResult runs fn on the result ref names, the store opened for
// writing when write is set.
func (a *App) withResult(ctx context.Context, ref string, write bool, fn func(store.Store, store.ID, *result.Result) error) error {
	open := store.OpenRead
	if write {
		open = store.Open
	}
	return a.useStore(ctx, open, func(st store.Store) error {
		id, err := st.Resolve(ctx, ref)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no result %q (see: dbmark results list)", ref)
			}
			return err
		}
		r, err := st.Get(ctx, id)
		if err != nil {
			return err
		}
		return fn(st, id, r)
	})
}

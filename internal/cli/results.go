package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dbmark/dbmark/internal/redact"
	"github.com/dbmark/dbmark/internal/report"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/store"
)

func (a *App) resultsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "results", Short: "List, show, export and delete stored results"}
	var f store.Filter
	list := &cobra.Command{
		Use:   "list",
		Short: "List stored results, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(st store.Store) error {
				rows, err := st.List(cmd.Context(), f)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tWHEN\tWORKLOAD\tTARGET\tHEADLINE\tSTATUS")
				for _, r := range rows {
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.2f %s\t%s\n", r.ID, r.StartedAt.Local().Format("2006-01-02 15:04:05"),
						r.Workload, r.Target, r.Headline, r.HeadlineUnit, r.Status)
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().StringVar(&f.Workload, "workload", "", "only this workload")
	list.Flags().StringVar(&f.Status, "status", "", "only this status: ok, interrupted or failed")
	list.Flags().IntVar(&f.Limit, "limit", 50, "at most this many (0: all)")

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print a stored result's summary",
		Args:  exactlyOne("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withResult(cmd.Context(), args[0], false, func(_ store.Store, _ store.ID, r *result.Result) error {
				report.Summary(a.Stdout, r)
				return nil
			})
		},
	}

	var format, out string
	var noRedact bool
	export := &cobra.Command{
		Use:   "export ID",
		Short: "Export a stored result as JSON (the whole document) or CSV (the interval series)",
		Args:  exactlyOne("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "json" && format != "csv" {
				return withCode(ExitUsage, fmt.Errorf("--format %q: must be json or csv", format))
			}
			return a.withResult(cmd.Context(), args[0], false, func(_ store.Store, _ store.ID, r *result.Result) error {
				if !noRedact {
					var err error
					if r, err = redact.Result(r); err != nil {
						return err
					}
				}
				w := a.Stdout
				if out != "" && out != "-" {
					if format == "json" {
						return result.WriteFile(out, r)
					}
					fh, err := os.Create(out)
					if err != nil {
						return err
					}
					defer fh.Close()
					w = fh
				}
				if format == "csv" {
					return report.SeriesCSV(w, r)
				}
				b, err := result.Marshal(r)
				if err != nil {
					return err
				}
				_, err = w.Write(b)
				return err
			})
		},
	}
	export.Flags().StringVar(&format, "format", "json", "json or csv")
	export.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of standard output")
	export.Flags().BoolVar(&noRedact, "no-redact", false, "keep host names, addresses, serial numbers, user names and paths (for your own use only)")

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
	cmd.AddCommand(list, show, export, del)
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

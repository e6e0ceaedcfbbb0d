package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbmark/dbmark/internal/buildinfo"
	"github.com/dbmark/dbmark/internal/redact"
	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/store"
)

func (a *App) reportCmd() *cobra.Command {
	var out, title string
	var redactIt bool
	cmd := &cobra.Command{
		Use:   "report ID... [-o report.html]",
		Short: "Write stored runs (or every run of a sweep) as one self-contained HTML report with charts",
		Long: `Write one HTML file that opens offline and prints: a summary table, charts over time, latency
distributions, sweep charts and counters, and the configuration and environment of each run.
An ID is a result's number or UUID prefix (see: dbmark results list), or a sweep as sweep:ID
(its number or UUID prefix) or by its UUID, which stands for all of its runs. Several IDs are drawn on shared axes.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return withCode(ExitUsage, errors.New("usage: dbmark report ID... [-o report.html] (IDs from: dbmark results list)"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			lib, err := htmlreport.ChartLibrary()
			if err != nil {
				return withCode(ExitUsage, err)
			}
			return a.withStore(cmd.Context(), func(st store.Store) error {
				runs, err := loadRuns(cmd.Context(), st, args)
				if err != nil {
					return err
				}
				if redactIt {
					for i := range runs {
						if runs[i].Result, err = redact.Result(runs[i].Result); err != nil {
							return fmt.Errorf("redact result %d: %w", runs[i].ID, err)
						}
					}
				}
				if err := writeReport(out, runs, htmlreport.Options{Title: title, Library: lib}); err != nil {
					return err
				}
				fmt.Fprintf(a.Stdout, "report of %d run(s) written to %s\n", len(runs), out)
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "report.html", "the HTML file to write")
	cmd.Flags().StringVar(&title, "title", "", "the report's title (default: dbmark report)")
	cmd.Flags().BoolVar(&redactIt, "redact", false, "remove host names, addresses, serial numbers, user names and paths, as results export does: for a report to share")
	return cmd
}

// loadRuns resolves each reference as `results show` does, or as a sweep's
// ID standing for all its runs, in the order given and without repeats.
func loadRuns(ctx context.Context, st store.Store, refs []string) ([]htmlreport.Run, error) {
	var runs []htmlreport.Run
	seen := map[store.ID]bool{}
	add := func(id store.ID) error {
		if seen[id] {
			return nil
		}
		seen[id] = true
		r, err := st.Get(ctx, id)
		if err != nil {
			return fmt.Errorf("read result %d: %w", id, err)
		}
		runs = append(runs, htmlreport.Run{ID: int64(id), Result: r})
		return nil
	}
	for _, ref := range refs {
		sref, isSweep := strings.CutPrefix(ref, "sweep:")
		if isSweep {
			// sweep:ID, as compare takes it: the sweep's number or UUID prefix.
			rec, err := getSweep(ctx, st, sref)
			if err != nil {
				return nil, err
			}
			ref = rec.ID
		}
		id, err := st.Resolve(ctx, ref)
		if err == nil {
			if err := add(id); err != nil {
				return nil, err
			}
			continue
		}
		if errors.Is(err, store.ErrAmbiguous) {
			return nil, err
		}
		// Not a run (or not even a run's form of reference): a sweep's ID?
		sweep, lerr := st.List(ctx, store.Filter{SweepID: ref})
		if lerr != nil {
			return nil, lerr
		}
		if len(sweep) == 0 && isSweep {
			return nil, fmt.Errorf("sweep %s has no stored run: it stopped before its first run ended (resume it with: dbmark sweep --resume %s)", sref, sref)
		}
		if len(sweep) == 0 {
			return nil, fmt.Errorf("no result or sweep %q (see: dbmark results list)", ref)
		}
		// List is newest first; a sweep reads best in the order it ran.
		for i := len(sweep) - 1; i >= 0; i-- {
			if err := add(sweep[i].ID); err != nil {
				return nil, err
			}
		}
	}
	return runs, nil
}

// writeReport renders runs into path through a temporary file, so a failed
// render never leaves half a report behind.
func writeReport(path string, runs []htmlreport.Run, opt htmlreport.Options) error {
	bi := buildinfo.Get()
	opt.Tool = "dbmark " + bi.Version
	if opt.Generated.IsZero() {
		opt.Generated = time.Now()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	defer os.Remove(f.Name()) // no-op after the rename
	if err := htmlreport.Render(f, runs, opt); err != nil {
		f.Close()
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return nil
}

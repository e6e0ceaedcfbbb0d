package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/dbmark/dbmark/internal/buildinfo"
	"github.com/dbmark/dbmark/internal/dips"
	"github.com/dbmark/dbmark/internal/merge"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/store"
)

// mergeCmd is dbmark merge: one result of several hosts' results of the
// same work (internal/merge).
func (a *App) mergeCmd() *cobra.Command {
	var out string
	var save bool
	cmd := &cobra.Command{
		Use:   "merge RESULT...",
		Short: "Merge the results of several client hosts' runs of the same work into one",
		Long: `Merge the results of several client hosts' runs of the same workload and work
options (started together with run --start-at) into one result, as if one client
had run all their clients. A RESULT is a stored result's id or a JSON file that
run --json or results export wrote. Latency percentiles are exact: the hosts'
histograms are merged bucket by bucket. The merged result goes to -o, to the
results store with --save, or to standard output.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if out != "" {
				if err := result.CheckWritable(out); err != nil {
					return withCode(ExitUsage, fmt.Errorf("-o %s: %w", out, err))
				}
			}
			rs, err := a.mergeInputs(ctx, args)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			m, err := merge.Merge(rs)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			bi := buildinfo.Get()
			m.ID = uuid.NewString()
			m.Tool = result.Tool{Name: "dbmark", Version: bi.Version, Revision: bi.Revision, Go: bi.Go}
			m.Command = redactArgs(append([]string{"dbmark"}, a.Args...))
			m.Summary.Dips = dips.Find(m)
			return a.keepMerged(ctx, m, out, save)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the merged result to this JSON file")
	cmd.Flags().BoolVar(&save, "save", false, "keep the merged result in the results store (--store names it)")
	return cmd
}

// mergeInputs reads each RESULT: a file when one of that name exists,
// else a stored result's id. The store is opened only when one is named.
func (a *App) mergeInputs(ctx context.Context, args []string) ([]*result.Result, error) {
	if len(args) < 2 {
		return nil, fmt.Errorf("merge needs the results of at least two hosts (got %d): give their ids or JSON files", len(args))
	}
	rs := make([]*result.Result, len(args))
	var refs []int
	for i, arg := range args {
		f, err := os.Open(arg)
		if errors.Is(err, os.ErrNotExist) || (err == nil && isDir(f)) {
			if f != nil {
				f.Close()
			}
			refs = append(refs, i)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		r, err := result.Read(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("merge %s: %w (give a file run --json or results export wrote)", arg, err)
		}
		rs[i] = r
	}
	if len(refs) == 0 {
		return rs, nil
	}
	st, err := store.OpenRead(ctx, a.storeDSN, a.Logger)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for _, i := range refs {
		id, err := st.Resolve(ctx, args[i])
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("merge: no file and no stored result %q (see: dbmark results list)", args[i])
		}
		if err != nil {
			return nil, err
		}
		if rs[i], err = st.Get(ctx, id); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

func isDir(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.IsDir()
}

// keepMerged writes the merged result where it was asked: -o, the store,
// or standard output when neither.
func (a *App) keepMerged(ctx context.Context, m *result.Result, out string, save bool) error {
	if out == "" && !save {
		b, err := result.Marshal(m)
		if err != nil {
			return err
		}
		_, err = a.Stdout.Write(b)
		return err
	}
	hosts := make([]string, len(m.Clients))
	for i, c := range m.Clients {
		hosts[i] = c.ID
	}
	fmt.Fprintf(a.Stdout, "merged %d results (%s): %d events, %.2f %s, %d clients\n", len(m.Clients), strings.Join(hosts, ", "),
		m.Summary.Events, m.Summary.Headline, m.Summary.HeadlineUnit, m.Run.Threads)
	if out != "" {
		if err := result.WriteFile(out, m); err != nil {
			return withCode(ExitRunFailed, err)
		}
		fmt.Fprintf(a.Stdout, "written to %s (%s)\n", out, m.ID)
	}
	if save {
		st, err := store.Open(ctx, a.storeDSN, a.Logger)
		if err != nil {
			return withCode(ExitUsage, err)
		}
		defer st.Close()
		id, err := st.Save(ctx, m)
		if err != nil {
			return withCode(ExitRunFailed, err)
		}
		fmt.Fprintf(a.Stdout, "result %d saved (%s)\n", id, m.ID)
	}
	return nil
}

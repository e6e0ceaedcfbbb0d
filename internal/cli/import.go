package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/store"
)

// importLimit bounds a document read by results import: the largest
// result documents (hours of intervals, every counter) are tens of MB.
const importLimit = 1 << 30

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// importDoc is what results import reads: a result document (run --json,
// results export ID) or a sweep's export (results export sweep:ID), told
// apart by the sweep export's "runs" member.
type importDoc struct {
	sweep *result.Sweep
	runs  []*result.Result
}

// parseImport decodes b as a result or a sweep export; anything else is
// refused with what it is not.
func parseImport(b []byte) (*importDoc, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, errors.New("not a dbmark result: not a JSON object (export one with: dbmark results export ID)")
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("not a dbmark result: %v", err)
	}
	if _, ok := probe["runs"]; ok {
		var d sweepDoc
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("not a dbmark sweep export: %v", err)
		}
		if d.Sweep == nil || !uuidRE.MatchString(d.Sweep.ID) || len(d.Runs) == 0 {
			return nil, errors.New("not a dbmark sweep export: it needs a sweep with an id and its runs (results export sweep:ID writes one)")
		}
		for i, r := range d.Runs {
			if err := checkImported(r); err != nil {
				return nil, fmt.Errorf("run %d of the sweep: %w", i+1, err)
			}
			if r.Sweep == nil || r.Sweep.ID != d.Sweep.ID {
				return nil, fmt.Errorf("run %d of the sweep: not a run of sweep %s", i+1, d.Sweep.ID)
			}
		}
		return &importDoc{sweep: d.Sweep, runs: d.Runs}, nil
	}
	if _, ok := probe["schema_version"]; !ok {
		return nil, errors.New("not a dbmark result: no schema_version (export one with: dbmark results export ID)")
	}
	r, err := result.Unmarshal(b)
	if err != nil {
		return nil, fmt.Errorf("not a dbmark result: %w", err)
	}
	if err := checkImported(r); err != nil {
		return nil, err
	}
	return &importDoc{runs: []*result.Result{r}}, nil
}

// checkImported refuses a document that decodes but lacks what the store
// and every reader rely on.
func checkImported(r *result.Result) error {
	switch {
	case r == nil:
		return errors.New("not a dbmark result: empty")
	case !uuidRE.MatchString(r.ID):
		return fmt.Errorf("not a dbmark result: id %q is not a UUID", r.ID)
	case r.Workload.Name == "":
		return errors.New("not a dbmark result: no workload")
	case r.StartedAt.IsZero():
		return errors.New("not a dbmark result: no start time")
	case r.Status == "":
		return errors.New("not a dbmark result: no status")
	}
	return nil
}

// importResults stores the results of the document at path ("-": standard
// input) as they are: their machine, target and settings stay theirs. A
// run already stored (the same UUID) is left as it is and named.
func (a *App) importResults(ctx context.Context, path string) error {
	var in io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return withCode(ExitUsage, fmt.Errorf("import %s: %w (give the file results export wrote)", path, errors.Unwrap(err)))
		}
		defer f.Close()
		in = f
	}
	b, err := io.ReadAll(io.LimitReader(in, importLimit))
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("import: read %s: %w", path, err))
	}
	doc, err := parseImport(b)
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("import %s: %w", path, err))
	}
	// The default store's directory is made as a run makes it: importing
	// may be the first thing a user does on this machine.
	if a.storeDSN == "" {
		dir, err := store.DataDir()
		if err != nil {
			return withCode(ExitUsage, fmt.Errorf("import: no data directory for the store: %w", err))
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("import: create data directory: %w", err)
		}
	}
	return a.useStore(ctx, store.Open, func(st store.Store) error {
		if doc.sweep != nil {
			if id, err := st.ResolveSweep(ctx, doc.sweep.ID); err == nil {
				fmt.Fprintf(a.Stdout, "sweep %s is already stored as sweep %d\n", doc.sweep.ID[:8], id)
			} else if !errors.Is(err, store.ErrSweepNotFound) {
				return err
			} else if id, err = st.SaveSweep(ctx, doc.sweep); err != nil {
				return fmt.Errorf("import sweep %s: %w", doc.sweep.ID[:8], err)
			} else {
				fmt.Fprintf(a.Stdout, "imported sweep %s as sweep %d\n", doc.sweep.ID[:8], id)
			}
		}
		for _, r := range doc.runs {
			id, err := st.Resolve(ctx, r.ID)
			if err == nil {
				fmt.Fprintf(a.Stdout, "result %s is already stored as %d\n", r.ID[:8], id)
				continue
			}
			if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if id, err = st.Save(ctx, r); err != nil {
				return fmt.Errorf("import result %s: %w", r.ID[:8], err)
			}
			fmt.Fprintf(a.Stdout, "imported result %s as %d (%s on %s, %s)\n", r.ID[:8], id, r.Workload.Name, r.Target.Kind,
				r.StartedAt.Local().Format("2006-01-02 15:04:05"))
		}
		return nil
	})
}

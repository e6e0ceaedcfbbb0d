package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbmark/dbmark/internal/buildinfo"
	"github.com/dbmark/dbmark/internal/redact"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site"
	"github.com/dbmark/dbmark/internal/store"
)

// ExitUnavailable is submit's code when the server could not take the
// result now (down, unreachable, rate-limited, failing): trying again
// later may work, unlike a refusal (ExitUsage).
const ExitUnavailable = 3

func (a *App) submitCmd() *cobra.Command {
	var server, note, reproduces string
	var tags []string
	var dryRun bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "submit ID|sweep:ID|last|sweep:last... --server URL [--dry-run] [--note TEXT] [--tag key=value]",
		Short: "Publish stored results on a results site, redacted as results export does",
		Long: `Publish results on a dbmark results site (dbmark serve) and print each one's permalink.
Each result is redacted first exactly as dbmark results export does: host names, addresses, serial
numbers, user names, paths and credentials are removed. --dry-run prints the exact bytes that
would be sent and sends nothing. A sweep (sweep:ID) is published as one entry with all its runs.
"last" is the newest stored run, "sweep:last" the sweep of the newest run. Submitting the same result again prints the same permalink.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return withCode(ExitUsage, errors.New("usage: dbmark submit ID|sweep:ID... --server URL (IDs from: dbmark results list)"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			endpoint, err := submitEndpoint(server, dryRun)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			client, err := siteClient(timeout)
			if err != nil {
				return err
			}
			tagMap, err := parseTags(tags)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			var bodies [][]byte
			err = a.withStore(ctx, func(st store.Store) error {
				for _, ref := range args {
					sub, removed, err := submissionOf(ctx, st, ref)
					if err != nil {
						return err
					}
					sub.Note, sub.Tags, sub.Reproduces = note, tagMap, reproduces
					b, err := json.Marshal(sub)
					if err != nil {
						return fmt.Errorf("encode %s: %w", ref, err)
					}
					// The site's own checks, here: what it would refuse is
					// refused before anything is sent, on a dry run too.
					if _, err := site.Decode(b); err != nil {
						return withCode(ExitUsage, refusal(ref, err))
					}
					if dryRun {
						dryRunNote(a.Stderr, ref, removed)
					}
					bodies = append(bodies, append(b, '\n'))
				}
				return nil
			})
			if err != nil {
				return err
			}
			if dryRun {
				for _, b := range bodies {
					if _, err := a.Stdout.Write(b); err != nil {
						return err
					}
				}
				return nil
			}
			for i, b := range bodies {
				ans, err := post(ctx, client, timeout, endpoint, b)
				if err != nil {
					return fmt.Errorf("submit %s: %w", args[i], err)
				}
				fmt.Fprintln(a.Stdout, ans.URL)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&server, "server", "", "the results site, e.g. https://results.example.org")
	f.BoolVar(&dryRun, "dry-run", false, "print the exact bytes that would be sent, and send nothing")
	f.StringVar(&note, "note", "", "a note shown with the result (checked like the result: nothing personal)")
	f.StringArrayVar(&tags, "tag", nil, "a key=value tag shown with the result (repeatable)")
	f.StringVar(&reproduces, "reproduces", "", "the id of the published result this run reproduces (its /r/ID)")
	siteTimeoutFlag(f, &timeout)
	return cmd
}

// submitEndpoint checks --server and returns the API's submit URL.
func submitEndpoint(server string, dryRun bool) (string, error) {
	if server == "" {
		if dryRun {
			return "", nil
		}
		return "", errors.New("--server is required: the results site's URL, e.g. --server https://results.example.org")
	}
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--server %q is not an http:// or https:// URL", server)
	}
	if u.User != nil {
		return "", fmt.Errorf("--server: a results site takes no user or password in its URL")
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/v1/results"
	u.RawQuery, u.Fragment = "", ""
	return u.String(), nil
}

func parseTags(tags []string) (map[string]string, error) {
	if len(tags) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, t := range tags {
		k, v, ok := strings.Cut(t, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--tag %q: want key=value", t)
		}
		out[k] = v
	}
	return out, nil
}

// resolveLast turns "last" into the newest stored run's UUID, and
// "sweep:last" into the sweep of the newest stored run (what a
// reproduction script submits right after it ran); any other reference is
// returned as it is.
func resolveLast(ctx context.Context, st store.Store, ref string) (string, error) {
	if ref != "last" && ref != "sweep:last" {
		return ref, nil
	}
	rows, err := st.List(ctx, store.Filter{Limit: 1})
	if err != nil {
		return "", err
	}
	switch {
	case len(rows) == 0:
		return "", withCode(ExitUsage, errors.New("no result is stored yet (see: dbmark results list)"))
	case ref == "last":
		return rows[0].UUID, nil
	case rows[0].SweepID == "":
		return "", withCode(ExitUsage, fmt.Errorf("the newest result (%d) is not a sweep's: give its sweep as sweep:ID", rows[0].ID))
	}
	return "sweep:" + rows[0].SweepID, nil
}

// submissionOf builds the redacted submission of one reference: a run, or
// a sweep (sweep:ID) with all its runs. removed lists the fields that
// redaction masked or dropped, as JSON paths into the submission.
func submissionOf(ctx context.Context, st store.Store, ref string) (sub *site.Submission, removed []string, err error) {
	sub = &site.Submission{Format: site.SubmissionFormat}
	var runs []*result.Result
	if ref, err = resolveLast(ctx, st, ref); err != nil {
		return nil, nil, err
	}
	if sref, ok := strings.CutPrefix(ref, "sweep:"); ok {
		rec, err := getSweep(ctx, st, sref)
		if err != nil {
			return nil, nil, err
		}
		if runs, err = st.SweepRuns(ctx, rec.ID); err != nil {
			return nil, nil, err
		}
		if len(runs) == 0 {
			return nil, nil, fmt.Errorf("sweep %s has no stored runs to submit", sref)
		}
		if sub.Sweep, err = redact.Sweep(rec); err != nil {
			return nil, nil, err
		}
		if removed, err = changedPaths("sweep", rec, sub.Sweep); err != nil {
			return nil, nil, err
		}
	} else {
		id, err := st.Resolve(ctx, ref)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil, nil, fmt.Errorf("no result %q (see: dbmark results list; a sweep is sweep:ID)", ref)
			}
			return nil, nil, err
		}
		r, err := st.Get(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		runs = []*result.Result{r}
	}
	for i, r := range runs {
		red, err := redact.Result(r)
		if err != nil {
			return nil, nil, err
		}
		sub.Runs = append(sub.Runs, red)
		ch, err := changedPaths(fmt.Sprintf("runs[%d]", i), r, red)
		if err != nil {
			return nil, nil, err
		}
		removed = append(removed, ch...)
	}
	return sub, removed, nil
}

// changedPaths lists the JSON paths, below at, whose values differ between
// a and b (a value b lacks counts), in document order.
func changedPaths(at string, a, b any) ([]string, error) {
	var da, db any
	for _, p := range []struct {
		v   any
		dst *any
	}{{a, &da}, {b, &db}} {
		j, err := json.Marshal(p.v)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", at, err)
		}
		if err := json.Unmarshal(j, p.dst); err != nil {
			return nil, fmt.Errorf("decode %s: %w", at, err)
		}
	}
	var out []string
	diffPaths(at, da, db, &out)
	return out, nil
}

func diffPaths(at string, a, b any, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, at)
			return
		}
		for _, k := range slices.Sorted(maps.Keys(av)) {
			diffPaths(at+"."+k, av[k], bv[k], out)
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(bv) != len(av) {
			*out = append(*out, at)
			return
		}
		for i := range av {
			diffPaths(fmt.Sprintf("%s[%d]", at, i), av[i], bv[i], out)
		}
	default:
		if a != b {
			*out = append(*out, at)
		}
	}
}

// dryRunNote tells on standard error what a dry run's submission left
// out, so that what is printed can be checked against it.
func dryRunNote(w io.Writer, ref string, removed []string) {
	if len(removed) == 0 {
		fmt.Fprintf(w, "dry run: %s: nothing needed removing; the site would accept it; nothing was sent\n", ref)
		return
	}
	const most = 12
	shown := removed
	more := ""
	if len(shown) > most {
		shown, more = shown[:most], fmt.Sprintf(" and %d more", len(removed)-most)
	}
	fmt.Fprintf(w, "dry run: %s: %d values removed or masked (%s%s); the site would accept the rest; nothing was sent\n",
		ref, len(removed), strings.Join(shown, ", "), more)
}

// refusal is the line for a submission the site's checks refuse, naming
// the option at fault where the user wrote the value.
func refusal(ref string, err error) error {
	var se *site.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("%s: %w", ref, err)
	}
	switch {
	case se.Field == "note" && strings.HasPrefix(se.Msg, "holds personal data"):
		what, _, _ := strings.Cut(se.Msg, ":")
		return fmt.Errorf("--note %s: write it without them", what)
	case se.Field == "note":
		return fmt.Errorf("--note: %s", se.Msg)
	case strings.HasPrefix(se.Field, "tags."):
		return fmt.Errorf("--tag %s: %s", strings.TrimPrefix(se.Field, "tags."), se.Msg)
	case se.Field == "reproduces":
		return fmt.Errorf("--reproduces: %s (the id in a result's /r/ID permalink)", se.Msg)
	}
	return fmt.Errorf("the site would refuse %s: %v", ref, se)
}

// post sends one submission and turns every answer but success into one
// line with the right exit code.
func post(ctx context.Context, client *http.Client, timeout time.Duration, endpoint string, body []byte) (*site.SubmitAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "dbmark/"+buildinfo.Get().Version)
	res, err := client.Do(req)
	if err != nil {
		// Submitting the same result again gives the same permalink.
		return nil, siteError("the submission was cancelled (the site may have taken it: submitting again is safe)", endpoint, timeout, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, withCode(ExitUnavailable, fmt.Errorf("read the answer of %s: %w", endpoint, err))
	}
	if res.StatusCode == http.StatusOK || res.StatusCode == http.StatusCreated {
		var ans site.SubmitAnswer
		if err := json.Unmarshal(b, &ans); err != nil || ans.URL == "" {
			return nil, withCode(ExitUnavailable, fmt.Errorf("%s answered %s with no permalink: is it a dbmark results site?", endpoint, res.Status))
		}
		return &ans, nil
	}
	var ae site.APIError
	if json.Unmarshal(b, &ae) != nil || ae.Error == "" {
		return nil, withCode(ExitUnavailable, fmt.Errorf("%s answered %s: is it a dbmark results site?", endpoint, res.Status))
	}
	switch {
	case res.StatusCode == http.StatusTooManyRequests:
		wait := res.Header.Get("Retry-After")
		if _, err := strconv.Atoi(wait); err != nil {
			wait = "?"
		}
		return nil, withCode(ExitUnavailable, fmt.Errorf("the server takes no more submissions from you for now: try again in %s s", wait))
	case res.StatusCode == http.StatusRequestEntityTooLarge:
		return nil, withCode(ExitUsage, fmt.Errorf("the server refuses it as too large: %s", ae.Error))
	case res.StatusCode >= 500:
		return nil, withCode(ExitUnavailable, fmt.Errorf("the server failed (%s): %s", res.Status, ae.Error))
	}
	return nil, withCode(ExitUsage, fmt.Errorf("the server refuses it: %s", ae.Error))
}

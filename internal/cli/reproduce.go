package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbmark/dbmark/internal/redact"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/secret"
	"github.com/dbmark/dbmark/internal/site"
	"github.com/dbmark/dbmark/internal/store"
)

func (a *App) reproduceCmd() *cobra.Command {
	var targetURL string
	var submitIt, applySettings bool
	var restartCmd string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "reproduce URL/r/ID [--target URL] [--submit]",
		Short: "Run a published result's workload with its options against your own target",
		Long: `Fetch a result published on a results site (its permalink, .../r/ID), and run the same
workload with the same options (those that differ from their defaults, the duration and the
threads included) against --target, or the embedded SQLite database. The command it runs is
printed first, then the engine settings of your server that differ from the original's (with
--apply-settings the original's values are set for the run and restored after it, as --server-set
does), and after the run its ratio to the original. With --submit the result is then published on
the same site as a reproduction of the original, whose page lists it with its ratio.`,
		Args: exactlyOne("permalink (https://site/r/ID)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			base, id, err := permalink(args[0])
			if err != nil {
				return withCode(ExitUsage, err)
			}
			client, err := siteClient(timeout)
			if err != nil {
				return err
			}
			detail, err := fetchResult(ctx, client, timeout, base, id)
			if err != nil {
				return err
			}
			p := detail.Submission.Primary()
			runArgs, err := a.reproduceArgs(p.Workload.Name, p.Workload.Options)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			kind, eng, facts, err := a.inspectTarget(ctx, targetURL)
			if err != nil {
				return withCode(ExitUsage, fmt.Errorf("reproduce: %w", err))
			}
			diffs, note := settingDiffs(p, kind, eng, facts)
			diffs = slices.DeleteFunc(diffs, func(d settingDiff) bool {
				_, set := p.Workload.Options[result.ServerOption(d.Name)]
				return set // the original set it itself: runArgs set it too
			})
			if applySettings {
				if note != "" {
					return withCode(ExitUsage, fmt.Errorf("--apply-settings: %s", note))
				}
				runArgs = append(runArgs, serverSetArgs(diffs)...)
			}
			if restartCmd != "" {
				runArgs = append(runArgs, "--restart-cmd", restartCmd)
			}
			if targetURL != "" {
				runArgs = append(runArgs, "--target", targetURL)
			}
			storeDSN := a.storeDSN
			if storeDSN != "" {
				runArgs = append(runArgs, "--store", storeDSN)
			}
			fmt.Fprintf(a.Stdout, "reproducing %s/r/%s: dbmark %s\n", base, id, strings.Join(secret.Args(runArgs), " "))
			writeSettingDiffs(a.Stdout, diffs, note, applySettings)
			// The run is the run command itself, on a fresh command tree.
			root := a.rootCmd()
			root.SetArgs(runArgs)
			root.SetOut(a.Stdout)
			root.SetErr(a.Stderr)
			if err := root.ExecuteContext(ctx); err != nil {
				return err
			}
			a.storeDSN = storeDSN
			return a.withStore(ctx, func(st store.Store) error {
				rows, err := st.List(ctx, store.Filter{Workload: p.Workload.Name, Limit: 1})
				if err != nil {
					return err
				}
				if len(rows) == 0 {
					return errors.New("the reproduction was not stored (was --no-store given?)")
				}
				if rep, err := st.Get(ctx, rows[0].ID); err == nil {
					writeRatio(a.Stdout, p, rep, diffs, applySettings)
				}
				if !submitIt {
					fmt.Fprintf(a.Stdout, "publish it with: dbmark submit %d --server %s --reproduces %s\n", rows[0].ID, base, id)
					return nil
				}
				sub, _, err := submissionOf(ctx, st, strconv.FormatInt(int64(rows[0].ID), 10))
				if err != nil {
					return err
				}
				sub.Reproduces = id
				b, err := json.Marshal(sub)
				if err != nil {
					return err
				}
				endpoint, _ := submitEndpoint(base, false)
				ans, err := post(ctx, client, timeout, endpoint, append(b, '\n'))
				if err != nil {
					return fmt.Errorf("submit the reproduction: %w", err)
				}
				fmt.Fprintln(a.Stdout, ans.URL)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&targetURL, "target", "", "the target to run against (default: the embedded SQLite database)")
	cmd.Flags().BoolVar(&submitIt, "submit", false, "publish the result on the same site, linked to the original")
	cmd.Flags().BoolVar(&applySettings, "apply-settings", false, "set the original's values of the engine settings that differ for the run (restored after it)")
	cmd.Flags().StringVar(&restartCmd, "restart-cmd", "", "with --apply-settings, the command that restarts the server, for settings that need a restart")
	siteTimeoutFlag(cmd.Flags(), &timeout)
	return cmd
}

// permalink splits https://site/r/ID into the site and the id.
func permalink(s string) (base, id string, err error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("%q is not a result's permalink (https://site/r/ID)", s)
	}
	dir, id := path.Split(strings.TrimSuffix(u.Path, "/"))
	if !strings.HasSuffix(dir, "/r/") || id == "" {
		return "", "", fmt.Errorf("%q is not a result's permalink (https://site/r/ID)", s)
	}
	u.Path, u.RawQuery, u.Fragment = strings.TrimSuffix(dir, "/r/"), "", ""
	return strings.TrimSuffix(u.String(), "/"), id, nil
}

func fetchResult(ctx context.Context, client *http.Client, timeout time.Duration, base, id string) (*site.ResultDetail, error) {
	u := base + "/api/v1/results/" + url.PathEscape(id)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, siteError("fetching the result was cancelled", base, timeout, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return nil, withCode(ExitUnavailable, fmt.Errorf("read %s: %w", u, err))
	}
	if res.StatusCode == http.StatusNotFound {
		return nil, withCode(ExitUsage, fmt.Errorf("%s has no result %s", base, id))
	}
	var d site.ResultDetail
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &d) != nil || len(d.Submission.Runs) == 0 {
		return nil, withCode(ExitUnavailable, fmt.Errorf("%s answered %s: is it a dbmark results site?", u, res.Status))
	}
	return &d, nil
}

// reproduceArgs is the run command line that does the work a published run
// did: its workload, with every option whose value differs from this
// dbmark's default for it.
func (a *App) reproduceArgs(workload string, opts map[string]string) ([]string, error) {
	if _, ok := a.Workloads.New(workload); !ok {
		return nil, fmt.Errorf("this dbmark has no workload %q (is it older than the one that ran it?)", workload)
	}
	cmd, _, err := a.rootCmd().Find([]string{"run", workload})
	if err != nil || cmd.Name() != workload {
		return nil, fmt.Errorf("this dbmark cannot run %q", workload)
	}
	fs := cmd.Flags()
	fs.AddFlagSet(cmd.InheritedFlags())
	args := []string{"run", workload}
	var masked []string
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		f := fs.Lookup(k)
		v := opts[k]
		if name, ok := result.ServerSettingOf(k); ok {
			args = append(args, "--server-set="+name+"="+v)
			continue
		}
		if f == nil || result.ClassOf(k) == result.OutputOption || v == f.DefValue {
			continue
		}
		if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
			v = v[1 : len(v)-1] // a list, as pflag prints it
		}
		if strings.Contains(v, redact.Mask) {
			masked = append(masked, "--"+k)
		}
		args = append(args, "--"+k+"="+v)
	}
	if len(masked) > 0 {
		// A path (fileio's --dir, a custom script) was removed when the run
		// was published: only the user can say what stands for it here.
		return nil, fmt.Errorf("the published run's %s held a path, removed when it was published: run it with your own: dbmark %s",
			strings.Join(masked, ", "), strings.Join(args, " "))
	}
	return args, nil
}

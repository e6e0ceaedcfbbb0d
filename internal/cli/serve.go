package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/promexport"
	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/secret"
	"github.com/dbmark/dbmark/internal/site"
	"github.com/dbmark/dbmark/internal/site/sitestore"
	"github.com/dbmark/dbmark/internal/store"
	"github.com/dbmark/dbmark/internal/workload/fileio"
)

// adminTokenEnv is where serve reads the admin token when no file is given.
const adminTokenEnv = "DBMARK_ADMIN_TOKEN"

func (a *App) serveCmd() *cobra.Command {
	var listen, siteStore, tokenFile string
	maxBody := fileio.Size(site.DefaultMaxBody)
	var limits sitestore.Limits
	var trustProxy, logJSON, unreleased bool
	var metricsAddr string
	var maxInFlight int
	queueWait := site.DefaultQueueWait
	cmd := &cobra.Command{
		Use:   "serve [--listen 127.0.0.1:8080] [--store FILE|postgres://...] [--admin-token-file F]",
		Short: "Serve the public results site: submissions, browsing, comparisons and leaderboards",
		Long: `Serve the results site that dbmark submit publishes to, with its API under /api/v1/.
The site keeps its own database, never your results store: a SQLite file (site.db in the data
directory by default) or PostgreSQL (several servers may share one). The admin token, which lets an
operator hide and delete results, is read from --admin-token-file or $` + adminTokenEnv + `, never from the
command line. SIGTERM or Ctrl-C stops the server after the requests in flight.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if maxInFlight < 0 {
				return withCode(ExitUsage, fmt.Errorf("--max-in-flight %d: must be at least 1 (0 for 4 per CPU)", maxInFlight))
			}
			if queueWait < time.Millisecond {
				return withCode(ExitUsage, fmt.Errorf("--queue-wait %s: must be at least 1ms (e.g. 500ms, 2s)", queueWait))
			}
			token, err := adminToken(tokenFile)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			mx, err := a.listenMetrics(metricsAddr)
			if err != nil {
				return err
			}
			defer a.closeMetrics(mx)
			if siteStore == "" {
				dir, err := store.DataDir()
				if err != nil {
					return withCode(ExitUsage, err)
				}
				siteStore = filepath.Join(dir, "site.db")
			}
			logger := a.Logger
			if logJSON {
				logger = slog.New(slog.NewJSONHandler(a.Stderr, nil))
			}
			st, err := sitestore.Open(ctx, siteStore, logger)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			defer st.Close()
			lib, err := htmlreport.ChartLibrary()
			if err != nil {
				logger.Warn("result pages will have no charts", "err", err)
			}
			srv, err := site.New(ctx, site.Config{Store: st, Logger: logger, AdminToken: token, MaxBody: int64(maxBody),
				Limits: limits, TrustProxy: trustProxy, ChartLibrary: lib, MaxInFlight: maxInFlight, QueueWait: queueWait,
				LeaderboardUnreleased: unreleased, Durability: a.Targets.Unsafe, Workload: a.workloadInfos()})
			if err != nil {
				return withCode(ExitUsage, err)
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return withCode(ExitUsage, fmt.Errorf("cannot listen on %s: %w (is another server using it? see --listen)", listen, err))
			}
			handler := srv.Handler()
			if mx != nil {
				reqs := promexport.NewRequests()
				if err := mx.Register(reqs.Collectors()...); err != nil {
					return withCode(ExitUsage, err)
				}
				handler = reqs.Wrap(handler)
			}
			hs := &http.Server{
				Handler:           handler,
				ReadHeaderTimeout: 10 * time.Second,
				ReadTimeout:       60 * time.Second,
				WriteTimeout:      60 * time.Second,
				IdleTimeout:       120 * time.Second,
				MaxHeaderBytes:    64 << 10,
				ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
				BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
			}
			if mx != nil {
				fmt.Fprintf(a.Stdout, "serving the site's metrics on %s\n", mx.URL())
			}
			fmt.Fprintf(a.Stdout, "serving the results site on http://%s (store %s)\n", ln.Addr(), storeLabel(siteStore))
			if token == "" {
				logger.Info("moderation is off: no admin token (--admin-token-file or $" + adminTokenEnv + ")")
			}
			done := make(chan error, 1)
			go func() { done <- hs.Serve(ln) }()
			select {
			case err := <-done:
				return withCode(ExitUsage, fmt.Errorf("serve: %w", err))
			case <-ctx.Done():
			}
			logger.Info("shutting down: finishing the requests in flight")
			sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := hs.Shutdown(sctx); err != nil {
				return withCode(ExitUsage, fmt.Errorf("shut down: %w", err))
			}
			if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
				return withCode(ExitUsage, fmt.Errorf("serve: %w", err))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8080", "address and port to listen on")
	f.StringVar(&siteStore, "store", "", "the site's database: a SQLite file or postgres://... (default: site.db in the data directory)")
	f.StringVar(&tokenFile, "admin-token-file", "", "file holding the admin token for moderation (else $"+adminTokenEnv+")")
	f.Var(&maxBody, "max-body", "largest submission accepted, after decompression (16K, 8M...)")
	f.IntVar(&limits.PerMinute, "submit-per-minute", site.DefaultLimits.PerMinute, "submissions a client may make per minute")
	f.IntVar(&limits.PerDay, "submit-per-day", site.DefaultLimits.PerDay, "submissions a client may make per day")
	f.BoolVar(&trustProxy, "trust-proxy", false, "behind a reverse proxy: take the client's address from X-Forwarded-For and the scheme from X-Forwarded-Proto")
	f.IntVar(&maxInFlight, "max-in-flight", 0, "requests worked on at once; others wait up to --queue-wait, then get 503 (0: 4 per CPU)")
	f.DurationVar(&queueWait, "queue-wait", queueWait, "how long a request waits for a free slot before the site answers that it is busy")
	f.BoolVar(&logJSON, "log-json", false, "write the access log and other logs as JSON lines")
	f.StringVar(&metricsAddr, "metrics-addr", "", "serve the site's request metrics for Prometheus at http://ADDR/metrics, apart from the site (127.0.0.1:9464; off when not given)")
	f.BoolVar(&unreleased, "leaderboard-unreleased", false, "also show results of unreleased builds (built from source) on leaderboards of their own, apart from released builds")
	return cmd
}

// adminToken reads the token from file, or else from the environment.
func adminToken(file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv(adminTokenEnv)), nil
	}
	fi, err := os.Stat(file)
	if err != nil {
		return "", fmt.Errorf("--admin-token-file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("--admin-token-file %s: others may read it (mode %v); chmod 600 it", file, fi.Mode().Perm())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--admin-token-file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 16 {
		return "", fmt.Errorf("--admin-token-file %s: the token is shorter than 16 characters (try: openssl rand -hex 32 > %s)", file, file)
	}
	return tok, nil
}

func storeLabel(dsn string) string {
	if !strings.Contains(dsn, "://") {
		return dsn
	}
	return secret.Target(dsn)
}

// workloadInfos answers workloadInfo for the site's handlers, which run at
// once: the command tree it walks shares flag sets that are not safe to
// walk concurrently, and the answers never change, so each is made once,
// under a lock.
func (a *App) workloadInfos() func(string) (site.WorkloadInfo, bool) {
	var mu sync.Mutex
	made := map[string]site.WorkloadInfo{}
	return func(name string) (site.WorkloadInfo, bool) {
		mu.Lock()
		defer mu.Unlock()
		if info, ok := made[name]; ok {
			return info, true
		}
		info, ok := a.workloadInfo(name)
		if ok {
			made[name] = info
		}
		return info, ok
	}
}

// workloadInfo is what the site's reproduction scripts need of a
// workload this dbmark has: whether it has prepare, the options that
// change what prepare builds, and the defaults of run's options.
func (a *App) workloadInfo(name string) (site.WorkloadInfo, bool) {
	w, ok := a.Workloads.New(name)
	if !ok {
		return site.WorkloadInfo{}, false
	}
	info := site.WorkloadInfo{Prepares: w.Hooks.Prepare != nil, PrepareOptions: w.PrepareOptions, Defaults: map[string]string{}}
	if cmd, _, err := a.rootCmd().Find([]string{"run", name}); err == nil && cmd.Name() == name {
		add := func(f *pflag.Flag) { info.Defaults[f.Name] = f.DefValue }
		cmd.Flags().VisitAll(add)
		cmd.InheritedFlags().VisitAll(add)
	}
	return info, true
}

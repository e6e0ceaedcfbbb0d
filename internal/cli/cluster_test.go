package cli_test

// A run on a cluster: --target given once per server. Two PostgreSQL
// servers (the test environment's and one of the test's own) stand in for
// a cluster's SQL nodes, each prepared apart (a real cluster shares its
// data, which prepare then loads once, through the first).

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/result"
	siteapi "github.com/dbmark/dbmark/internal/site"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/testsrv"
)

// busyClients is how many of the client connections to raw's database
// other than its own have run a statement on sbtest1: the clients of a
// run (the counter sampler's reads name no table of the workload's, and
// autovacuum's ANALYZE of sbtest1 is no client's).
func busyClients(t *testing.T, raw string) func() int {
	c := connectTo(t, postgres.Open, raw)
	return func() int {
		v, _, err := c.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
			AND query LIKE '%sbtest1%'`)
		if err != nil {
			return -1
		}
		n, _ := strconv.Atoi(v)
		return n
	}
}

func TestClusterPostgres(t *testing.T) {
	if os.Getenv("DBMARK_TEST_POSTGRES") == "" {
		t.Skip("DBMARK_TEST_POSTGRES not set (scripts/testenv.sh)")
	}
	// The clients are counted by database: the shared server's in one of
	// the test's own, which other packages' tests do not use.
	const db = "dbmark_cluster"
	first := ownDatabase(t, serverURL(t, "DBMARK_TEST_POSTGRES"), db, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)").String()
	srv := testsrv.Start(t, testsrv.Postgres)
	second := srv.TCP
	dir := home(t)
	size := []string{"--tables", "1", "--table-size", "1000"}
	for _, raw := range []string{first, second} {
		prepared(t, "oltp_read_only", append([]string{"--target", raw}, size...)...)
	}

	// Each server's clients, counted on the server while the run goes on.
	counts := []func() int{busyClients(t, first), busyClients(t, second)}
	most := make([]int, 2)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			for i, n := range counts {
				most[i] = max(most[i], n())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	jsonPath := filepath.Join(dir, "cluster.json")
	o := dbmark(t, context.Background(), append([]string{"run", "oltp_read_only", "--target", first, "--target", second,
		"--threads", "4", "--time", "3", "--json", jsonPath}, size...)...)
	stop()
	wg.Wait()
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	if most[0] != 2 || most[1] != 2 {
		t.Errorf("the servers saw %d and %d clients at most, want 2 each", most[0], most[1])
	}
	r := readResult(t, jsonPath)
	if len(r.Servers) != 2 {
		t.Fatalf("%d servers recorded", len(r.Servers))
	}
	var events int64
	var rate float64
	for i, s := range r.Servers {
		if s.Label != result.ServerLabel(i) || s.Clients != 2 || s.Summary == nil || s.Summary.Events == 0 || len(s.Histograms) == 0 {
			t.Fatalf("server %d: %+v", i, s)
		}
		if s.Target.Version == "" || len(s.Target.Settings) == 0 || s.Target.EngineFacts == nil || strings.Contains(s.Target.URL, "bench:bench@") {
			t.Errorf("server %d: its facts are missing, or its URL keeps a password: %s %q", i, s.Target.URL, s.Target.Version)
		}
		events += s.Summary.Events
		rate += s.Summary.EventsPerS
	}
	if events != r.Summary.Events || math.Abs(rate-r.Summary.EventsPerS) > 0.01*r.Summary.EventsPerS {
		t.Errorf("the servers add up to %d events at %.1f/s; the run has %d at %.1f/s", events, rate, r.Summary.Events, r.Summary.EventsPerS)
	}
	if c := r.Summary.Concurrency; math.Abs(c-4) > 0.4 {
		t.Errorf("events/s x mean latency = %.2f over all clients, want 4 within 10%%", c)
	}
	if r.Servers[1].Target.URL == r.Target.URL || r.Servers[0].Target.URL != r.Target.URL {
		t.Errorf("the result's target %s is not the first server's (%s, %s)", r.Target.URL, r.Servers[0].Target.URL, r.Servers[1].Target.URL)
	}
	counters := map[string]bool{}
	for _, s := range r.Counters.Series {
		if label, _, ok := strings.Cut(s.Name, "/db."); ok {
			counters[label] = true
		}
	}
	if !counters["server1"] || !counters["server2"] {
		t.Errorf("engine counters by server: %v", counters)
	}
	points := 0
	for _, p := range r.Series {
		if !p.Warmup && len(p.ServersEventsPerS) == 2 && p.ServersEventsPerS[0] > 0 && p.ServersEventsPerS[1] > 0 {
			points++
		}
	}
	if points < 2 {
		t.Errorf("%d points with each server's events/s", points)
	}
	if !strings.Contains(o.stdout, "Per server") || !strings.Contains(o.stdout, "server2") {
		t.Errorf("the summary has no line per server:\n%s", o.stdout)
	}

	// The result as kept: shown, reported, exported and compared.
	ctx2 := context.Background()
	show := dbmark(t, ctx2, "results", "show", "1")
	if show.code != 0 || !strings.Contains(show.stdout, "server2") {
		t.Errorf("results show: exit %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	html := filepath.Join(dir, "r.html")
	if _, err := htmlreport.ChartLibrary(); err != nil && os.Getenv("CI") == "" {
		t.Log("no report:", err) // a build before `make assets`
	} else if rep := dbmark(t, ctx2, "report", "1", "-o", html); rep.code != 0 {
		t.Errorf("report: exit %d %s", rep.code, rep.stderr)
	} else if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), `"name":"#1 server2"`) {
		t.Errorf("the report draws no line per server (%v)", err)
	}
	exp := dbmark(t, ctx2, "results", "export", "1", "--format", "json")
	if exp.code != 0 {
		t.Fatalf("export: exit %d %s", exp.code, exp.stderr)
	}
	er, err := result.Unmarshal([]byte(exp.stdout))
	if err != nil || len(er.Servers) != 2 || er.Servers[1].Summary == nil {
		t.Errorf("the export lost the servers (%v)", err)
	}
	if cmp := dbmark(t, ctx2, "compare", "1", "1"); cmp.code != 0 {
		t.Errorf("compare: exit %d %s", cmp.code, cmp.stderr)
	}
	// The site takes it, and keeps each server's part.
	site, _ := serve(t, "--store", filepath.Join(t.TempDir(), "site.db"))
	sub := dbmark(t, ctx2, "submit", "1", "--server", site)
	if sub.code != 0 || !strings.HasPrefix(sub.stdout, site+"/r/") {
		t.Fatalf("submit: exit %d %s %s", sub.code, sub.stdout, sub.stderr)
	}
	link := strings.TrimSpace(sub.stdout)
	res, err := http.Get(site + "/api/v1/results/" + link[strings.LastIndex(link, "/")+1:])
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var d siteapi.ResultDetail
	if err := json.NewDecoder(res.Body).Decode(&d); err != nil || len(d.Submission.Runs) != 1 || len(d.Submission.Runs[0].Servers) != 2 {
		t.Errorf("the site's copy: %v %+v", err, d.Submission.Runs)
	}
	if page, err := http.Get(link); err != nil || page.StatusCode != http.StatusOK {
		t.Errorf("the result's page: %v", err)
	} else {
		page.Body.Close()
	}
}

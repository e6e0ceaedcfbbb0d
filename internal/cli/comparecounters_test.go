package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/compare"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site"
	"github.com/dbmark/dbmark/internal/testsrv"
)

// TestCompareShowsTheCountersThatMoved runs TPC-B twice on a PostgreSQL
// of the test's own with fsync on, synchronous_commit on and then off:
// compare names the WAL syncs, one a commit before and a few a second
// after, among the counters that moved most, and compare.Diff holds the
// same finding.
func TestCompareShowsTheCountersThatMoved(t *testing.T) {
	srv := testsrv.Start(t, testsrv.Postgres)
	dir := home(t)
	ctx := context.Background()
	tg := []string{"--target", srv.TCP}
	prepared(t, "tpcb", append(tg, "-s", "1", "-q")...)
	for _, sync := range []string{"on", "off"} {
		o := dbmark(t, ctx, append([]string{"run", "tpcb", "-c", "4", "-T", "5", "--server-set", "fsync=on", "--server-set", "synchronous_commit=" + sync}, tg...)...)
		if o.code != 0 {
			t.Fatalf("synchronous_commit=%s: exit %d: %s", sync, o.code, o.stderr)
		}
	}
	o := dbmark(t, ctx, "compare", "1", "2")
	if o.code != 0 {
		t.Fatalf("compare: exit %d: %s", o.code, o.stderr)
	}
	head := strings.Index(o.stdout, "counters that moved most")
	if head < 0 || head < strings.Index(o.stdout, "METRIC") || head > strings.Index(o.stdout, "what differed") {
		t.Fatalf("no counters between the metrics and what differed:\n%s", o.stdout)
	}
	var a, b float64
	for _, line := range strings.Split(o.stdout[head:], "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && f[0] == "db.wal_syncs" && f[3] == "->" {
			a, _ = strconv.ParseFloat(strings.ReplaceAll(f[1], ",", ""), 64)
			b, _ = strconv.ParseFloat(strings.ReplaceAll(f[4], ",", ""), 64)
		}
	}
	if !(a > 5*b) {
		t.Errorf("db.wal_syncs is not among the counters that moved, falling from A to B (%v -> %v):\n%s", a, b, o.stdout)
	}
	if n := len(strings.Split(strings.TrimSpace(o.stdout[head:strings.Index(o.stdout, "what differed")]), "\n")); n > 2+compare.TopCounters+1 {
		t.Errorf("%d lines of counters: more than the top %d", n, compare.TopCounters)
	}

	// The same finding in compare.Diff, which the site uses.
	var runs []*result.Result
	for _, id := range []string{"1", "2"} {
		r, err := result.Unmarshal([]byte(dbmark(t, ctx, "results", "export", id, "--no-redact").stdout))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	d := compare.Diff(runs...)
	if len(d.Counters) != 1 || d.Counters[0] == nil || !inTop(d.Counters[0].Top, "db.wal_syncs") {
		t.Fatalf("compare.Diff: no db.wal_syncs among the moved counters: %+v", d.Counters)
	}
	for _, c := range d.Counters[0].WithThroughput {
		if c.Name == "db.wal_syncs" {
			t.Errorf("the WAL syncs are said to follow the throughput: %+v", c)
		}
	}
	if o := dbmark(t, ctx, "compare", "1", "2", "--counters", "0"); strings.Contains(o.stdout, "counters that moved") {
		t.Errorf("--counters 0 still lists counters:\n%s", o.stdout)
	}

	// Submitted to the results site, the two show the same finding on its
	// compare page and in its API, with no home directory in either.
	url, _ := serve(t, "--store", filepath.Join(t.TempDir(), "site.db"))
	var ids []string
	for _, id := range []string{"1", "2"} {
		o := dbmark(t, ctx, "submit", id, "--server", url)
		if o.code != 0 {
			t.Fatalf("submit %s: exit %d: %s", id, o.code, o.stderr)
		}
		ids = append(ids, path.Base(strings.TrimSpace(o.stdout)))
	}
	code, api := get(t, url+"/api/v1/compare?ids="+ids[0]+","+ids[1])
	pcode, page := get(t, url+"/compare?ids="+ids[0]+","+ids[1])
	if code != 200 || pcode != 200 {
		t.Fatalf("compare: the API answered %d, the page %d", code, pcode)
	}
	var c site.Comparison
	if err := json.Unmarshal([]byte(api), &c); err != nil {
		t.Fatalf("compare API: %v\n%s", err, api)
	}
	if len(c.Counters) != 1 || c.Counters[0].ID != ids[1] || !inTop(c.Counters[0].Moves.Top, "db.wal_syncs") {
		t.Errorf("the site's API: no db.wal_syncs among the moved counters: %+v", c.Counters)
	}
	if !strings.Contains(page, "<td>db.wal_syncs</td>") || !strings.Contains(page, "Counters that moved") {
		t.Errorf("the site's compare page does not list db.wal_syncs:\n%s", page)
	}
	for _, p := range []string{dir, os.Getenv("HOME")} {
		if strings.Contains(api, p) || strings.Contains(page, p) {
			t.Errorf("the site's comparison holds the home directory %s", p)
		}
	}
}

func inTop(cs []compare.CounterMove, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

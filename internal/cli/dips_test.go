package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/workload/workloadtest"
)

// A dip made on purpose (another connection holds a lock on the table the
// run writes for two and a half seconds) is found where it was made, on
// every engine, said in the summary and kept in the result.
func TestDipFound(t *testing.T) {
	home(t)
	ctx := context.Background()
	// Each engine's way to hold the run's table, and to let it go.
	lock := map[string][2]string{
		"sqlite":   {"BEGIN IMMEDIATE", "COMMIT"},
		"postgres": {"BEGIN; LOCK TABLE sbtest1 IN ACCESS EXCLUSIVE MODE", "COMMIT"},
		"mariadb":  {"LOCK TABLES sbtest1 WRITE", "UNLOCK TABLES"},
	}
	for _, e := range workloadtest.Engines(t, "dbmark_dips") {
		t.Run(e.Name, func(t *testing.T) {
			size := []string{"--target", e.URL, "--tables", "1", "--table-size", "1000"}
			dbmark(t, ctx, append([]string{"cleanup", "oltp_update_non_index"}, size...)...)
			if o := dbmark(t, ctx, append([]string{"prepare", "oltp_update_non_index"}, size...)...); o.code != 0 {
				t.Fatalf("prepare: %s", o.stderr)
			}
			holder := connect(t, e.URL)
			doc := filepath.Join(t.TempDir(), "r.json")
			done := make(chan outcome)
			go func() {
				done <- dbmark(t, ctx, append([]string{"run", "oltp_update_non_index", "--threads", "2", "--time", "11s",
					"--report-interval", "1s", "--json", doc}, size...)...)
			}()
			time.Sleep(5 * time.Second)
			held := time.Now()
			for _, stmt := range strings.Split(lock[e.Name][0], "; ") {
				if err := holder.Exec(ctx, stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			time.Sleep(2500 * time.Millisecond)
			if err := holder.Exec(ctx, lock[e.Name][1]); err != nil {
				t.Fatal(err)
			}
			released := time.Now()
			o := <-done
			if o.code != 0 {
				t.Fatalf("run: exit %d: %s", o.code, o.stderr)
			}
			b, err := os.ReadFile(doc)
			if err != nil {
				t.Fatal(err)
			}
			var r result.Result
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			from, to := held.Sub(r.StartedAt).Seconds(), released.Sub(r.StartedAt).Seconds()
			found := false
			for _, d := range r.Summary.Dips {
				// The dip's intervals overlap the time the lock was held.
				found = found || (d.FromS < to && d.ToS > from && d.Change < -0.5)
			}
			if !found {
				t.Fatalf("no dip found while the lock was held (%.1f-%.1f s): %+v\n%s", from, to, r.Summary.Dips, o.stdout)
			}
			if !strings.Contains(o.stdout, "Dips (throughput well below its running median") {
				t.Errorf("the summary does not say it:\n%s", o.stdout)
			}
		})
	}
}

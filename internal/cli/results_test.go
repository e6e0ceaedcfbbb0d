package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/dbmark/dbmark/internal/store"
)

// TestListSaysWhatItLeftOut stores 61 copies of a real run in the results
// store: the list shows the newest 50 and says how many it left out, and
// --all or --limit shows the rest.
func TestListSaysWhatItLeftOut(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	js := filepath.Join(dir, "r.json")
	if o := dbmark(t, ctx, "run", "oltp_point_select", "--time", "0.3", "--table-size", "100", "--sample-interval", "0", "--json", js); o.code != 0 {
		t.Fatalf("run: %s", o.stderr)
	}
	r := readResult(t, js)
	st, err := store.Open(ctx, filepath.Join(dir, "results.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		r.ID = uuid.NewString()
		r.StartedAt = r.StartedAt.Add(time.Duration(i+1) * time.Second)
		if _, err := st.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	lines := func(o outcome) int { return strings.Count(o.stdout, "oltp_point_select") }
	o := dbmark(t, ctx, "results", "list")
	if lines(o) != 50 || !strings.Contains(o.stdout, "showing the newest 50 of 61; --limit N or --all for more") {
		t.Errorf("list: %d lines:\n%s", lines(o), o.stdout)
	}
	for _, args := range [][]string{{"--all"}, {"--limit", "0"}, {"--limit", "61"}, {"--limit", "100"}} {
		if o := dbmark(t, ctx, append([]string{"results", "list"}, args...)...); lines(o) != 61 || strings.Contains(o.stdout, "showing") {
			t.Errorf("list %v: %d lines:\n%s", args, lines(o), o.stdout)
		}
	}
	if o := dbmark(t, ctx, "results", "list", "--limit", "3"); lines(o) != 3 || !strings.Contains(o.stdout, "showing the newest 3 of 61") {
		t.Errorf("list --limit 3:\n%s", o.stdout)
	}
	if o := dbmark(t, ctx, "results", "list", "--status", "failed"); strings.Contains(o.stdout, "showing") {
		t.Errorf("list of none says it left some out:\n%s", o.stdout)
	}
}

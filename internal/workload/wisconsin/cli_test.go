package wisconsin_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/target/sqlite"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/wisconsin"
)

// dbmark runs the command and returns its exit code and what it wrote.
func dbmark(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	code := cli.Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// prepare and cleanup work through the command on SQLite: the data is
// there and checks out, a second prepare and a bad --scale are refused
// with one line, runs check out (and one with a row missing fails), and
// cleanup leaves no table behind.
func TestPrepareAndCleanupThroughTheCommand(t *testing.T) {
	t.Setenv("DBMARK_HOME", t.TempDir())
	t.Setenv("DBMARK_TARGET", "")
	t.Setenv("DBMARK_STORE", "")
	path := filepath.Join(t.TempDir(), "w.db")
	at := []string{"--target", "sqlite://" + path}
	if code, out, errs := dbmark(t, append([]string{"prepare", "wisconsin", "--scale", "2000", "--seed", "11"}, at...)...); code != 0 {
		t.Fatalf("prepare: exit %d: %s%s", code, out, errs)
	}
	ctx := context.Background()
	tg := sqlite.New(path)
	defer tg.Close()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data, err := wisconsin.ReadData(ctx, c)
	if err != nil || data != (wisconsin.Data{Scale: 2000, Seed: 11}) {
		t.Fatalf("recorded data = %+v, %v; want scale 2000, seed 11", data, err)
	}
	s := loadSuite(t, ctx, tg, c)
	for i := range s.qs {
		if err := s.checked(ctx, c, i); err != nil {
			t.Fatal(err)
		}
	}

	for _, refused := range []struct {
		args []string
		want string
	}{
		{[]string{"prepare", "wisconsin", "--scale", "2000"}, "exists from an earlier prepare: run dbmark cleanup wisconsin first"},
		{[]string{"prepare", "wisconsin", "--scale", "2050"}, "--scale 2050: must be a multiple of 100"},
		{[]string{"run", "wisconsin", "--scale", "3000"}, "--scale"},
		{[]string{"run", "wisconsin", "--scale", "2000", "--iterations", "0"}, "--iterations 0"},
	} {
		code, _, errs := dbmark(t, append(refused.args, at...)...)
		if code == 0 || !strings.Contains(errs, refused.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s: exit %d, %q; want one line saying %q", strings.Join(refused.args, " "), code, errs, refused.want)
		}
	}

	// Run by the runner of query suites: every answer checks out, twice in
	// a row (the write queries undo what they did), and with two streams
	// at once (the read queries).
	for _, run := range [][]string{
		{"run", "wisconsin", "--scale", "2000", "--iterations", "2"},
		{"run", "wisconsin", "--scale", "2000", "--iterations", "2"},
		{"run", "wisconsin", "--scale", "2000", "--iterations", "1", "--streams", "2"},
	} {
		code, out, errs := dbmark(t, append(run, at...)...)
		if code != 0 || !strings.Contains(out, "status: ok") || !strings.Contains(out, "q7_select1_clustered") {
			t.Fatalf("%s: exit %d\n%s\n%s", strings.Join(run, " "), code, out, errs)
		}
		want := "32 queries"
		if strings.Contains(strings.Join(run, " "), "--streams") {
			want = "25 queries"
		}
		if !strings.Contains(out, want) {
			t.Errorf("%s: the suite is not of %s:\n%s", strings.Join(run, " "), want, out)
		}
	}
	// A row deleted behind the workload's back: a fast wrong answer fails
	// its query and the run.
	if err := c.Exec(ctx, "DELETE FROM tenktup1 WHERE unique2 = 5"); err != nil {
		t.Fatal(err)
	}
	code, out, errs := dbmark(t, append([]string{"run", "wisconsin", "--scale", "2000", "--iterations", "1"}, at...)...)
	if code == 0 || !strings.Contains(out, "status: failed") || !strings.Contains(out+errs, "q3_sel1pct_clustered") {
		t.Errorf("a wrong answer passed: exit %d\n%s\n%s", code, out, errs)
	}

	if code, out, errs := dbmark(t, append([]string{"cleanup", "wisconsin"}, at...)...); code != 0 {
		t.Fatalf("cleanup: exit %d: %s%s", code, out, errs)
	}
	v, _, err := c.QueryRow(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'")
	if err != nil || v != "0" {
		t.Errorf("tables left after cleanup: %s, %v", v, err)
	}
}

// Prepared refuses data that is missing, of another scale, or whose
// prepare did not finish, each with what to do.
func TestPreparedRefuses(t *testing.T) {
	ctx := context.Background()
	tg := sqlite.New(filepath.Join(t.TempDir(), "p.db"))
	defer tg.Close()
	w := wisconsin.New()
	w.Opts().Scale = 1000
	env := workload.Env{Target: tg, Logger: quiet, Threads: 1, Seed: 5, Progress: io.Discard}
	if err := w.Prepared(ctx, env); !errors.Is(err, wisconsin.ErrNotPrepared) || !strings.Contains(err.Error(), "run dbmark prepare wisconsin") {
		t.Errorf("nothing prepared: %v", err)
	}
	if err := w.Prepare(ctx, env); err != nil {
		t.Fatal(err)
	}
	w2 := wisconsin.New() // --scale 10000, the default
	if err := w2.Prepared(ctx, env); err == nil || !strings.Contains(err.Error(), "prepared with --scale 1000, not 10000") {
		t.Errorf("another scale: %v", err)
	}
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := workload.MarkIncomplete(ctx, c, "wisconsin"); err != nil {
		t.Fatal(err)
	}
	var inc *workload.IncompleteError
	if err := w.Prepared(ctx, env); !errors.As(err, &inc) {
		t.Errorf("an unfinished prepare: %v", err)
	}
	if err := w.Cleanup(ctx, env); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"tenktup1", "tenktup1_noindex", "wisconsin_meta", "dbmark_incomplete_wisconsin"} {
		if _, ok, err := c.QueryRow(ctx, tg.Dialect().TableExists(table)); err != nil || ok {
			t.Errorf("table %s after cleanup: %v, %v", table, ok, err)
		}
	}
}

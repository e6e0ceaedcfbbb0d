package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A full disk is not an error to ignore: the message says to free space
// or move the target, never to add its code to --ignore-errors.
func TestFullDiskHintIsNotToIgnore(t *testing.T) {
	home(t)
	dir := mountTmpfs(t, "size=4m")
	ctx := context.Background()
	tg := "sqlite://" + filepath.Join(dir, "t.db")
	if o := dbmark(t, ctx, "prepare", "oltp_insert", "--target", tg, "--table-size", "1000"); o.code != 0 {
		t.Fatalf("prepare: exit %d: %s", o.code, o.stderr)
	}
	// Full but for room to open the database (its WAL and shared memory).
	fillUp(t, dir)
	fill := filepath.Join(dir, "fill")
	st, err := os.Stat(fill)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(fill, st.Size()-128<<10); err != nil {
		t.Fatal(err)
	}
	o := dbmark(t, ctx, "run", "oltp_insert", "--target", tg, "--table-size", "1000", "--time", "2")
	if o.code == 0 {
		t.Fatalf("a run on a full disk passed: %s", o.stdout)
	}
	last := lastLine(o.stderr)
	if !strings.Contains(last, "SQLITE_13") || !strings.Contains(last, "free space") || strings.Contains(last, "--ignore-errors") {
		t.Errorf("the full disk's message: %q", last)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// An unknown flag before the command is named, not taken for the
// command's value: "unknown command "list"" sent the user looking at the
// wrong word.
func TestUnknownFlagBeforeTheCommandIsNamed(t *testing.T) {
	home(t)
	ctx := context.Background()
	for _, args := range [][]string{
		{"--frobnicate", "results", "list"},
		{"--frobnicate=1", "results", "list"},
		{"-q", "--frobnicate", "results", "list"},
		{"--store", "x.db", "--frobnicate", "results", "list"},
	} {
		o := dbmark(t, ctx, args...)
		oneLineError(t, o, "unknown flag: --frobnicate")
		if strings.Contains(o.stderr, "unknown command") {
			t.Errorf("%v: %s", args, o.stderr)
		}
	}
	// Known flags before the command still work.
	if o := dbmark(t, ctx, "-q", "--verbosity", "3", "results", "list"); o.code != 0 {
		t.Errorf("known flags before the command: exit %d: %s", o.code, o.stderr)
	}
	oneLineError(t, dbmark(t, ctx, "--stor", "x.db", "results", "list"), "did you mean --store?")
}

// With --no-store and no --json nothing is kept: a failed run does not
// say that its partial result was.
func TestNoStoreFailureDoesNotSayKept(t *testing.T) {
	home(t)
	ctx := context.Background()
	tg := "sqlite://" + filepath.Join(t.TempDir(), "t.db")
	if o := dbmark(t, ctx, "prepare", "oltp_point_select", "--target", tg, "--table-size", "100"); o.code != 0 {
		t.Fatalf("prepare: exit %d: %s", o.code, o.stderr)
	}
	// A rate that schedules no event in the time: a failed run.
	o := dbmark(t, ctx, "run", "oltp_point_select", "--target", tg, "--table-size", "100", "--time", "1", "--rate", "0.0001", "--no-store")
	last := lastLine(o.stderr)
	if o.code == 0 || strings.Contains(last, "was kept") || !strings.Contains(last, "not kept") {
		t.Errorf("--no-store without --json: exit %d, %q", o.code, last)
	}
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	o = dbmark(t, ctx, "run", "oltp_point_select", "--target", tg, "--table-size", "100", "--time", "1", "--rate", "0.0001", "--no-store", "--json", jsonPath)
	if last := lastLine(o.stderr); o.code == 0 || !strings.Contains(last, "the partial result was kept") {
		t.Errorf("--no-store with --json: exit %d, %q", o.code, last)
	}
}

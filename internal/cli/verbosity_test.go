package cli_test

import (
	"context"
	"strings"
	"testing"
)

// sysbench's --verbosity sets dbmark's log level: 0-2 as -q, 3 and 4 the
// default, 5 as -v; outside 0-5 it is refused, as sysbench refuses it.
// Cleaning up a directory with no files logs one information line.
func TestVerbosity(t *testing.T) {
	home(t)
	dir := t.TempDir()
	for _, c := range []struct {
		verbosity string
		info      bool
	}{{"0", false}, {"1", false}, {"2", false}, {"3", true}, {"4", true}, {"5", true}} {
		o := dbmark(t, context.Background(), "cleanup", "fileio", "--dir", dir, "--verbosity", c.verbosity)
		if o.code != 0 {
			t.Fatalf("--verbosity %s: exit %d: %s", c.verbosity, o.code, o.stderr)
		}
		if got := strings.Contains(o.stderr, "level=INFO msg=\"nothing to clean up"); got != c.info {
			t.Errorf("--verbosity %s: information logged %v, want %v: %q", c.verbosity, got, c.info, o.stderr)
		}
	}
	if o := dbmark(t, context.Background(), "cleanup", "fileio", "--dir", dir, "--verbosity=2", "-v"); !strings.Contains(o.stderr, "level=INFO") {
		t.Errorf("-v with --verbosity=2: want -v to win: %q", o.stderr)
	}
	for _, bad := range []string{"6", "-1"} {
		oneLineError(t, dbmark(t, context.Background(), "cleanup", "fileio", "--dir", dir, "--verbosity="+bad), "--verbosity "+bad)
	}
	oneLineError(t, dbmark(t, context.Background(), "cleanup", "fileio", "--dir", dir, "--verbosity=x"), "verbosity")
}

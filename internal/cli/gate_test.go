package cli_test

import (
	"context"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/compare"
)

// gateSays checks a gate's outcome: its exit code, and its one line on
// standard output starting with the state's name.
func gateSays(t *testing.T, o outcome, state int, want string) {
	t.Helper()
	line := strings.TrimSpace(o.stdout)
	if o.code != state || strings.Contains(line, "\n") || !strings.HasPrefix(line, compare.GateStates[state]+": ") || !strings.Contains(line, want) {
		t.Fatalf("exit %d, stdout %q, stderr %q: want %d and one line with %q", o.code, o.stdout, o.stderr, state, want)
	}
}

// gateRefuses checks bad input: UNKNOWN (3), one line on stderr, nothing
// on stdout.
func gateRefuses(t *testing.T, o outcome, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
	if o.code != compare.GateUnknown || o.stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "dbmark: ") || !strings.Contains(lines[0], want) {
		t.Fatalf("exit %d, stdout %q, stderr %q: want 3 and one line naming %q", o.code, o.stdout, o.stderr, want)
	}
}

// The gate on real runs of the embedded SQLite: open-loop runs at 400/s
// against runs at 400/s and at 200/s, a real halving of the rate. The
// runs share a seed: an open loop's arrivals are random, and the counts
// of 1 s runs of other seeds differ by 5% (a count of 400 has a standard
// deviation of 20), which the gate rightly calls a change; with one
// schedule, it judges the machine alone.
func TestGate(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	tgt := "sqlite://" + filepath.Join(dir, "gate.db")
	if o := dbmark(t, ctx, "prepare", "oltp_point_select", "--target", tgt); o.code != 0 {
		t.Fatalf("prepare: %s", o.stderr)
	}
	run := func(rate string) {
		t.Helper()
		if o := dbmark(t, ctx, "run", "oltp_point_select", "--target", tgt, "--time", "1s", "--rate", rate, "--seed", "7"); o.code != 0 {
			t.Fatalf("run: %s", o.stderr)
		}
	}
	for _, rate := range []string{"400", "400", "400", "400", "200", "200"} {
		run(rate)
	}
	// A machine too loaded to hold 400/s makes the runs themselves noise:
	// the verdicts below then rightly differ, and are not asserted.
	steady := true
	for _, pair := range [][2]string{{"1", "2"}, {"3", "4"}, {"5", "6"}} {
		m := regexp.MustCompile(`\(([-+][0-9.]+)%`).FindStringSubmatch(dbmark(t, ctx, "gate", pair[0], pair[1], "--single").stdout)
		if m == nil {
			t.Fatalf("no change in the gate's line for %v", pair)
		}
		if v, _ := strconv.ParseFloat(m[1], 64); math.Abs(v) > 5 {
			steady = false
			t.Logf("runs %s and %s differ by %s%%: the machine did not hold the rate", pair[0], pair[1], m[1])
		}
	}
	if steady {
		gateSays(t, dbmark(t, ctx, "gate", "1,2", "3,4"), compare.GateOK, "headline")
		gateSays(t, dbmark(t, ctx, "gate", "1,2", "5,6"), compare.GateCritical, "% worse")
		gateSays(t, dbmark(t, ctx, "gate", "1,2", "5,6", "--warn", "40%", "--crit", "60%"), compare.GateWarning, "% worse")
	}
	gateSays(t, dbmark(t, ctx, "gate", "1", "5"), compare.GateUnknown, "one run cannot tell")
	gateSays(t, dbmark(t, ctx, "gate", "1", "5", "--single"), compare.GateCritical, "noise not excluded")
	// Latency at low rates is noisy: any state will do, about the p99.
	if o := dbmark(t, ctx, "gate", "1,2", "5,6", "--metric", "p99"); o.code < 0 || o.code > 3 || !strings.Contains(o.stdout, ": p99 ") {
		t.Errorf("--metric p99: exit %d, %q %q", o.code, o.stdout, o.stderr)
	}
	gateSays(t, dbmark(t, ctx, "gate", "newest:oltp_point_select", "1", "--single"), compare.GateOK, "better")

	// --run runs the baseline's workload with its options (the rate
	// included), as many times as the baseline has runs.
	o := dbmark(t, ctx, "gate", "1,2", "--run", "--target", tgt)
	if steady {
		gateSays(t, o, compare.GateOK, "2 and 2 runs")
	} else if (o.code != compare.GateOK && o.code != compare.GateUnknown) || !strings.Contains(o.stdout, "2 and 2 runs") {
		t.Errorf("--run on a machine that did not hold the rate: exit %d, %q", o.code, o.stdout)
	}
	if !strings.Contains(o.stderr, "oltp_point_select") {
		t.Errorf("the gate's runs said nothing on stderr: %q", o.stderr)
	}
	if o := dbmark(t, ctx, "results", "list"); !strings.Contains(o.stdout, "\n8 ") && !strings.Contains(o.stdout, " 8 ") {
		t.Errorf("the gate's runs were not stored:\n%s", o.stdout)
	}

	gateRefuses(t, dbmark(t, ctx, "gate"), "usage: dbmark gate")
	gateRefuses(t, dbmark(t, ctx, "gate", "1"), "needs a CANDIDATE, or --run")
	gateRefuses(t, dbmark(t, ctx, "gate", "1", "2", "--run"), "not both")
	gateRefuses(t, dbmark(t, ctx, "gate", "1", "99"), `no result "99"`)
	gateRefuses(t, dbmark(t, ctx, "gate", "1", "2", "--warn", "abc"), `--warn "abc"`)
	gateRefuses(t, dbmark(t, ctx, "gate", "1", "2", "--warn", "20%", "--crit", "10%"), "below --warn")
	gateRefuses(t, dbmark(t, ctx, "gate", "1", "2", "--metric", "tps"), "--metric")
	gateRefuses(t, dbmark(t, ctx, "gate", "1", "2", "--repeat", "2"), "--repeat goes with --run")
	gateRefuses(t, dbmark(t, ctx, "gate", "1", "2", "--no-such-flag"), "unknown flag")
	gateRefuses(t, dbmark(t, ctx, "gate", "newest:nothing", "1"), "no ok run")
}

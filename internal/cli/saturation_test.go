package cli_test

import (
	"context"
	"strings"
	"testing"
)

// A CPU-bound run (eight clients of the embedded database on this
// machine's CPUs) says the CPUs were at their limit.
func TestSaturationVerdict(t *testing.T) {
	home(t)
	o := dbmark(t, context.Background(), "run", "oltp_point_select", "--threads", "8", "--time", "3s")
	if o.code != 0 {
		t.Fatalf("run: %s", o.stderr)
	}
	if !strings.Contains(o.stdout, "What saturated (on this machine): CPUs 85% busy or more") {
		t.Errorf("no CPU verdict:\n%s", o.stdout)
	}
	if o := dbmark(t, context.Background(), "results", "show", "1"); !strings.Contains(o.stdout, "What saturated (on this machine): CPUs 85% busy or more") {
		t.Errorf("results show lacks the verdict:\n%s", o.stdout)
	}
}

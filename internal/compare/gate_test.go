package compare

import (
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

func runsOf(better string, vals ...float64) []*result.Result {
	var out []*result.Result
	for _, v := range vals {
		out = append(out, &result.Result{Workload: result.Workload{Better: better},
			Summary: result.Summary{Headline: v, Latency: &result.Latency{MeanMS: 1000 / v, Percentiles: []result.Percentile{{P: 99, MS: 2000 / v}}}}})
	}
	return out
}

func TestGate(t *testing.T) {
	head, _ := ParseMetric("headline", "higher")
	p99, _ := ParseMetric("p99", "higher")
	base := runsOf("higher", 1000, 1010, 990, 1005, 995)
	for _, c := range []struct {
		name  string
		b     []*result.Result
		m     Metric
		opt   GateOptions
		state int
		has   string
	}{
		{"the same within noise", runsOf("higher", 1003, 992, 1008, 998, 1001), head, GateOptions{}, GateOK, "no significant difference"},
		{"better", runsOf("higher", 1200, 1210, 1190, 1205, 1195), head, GateOptions{}, GateOK, "better"},
		{"3% worse: under the warning", runsOf("higher", 970, 980, 960, 975, 965), head, GateOptions{}, GateOK, "within the thresholds"},
		{"7% worse warns", runsOf("higher", 930, 940, 920, 935, 925), head, GateOptions{}, GateWarning, "7.0% worse"},
		{"20% worse is critical", runsOf("higher", 800, 810, 790, 805, 795), head, GateOptions{}, GateCritical, "20.0% worse"},
		{"p99 up 25% is critical (lower is better)", runsOf("higher", 800, 810, 790, 805, 795), p99, GateOptions{}, GateCritical, "p99"},
		{"one run cannot tell", runsOf("higher", 800), head, GateOptions{}, GateUnknown, "one run cannot tell"},
		{"one run judged when told", runsOf("higher", 800), head, GateOptions{Single: true}, GateCritical, "noise not excluded"},
		{"a metric the runs lack", runsOf("higher", 1000, 1000), Metric{Name: "op:x", value: func(*result.Result) (float64, bool) { return 0, false }}, GateOptions{}, GateUnknown, "not in the"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.opt
			o.Metric, o.Warn, o.Crit = c.m, 0.05, 0.10
			g := Gate(base, c.b, o)
			if g.State != c.state || !strings.Contains(g.Line, c.has) || !strings.HasPrefix(g.Line, GateStates[c.state]+": ") || strings.Contains(g.Line, "\n") {
				t.Errorf("state %d, line %q; want %d and %q", g.State, g.Line, c.state, c.has)
			}
		})
	}
	// A large drop in noisy data that the test cannot separate from noise
	// is not called a regression.
	noisy := runsOf("higher", 500, 1500, 700, 1300, 1000)
	if g := Gate(noisy, runsOf("higher", 400, 1400, 600, 1200, 900), GateOptions{Metric: head, Warn: 0.05, Crit: 0.1}); g.State == GateCritical || g.State == GateWarning {
		t.Errorf("noise called a regression: %s", g.Line)
	}
}

func TestParseMetric(t *testing.T) {
	for _, s := range []string{"headline", "qps", "mean", "p99", "p99.9", "op:read"} {
		if _, err := ParseMetric(s, "higher"); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"", "p0", "p100", "px", "op:", "tps"} {
		if _, err := ParseMetric(s, "higher"); err == nil || !strings.Contains(err.Error(), "--metric") {
			t.Errorf("%q accepted (%v)", s, err)
		}
	}
}

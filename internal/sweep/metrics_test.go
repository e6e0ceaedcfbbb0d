package sweep

import (
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

func TestMeasures(t *testing.T) {
	lat := func(p95 float64) *result.Latency {
		return &result.Latency{MeanMS: 1, Percentiles: []result.Percentile{{P: 50, MS: 0.5}, {P: 95, MS: p95}}}
	}
	r := &result.Result{Summary: result.Summary{Headline: 100, HeadlineUnit: "tps", QueriesPerS: 300, ErrorsTotal: 2, Retries: 3,
		Latency: lat(4), ReadMiBPerS: 5,
		Ops: []result.OpSummary{
			{Name: "script:select-only", Count: 10, PerS: 100, Latency: lat(6)},
			{Name: "stmt:my.sql:lookup", Count: 10, PerS: 100}, // counted, not timed
			{Name: "read", Count: 5, PerS: 50, MiBPerS: 5},
			{Name: "delete", Count: 0},
		}}}
	got := map[string]Measure{}
	var order []string
	for _, m := range Measures(r) {
		got[m.Name] = m
		order = append(order, m.Name)
	}
	for name, want := range map[string]float64{
		"headline": 100, "p50": 0.5, "p95": 4, "mean": 1, "qps": 300, "read-mib/s": 5, "write-mib/s": 0, "errors": 2, "retries": 3,
		"op:script:select-only": 100, "op:script:select-only:p95": 6, "op:script:select-only:mean": 1,
		"op:stmt:my.sql:lookup": 100, "op:read": 50, "op:read:mib/s": 5,
	} {
		if m, ok := got[name]; !ok || m.Value != want {
			t.Errorf("%s: %+v, want %v", name, m, want)
		}
	}
	for _, absent := range []string{"op:stmt:my.sql:lookup:p95", "op:delete"} {
		if _, ok := got[absent]; ok {
			t.Errorf("%s measured", absent)
		}
	}
	if order[0] != Headline || got["headline"].Unit != "tps" || got["op:script:select-only:p95"].Unit != "ms" {
		t.Errorf("order %v, units %+v", order, got)
	}

	known := Known([][]Measure{Measures(r)})
	for _, ok := range []string{"", "p95", "op:stmt:my.sql:lookup", "op:read:mib/s"} {
		if err := CheckKnown(ok, known); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	err := CheckKnown("op:nope", known)
	if err == nil || !strings.Contains(err.Error(), "for NAME one of script:select-only, stmt:my.sql:lookup, read") ||
		!strings.Contains(err.Error(), "with :p50, :p95, :mean, :mib/s after it") {
		t.Errorf("op:nope: %v", err)
	}
}

func TestCheckMetric(t *testing.T) {
	for _, ok := range []string{"", "headline", "p95", "p99.9", "mean", "qps", "errors", "op:x", "op:stmt:a.sql:3:p95"} {
		if err := CheckMetric(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"p0", "p100", "pX", "op:", "tps", "latency"} {
		if err := CheckMetric(bad); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

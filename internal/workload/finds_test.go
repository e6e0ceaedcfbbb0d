package workload_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/workload"
)

// reads has client 0 read op n times, missing missed of them.
func reads(c *workload.ReadCheck, client, op, n, missed int) {
	f := c.Client(client)
	for i := 0; i < n; i++ {
		f.Found(op, i >= missed)
	}
}

func interval(warmup bool) metrics.Interval {
	return metrics.Interval{Start: 0, End: time.Second, Warmup: warmup}
}

func TestReadCheck(t *testing.T) {
	for _, tc := range []struct {
		name           string
		missed         [2]int // of 100 reads of each op per client after the warm-up
		warnOnly       bool
		status         result.Status
		want           result.Status
		warned, series bool
	}{
		{name: "whole", want: result.StatusOK},
		{name: "a few", missed: [2]int{1, 0}, want: result.StatusOK, warned: true, series: true},
		{name: "half is not most", missed: [2]int{50, 50}, want: result.StatusOK, warned: true, series: true},
		{name: "most", missed: [2]int{90, 20}, want: result.StatusFailed, series: true},
		{name: "most of a degraded run", missed: [2]int{90, 20}, status: result.StatusDegraded, want: result.StatusFailed, series: true},
		{name: "most, allowed", missed: [2]int{90, 20}, warnOnly: true, want: result.StatusOK, warned: true, series: true},
		{name: "most of an interrupted run", missed: [2]int{90, 90}, status: result.StatusInterrupted, want: result.StatusInterrupted, warned: true, series: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := workload.NewReadCheck(2, []string{"point_select", "simple_range"}, "re-run dbmark prepare", tc.warnOnly)
			res := &result.Result{Status: tc.status}
			if res.Status == "" {
				res.Status = result.StatusOK
			}
			// The warm-up misses everything; the summary leaves it out.
			reads(c, 1, 0, 10, 10)
			var p result.Interval
			c.Tick(interval(true), &p)
			res.Series = append(res.Series, p)
			for cl := 0; cl < 2; cl++ {
				for op := 0; op < 2; op++ {
					reads(c, cl, op, 100, tc.missed[op])
				}
			}
			p = result.Interval{}
			c.Tick(interval(false), &p)
			res.Series = append(res.Series, p)
			c.Finish(res)

			rc := res.Summary.ReadCheck
			wantMissed := int64(2 * (tc.missed[0] + tc.missed[1]))
			if rc == nil || rc.Checked != 400 || rc.Missed != wantMissed || len(rc.Ops) != 2 || rc.Ops[0].Missed != int64(2*tc.missed[0]) {
				t.Fatalf("read check %+v, want 400 checked, %d missed, by op", rc, wantMissed)
			}
			if res.Status != tc.want {
				t.Fatalf("status %s, want %s", res.Status, tc.want)
			}
			if tc.want == result.StatusFailed && (!strings.Contains(res.Error, "of 400 reads that must find rows") || !strings.Contains(res.Error, "re-run dbmark prepare")) {
				t.Fatalf("error %q: want the count and the hint", res.Error)
			}
			if got := len(res.Summary.Warnings) == 1; got != tc.warned {
				t.Fatalf("warnings %q, want one: %v", res.Summary.Warnings, tc.warned)
			}
			v, ok := res.Series[1].Extra[workload.MissedReadsPerS]
			if ok != tc.series || float64(wantMissed) != v {
				t.Fatalf("series figure %v (%v), want %d/s: %v", v, ok, wantMissed, tc.series)
			}
			if _, ok := res.Series[0].Extra[workload.MissedReadsPerS]; ok != tc.series {
				t.Fatalf("warm-up point: figure kept %v, want %v", ok, tc.series)
			}
		})
	}
}

// TestReadCheckOfNoReads: a run whose reads are none of those checked
// (oltp_insert) has no read check at all.
func TestReadCheckOfNoReads(t *testing.T) {
	c := workload.NewReadCheck(1, []string{"point_select"}, "", false)
	res := &result.Result{Status: result.StatusOK}
	var p result.Interval
	c.Tick(interval(false), &p)
	res.Series = []result.Interval{p}
	c.Finish(res)
	if res.Summary.ReadCheck != nil || res.Series[0].Extra != nil || res.Status != result.StatusOK {
		t.Fatalf("no reads: %+v, series %+v", res.Summary.ReadCheck, res.Series[0].Extra)
	}
}

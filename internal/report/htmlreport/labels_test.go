package htmlreport

import (
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

// Every option that differs is in the legend, however many: two iibench
// runs with 0 and 3 secondary indexes were both labelled by the first two
// differing options in name order, which left the indexes out.
func TestLabelNamesEveryDifference(t *testing.T) {
	run := func(id int64, opts map[string]string) Run {
		return Run{ID: id, Result: &result.Result{Workload: result.Workload{Options: opts}}}
	}
	runs := []Run{
		run(1, map[string]string{"threads": "5", "query-after-rows": "0", "secondary-indexes": "0", "format": "text", "seed": "1", "time": "10s"}),
		run(2, map[string]string{"threads": "5", "query-after-rows": "0", "secondary-indexes": "3", "format": "json", "seed": "2", "time": "10s"}),
		run(3, map[string]string{"threads": "8", "query-after-rows": "1000", "secondary-indexes": "3", "format": "text", "seed": "3", "time": "20s",
			"server.innodb_flush_log_at_trx_commit": "2"}),
	}
	lb := newLabeler(runs)
	want := []string{
		"#1 threads=5 que-aft-row=0 sec-ind=0 ser.inn_flu_log_at_trx_com=- tim=10s",
		"#2 threads=5 que-aft-row=0 sec-ind=3 ser.inn_flu_log_at_trx_com=- tim=10s",
		"#3 threads=8 que-aft-row=1000 sec-ind=3 ser.inn_flu_log_at_trx_com=2 tim=20s",
	}
	for i, r := range runs {
		if got := lb.label(r); got != want[i] {
			t.Errorf("run %d labelled %q, want %q", i+1, got, want[i])
		}
	}
	// Two runs that differ in one option name it in full.
	lb = newLabeler(runs[:2])
	if got := lb.label(runs[1]); got != "#2 secondary-indexes=3" {
		t.Errorf("labelled %q, want %q", got, "#2 secondary-indexes=3")
	}
	for _, r := range runs {
		if l := lb.label(r); strings.Contains(l, "format") || strings.Contains(l, "seed") {
			t.Errorf("label %q names an option that says nothing of the run", l)
		}
	}
}

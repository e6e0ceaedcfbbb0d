package report

import (
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

// TestCountersCSVKeepsEveryPoint checks that two points of one counter at
// the same millisecond both reach the CSV, the second on a row of its own,
// and that another counter's point at that time stays on the first row.
func TestCountersCSVKeepsEveryPoint(t *testing.T) {
	r := &result.Result{Counters: &result.Counters{Series: []result.CounterSeries{
		{Name: "os.cpu.user", Unit: "%", Points: [][2]float64{{0.5, 10}, {0.843, 20}, {0.843, 30}, {1, 40}}},
		{Name: "db.commits", Unit: "/s", Points: [][2]float64{{0.843, 7}}},
	}}}
	var b strings.Builder
	if err := CountersCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "t_s,os.cpu.user (%),db.commits (/s)\n0.5,10,\n0.843,20,7\n0.843,30,\n1,40,\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbmark/dbmark/internal/result"
)

// eventHist is the decoded latency histogram of r's event operation.
func eventHist(t *testing.T, r *result.Result, op string) *hdr.Histogram {
	t.Helper()
	for _, hh := range r.Histograms {
		if hh.Op == op && hh.Kind == "latency" {
			h, err := hh.Decode()
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
	}
	t.Fatalf("result %s has no latency histogram of %s", r.ID, op)
	return nil
}

// unionQuantile is the q-th percentile of every value the histograms
// recorded, by rank over their buckets (each bucket's highest value, as
// HdrHistogram reports one): what one client recording every
// host's events would have reported.
func unionQuantile(hs []*hdr.Histogram, q float64) int64 {
	var bars []hdr.Bar
	var total int64
	for _, h := range hs {
		for _, b := range h.Distribution() {
			if b.Count > 0 {
				bars = append(bars, b)
				total += b.Count
			}
		}
	}
	slices.SortFunc(bars, func(a, b hdr.Bar) int { return int(a.From - b.From) })
	// HdrHistogram's rank: the nearest whole count, at least one.
	rank := max(int64(q/100*float64(total)+0.5), 1)
	var seen int64
	for _, b := range bars {
		seen += b.Count
		if seen >= rank {
			return b.To
		}
	}
	return bars[len(bars)-1].To
}

// TestMergeOfHostsStartedTogether: three runs started at once with
// --start-at on one SQLite database, merged: the events add up, the p99
// is the one of all their events, and the merged result is a result like
// any other to show, report, compare and submit.
func TestMergeOfHostsStartedTogether(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	tgt := "sqlite://" + filepath.Join(dir, "hosts.db")
	prepared(t, "oltp_read_only", "--target", tgt, "--table-size", "1000")
	at := time.Now().Add(4 * time.Second).UTC().Truncate(time.Millisecond)
	var wg sync.WaitGroup
	outs := make([]outcome, 3)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = dbmark(t, ctx, "run", "oltp_read_only", "--target", tgt, "--table-size", "1000", "--threads", fmt.Sprint(i+1),
				"--time", "2", "--warmup", "1", "--start-at", at.Format(time.RFC3339Nano), "--client-id", fmt.Sprintf("h%d", i+1),
				"--json", filepath.Join(dir, fmt.Sprintf("h%d.json", i+1)))
		}()
	}
	wg.Wait()
	var rs []*result.Result
	var hs []*hdr.Histogram
	var events int64
	for i, o := range outs {
		if o.code != 0 {
			t.Fatalf("run %d: exit %d: %s", i+1, o.code, o.stderr)
		}
		r := readResult(t, filepath.Join(dir, fmt.Sprintf("h%d.json", i+1)))
		if r.ClientID != fmt.Sprintf("h%d", i+1) || r.StartAt == nil || !r.StartAt.At.Equal(at) || r.StartAt.LateS != 0 {
			t.Fatalf("run %d: client %q, start %+v, want %v on time", i+1, r.ClientID, r.StartAt, at)
		}
		if r.StartAt.ClockOffsetMS != nil {
			t.Fatalf("run %d: a clock offset against an embedded engine: %v", i+1, *r.StartAt.ClockOffsetMS)
		}
		// The warm-up lasted until the instant: the first measured
		// interval starts there.
		for _, iv := range r.Series {
			if !iv.Warmup {
				if d := r.StartedAt.Add(time.Duration((iv.T - iv.DurationS) * 1e9)).Sub(at); d.Abs() > 500*time.Millisecond {
					t.Fatalf("run %d: measuring began %v from --start-at", i+1, d)
				}
				break
			}
		}
		rs = append(rs, r)
		hs = append(hs, eventHist(t, r, "oltp_read_only"))
		events += r.Summary.Events
	}
	// Two stored results by id, one by its file.
	merged := filepath.Join(dir, "merged.json")
	o := dbmark(t, ctx, "merge", rs[0].ID[:8], rs[1].ID[:8], filepath.Join(dir, "h3.json"), "-o", merged, "--save")
	if o.code != 0 {
		t.Fatalf("merge: exit %d: %s", o.code, o.stderr)
	}
	m := readResult(t, merged)
	if m.Summary.Events != events || m.Run.Threads != 6 || len(m.Clients) != 3 || m.Clients[2].ID != "h3" || m.Merged == nil {
		t.Fatalf("merged: %d events (want %d), %d threads, clients %+v", m.Summary.Events, events, m.Run.Threads, m.Clients)
	}
	for _, p := range []float64{99, 50} {
		got, _ := m.Summary.Latency.Get(p)
		want := unionQuantile(hs, p)
		if !hs[0].ValuesAreEquivalent(int64(math.Round(got*1e6)), want) {
			t.Fatalf("merged p%g %.4f ms, the union's is %.4f ms", p, got, float64(want)/1e6)
		}
	}
	if eventHist(t, m, "oltp_read_only").TotalCount() != hs[0].TotalCount()+hs[1].TotalCount()+hs[2].TotalCount() {
		t.Fatal("the merged histogram does not hold every host's events")
	}
	id := strings.TrimSuffix(strings.TrimPrefix(o.stdout[strings.Index(o.stdout, "result "):], "result "), "\n")
	id = strings.Fields(id)[0]
	for _, args := range [][]string{
		{"results", "show", id},
		{"report", id, "-o", filepath.Join(dir, "merged.html")},
		{"compare", rs[0].ID[:8], id},
		{"submit", id, "--server", "http://127.0.0.1:1", "--dry-run"},
	} {
		if o := dbmark(t, ctx, args...); o.code != 0 {
			t.Fatalf("%s on the merged result: exit %d: %s", args[0], o.code, o.stderr)
		}
	}
	if o := dbmark(t, ctx, "results", "show", id); !strings.Contains(o.stdout, "of 6 clients") || !strings.Contains(o.stdout, "merged from 3 hosts") {
		t.Fatalf("show: Little's law is not over the 6 clients, or the hosts are not listed:\n%s", o.stdout)
	}
	if !strings.Contains(outs[0].stdout, "client: h1  measured from "+at.Format(time.RFC3339Nano)) {
		t.Fatalf("the run's summary does not say when it measured from:\n%s", outs[0].stdout)
	}
}

func TestMergeBadInput(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	tgt := "sqlite://" + filepath.Join(dir, "m.db")
	prepared(t, "oltp_read_only", "--target", tgt, "--table-size", "500")
	a := filepath.Join(dir, "a.json")
	if o := dbmark(t, ctx, "run", "oltp_read_only", "--target", tgt, "--table-size", "500", "--time", "1", "--no-store", "--json", a); o.code != 0 {
		t.Fatalf("run: %s", o.stderr)
	}
	edit := func(name string, change func(m map[string]any)) string {
		var m map[string]any
		b, _ := os.ReadFile(a)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		m["id"] = "00000000-0000-4000-8000-0000000000" + fmt.Sprint(10+len(name))
		change(m)
		b, _ = json.Marshal(m)
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	later := edit("later", func(m map[string]any) {
		st, _ := time.Parse(time.RFC3339Nano, m["started_at"].(string))
		m["started_at"] = st.Add(time.Hour).Format(time.RFC3339Nano)
	})
	other := edit("other", func(m map[string]any) { m["workload"].(map[string]any)["name"] = "oltp_point_select" })
	bigger := edit("bigger", func(m map[string]any) {
		m["workload"].(map[string]any)["options"].(map[string]any)["table-size"] = "9000"
	})
	notJSON := filepath.Join(dir, "notes.txt")
	os.WriteFile(notJSON, []byte("hello"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"merge", a}, "at least two"},
		{[]string{"merge", a, a}, "given twice"},
		{[]string{"merge", a, later}, "do not overlap"},
		{[]string{"merge", a, other}, "different workloads"},
		{[]string{"merge", a, bigger}, "--table-size"},
		{[]string{"merge", a, notJSON}, "notes.txt"},
		{[]string{"merge", a, "424242"}, `no stored result "424242"`},
		{[]string{"merge", a, later, "-o", filepath.Join(dir, "no", "such", "m.json")}, "does not exist"},
		{[]string{"run", "oltp_read_only", "--target", tgt, "--start-at", "yesterday"}, "not an RFC 3339 time"},
		{[]string{"run", "oltp_read_only", "--target", tgt, "--start-at", "2020-01-01T00:00:00Z"}, "in the past"},
		{[]string{"run", "oltp_read_only", "--target", tgt, "--start-at", "+-5s"}, "not a duration ahead"},
		{[]string{"run", "oltp_read_only", "--target", tgt, "--threads", "1,2", "--start-at", "+5s"}, "a sweep runs one cell after another"},
		{[]string{"run", "oltp_read_only", "--target", tgt, "--client-id", "a/b"}, "without '/'"},
	}
	for _, c := range cases {
		t.Run(c.args[0]+" "+c.want, func(t *testing.T) {
			oneLineError(t, dbmark(t, ctx, c.args...), c.want)
		})
	}
	// An instant the clients cannot be ready for: the run measures at
	// once, and says how late its window began.
	late := filepath.Join(dir, "late.json")
	o := dbmark(t, ctx, "run", "oltp_read_only", "--target", tgt, "--table-size", "500", "--time", "1", "--start-at", "+1ms", "--no-store", "--json", late)
	if r := readResult(t, late); o.code != 0 || r.StartAt == nil || r.StartAt.LateS <= 0 || !strings.Contains(o.stdout, "after --start-at") {
		t.Fatalf("a late start: exit %d, %+v, output:\n%s", o.code, r.StartAt, o.stdout)
	}
}

// TestStartAtMeasuresTheClockOffset: against a server, two runs started
// together record their clock's offset from the server's now() (small on
// this machine), and merge into one result that keeps each host's.
func TestStartAtMeasuresTheClockOffset(t *testing.T) {
	home(t)
	ctx := context.Background()
	for _, env := range []string{"DBMARK_TEST_POSTGRES", "DBMARK_TEST_MYSQL"} {
		tgt := os.Getenv(env)
		if tgt == "" {
			t.Logf("%s not set: not tested (bash scripts/testenv.sh start)", env)
			continue
		}
		t.Run(env, func(t *testing.T) {
			prepared(t, "oltp_point_select", "--target", tgt, "--table-size", "100")
			dir := t.TempDir()
			at := time.Now().Add(2500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
			var wg sync.WaitGroup
			outs := make([]outcome, 2)
			files := []string{filepath.Join(dir, "x.json"), filepath.Join(dir, "y.json")}
			for i := range outs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					outs[i] = dbmark(t, ctx, "run", "oltp_point_select", "--target", tgt, "--table-size", "100", "--time", "1",
						"--start-at", at, "--client-id", filepath.Base(files[i]), "--no-store", "--json", files[i])
				}()
			}
			wg.Wait()
			var events int64
			for i, o := range outs {
				if o.code != 0 {
					t.Fatalf("run %d: exit %d: %s", i, o.code, o.stderr)
				}
				r := readResult(t, files[i])
				if r.StartAt == nil || r.StartAt.ClockOffsetMS == nil {
					t.Fatalf("no clock offset recorded: %+v", r.StartAt)
				}
				if off := *r.StartAt.ClockOffsetMS; math.Abs(off) > 50 || r.StartAt.ClockUncertaintyMS <= 0 {
					t.Fatalf("offset %v ms ± %v against a server on this machine", off, r.StartAt.ClockUncertaintyMS)
				}
				events += r.Summary.Events
			}
			merged := filepath.Join(dir, "m.json")
			if o := dbmark(t, ctx, "merge", files[0], files[1], "-o", merged); o.code != 0 {
				t.Fatalf("merge: exit %d: %s", o.code, o.stderr)
			}
			m := readResult(t, merged)
			if m.Summary.Events != events || len(m.Clients) != 2 || m.Clients[1].StartAt == nil || m.Clients[1].StartAt.ClockOffsetMS == nil {
				t.Fatalf("merged %d events of %d, clients %+v", m.Summary.Events, events, m.Clients)
			}
		})
	}
}

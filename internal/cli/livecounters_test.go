package cli_test

import (
	"context"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestLiveCountersAreTheirOwnInterval holds a live line's --show counters
// to the interval the line is about: each value is the stored sample taken
// at that line's tick, not the one before it.
func TestLiveCountersAreTheirOwnInterval(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		home(t)
		liveCounters(t, nil, "db.blocks_hit")
	})
	t.Run("mariadb", func(t *testing.T) {
		tgt := serverURL(t, "DBMARK_TEST_MYSQL").String()
		home(t)
		args := []string{"--target", tgt, "--tables", "1", "--table-size", "1000"}
		prepared(t, "oltp_point_select", args...)
		liveCounters(t, args, "db.rows_read")
	})
}

var liveTime = regexp.MustCompile(`^\[ (\d+(?:\.\d+)?)s \]`)

func liveCounters(t *testing.T, args []string, dbCounter string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.json")
	short := dbCounter[strings.LastIndex(dbCounter, ".")+1:]
	o := dbmark(t, context.Background(), append([]string{"run", "oltp_point_select", "--time", "5s", "--report-interval", "1s",
		"--show", "user,context_switches," + short, "--json", path, "--no-store"}, args...)...)
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	r := readResult(t, path)
	series := map[string][][2]float64{}
	end := r.Run.WarmupS + r.Summary.DurationS + r.Summary.DrainS
	for _, s := range r.Counters.Series {
		series[s.Name] = s.Points
		// Nothing sampled after the clients left (a gauge would drop to
		// zero at the end of every run): the last sample is the last
		// tick's, read as the run ends.
		if n := len(s.Points); n > 0 && s.Points[n-1][0] > end+0.5 {
			t.Errorf("%s: a point at %.3fs, after the run's end at %.3fs", s.Name, s.Points[n-1][0], end)
		}
	}
	shown := map[string]string{"os.cpu.user": "cpu.user", "os.context_switches": "context_switches", dbCounter: short}
	lines := 0
	for _, line := range strings.Split(o.stdout, "\n") {
		m := liveTime.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		lines++
		at, _ := strconv.ParseFloat(m[1], 64)
		for name, label := range shown {
			v, ok := shownValue(line, label)
			if !ok {
				t.Errorf("line at %gs lacks %s: %s", at, label, line)
				continue
			}
			if stale(line, label) {
				continue // said to be the last interval's: allowed
			}
			// A sample is stamped when its read ends: on a loaded
			// machine that is up to the line's wait for it (half the
			// interval) after a tick that may itself be late, and the
			// line is stamped in whole seconds. The sample before this
			// line's is a whole interval earlier, so it is never nearer.
			p, ok := nearest(series[name], at)
			if !ok || math.Abs(p[0]-at) > 0.75 {
				t.Errorf("%s: no stored sample near %gs: %v", name, at, series[name])
				continue
			}
			if math.Abs(p[1]-v) > 0.051*math.Max(1, math.Abs(p[1])/1000) {
				t.Errorf("line at %gs shows %s %g; its own sample (at %.3fs) is %g\n%s", at, label, v, p[0], p[1], line)
			}
		}
	}
	if lines < 4 {
		t.Fatalf("%d live lines in:\n%s", lines, o.stdout)
	}
}

// shownValue is the number a live line shows after "label: ".
func shownValue(line, label string) (float64, bool) {
	i := strings.Index(line, " "+label+": ")
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(line[i+len(label)+3:])
	if len(f) == 0 {
		return 0, false
	}
	num := strings.TrimRightFunc(f[0], func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	v, err := strconv.ParseFloat(num, 64)
	return v, err == nil
}

// stale says whether the line marks label's value as the last interval's.
func stale(line, label string) bool {
	i := strings.Index(line, " "+label+": ")
	f := strings.Fields(line[i+len(label)+3:])
	return len(f) > 1 && f[1] == "(stale)"
}

// nearest is the point of ps closest in time to at.
func nearest(ps [][2]float64, at float64) ([2]float64, bool) {
	best, ok := [2]float64{}, false
	for _, p := range ps {
		if !ok || math.Abs(p[0]-at) < math.Abs(best[0]-at) {
			best, ok = p, true
		}
	}
	return best, ok
}

// TestDBCountersWhileClientsAreBusy keeps the embedded SQLite busy with two
// clients that read and write: its page cache counters are still on every
// live line and in every interval of the stored run, not lost while the
// clients hold their connections.
func TestDBCountersWhileClientsAreBusy(t *testing.T) {
	home(t)
	path := filepath.Join(t.TempDir(), "r.json")
	o := dbmark(t, context.Background(), "run", "oltp_read_write", "--threads", "2", "--time", "5s", "--report-interval", "1s",
		"--show", "cache_hit,blocks_hit", "--json", path, "--no-store")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	lines, shown := 0, 0
	for _, line := range strings.Split(o.stdout, "\n") {
		if liveTime.MatchString(line) {
			lines++
			_, hit := shownValue(line, "cache_hit")
			_, blocks := shownValue(line, "blocks_hit")
			if hit && blocks && !stale(line, "blocks_hit") {
				shown++
			}
		}
	}
	// A loaded machine may make one line late.
	if lines < 4 || shown < lines-1 {
		t.Errorf("%d of %d live lines show the database's counters:\n%s", shown, lines, o.stdout)
	}
	r := readResult(t, path)
	got := map[string]int{}
	for _, s := range r.Counters.Series {
		got[s.Name] = len(s.Points)
		if strings.HasPrefix(s.Name, "db.") && len(s.Gaps) > 0 {
			t.Errorf("%s has gaps %v", s.Name, s.Gaps)
		}
	}
	for _, name := range []string{"db.blocks_hit", "db.cache_hit", "db.pages_written"} {
		if got[name] < lines-1 {
			t.Errorf("%s has %d samples for %d intervals (%v)", name, got[name], lines, got)
		}
	}
}

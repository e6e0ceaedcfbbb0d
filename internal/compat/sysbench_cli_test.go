package compat

import (
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tests here put dbmark run in front of sysbench command lines and
// compare what happens: the same work, the same exit code for the same
// mistake. sysbench's outcome is always found by running it.

// testBooleans runs oltp_read_write with sysbench's spellings of its
// boolean options (underscores, on and off) and requires the statements
// per transaction of both tools to agree.
func testBooleans(t *testing.T, e *engine) {
	for _, opt := range []string{"--skip_trx=on", "--range_selects=off", "--skip_trx=0"} {
		t.Run(strings.TrimPrefix(opt, "--"), func(t *testing.T) { compareStatements(t, e, "oltp_read_write", []string{opt}) })
	}
}

// testRefusedBooleans gives both tools spellings sysbench refuses; dbmark
// must refuse them too, with the same exit code and one line naming the
// option.
func testRefusedBooleans(t *testing.T, e *engine) {
	ctx := t.Context()
	for _, opt := range []string{"--skip_trx=yes", "--auto_inc=ON", "--range_selects=no", "--create_secondary=Off"} {
		t.Run(strings.TrimPrefix(opt, "--"), func(t *testing.T) {
			args := []string{"--tables=" + strconv.Itoa(tables), "--table-size=" + strconv.Itoa(tableSize), "--events=1", "--time=0", opt}
			sbOut, sbCode := sysbenchCode(t, ctx, e, "oltp_read_write", append(args, "run")...)
			db := dbmarkCode(t, ctx, append([]string{"run", "oltp_read_write", "--target", e.target, "--no-store", "-q"}, args...)...)
			t.Logf("sysbench: exit %d: %s", sbCode, lastLine(sbOut))
			t.Logf("dbmark:   exit %d: %s", db.code, lastLine(db.stderr))
			if sbCode == 0 {
				t.Fatalf("sysbench accepted %s: the test's premise is wrong", opt)
			}
			if db.code != sbCode {
				t.Errorf("%s: dbmark exit %d, sysbench exit %d", opt, db.code, sbCode)
			}
			name := strings.SplitN(strings.TrimPrefix(opt, "--"), "=", 2)[0] // as the user typed it
			if n := strings.Count(strings.TrimSpace(db.stderr), "\n"); n != 0 || !strings.Contains(db.stderr, name) {
				t.Errorf("%s: dbmark's stderr should be one line naming --%s:\n%s", opt, name, db.stderr)
			}
		})
	}
}

// compareSchema prepares with sysbench and with dbmark, both given opts,
// and requires the same tables, columns, indexes and data. It leaves
// compatDB empty.
func compareSchema(t *testing.T, e *engine, opts ...string) {
	ctx := t.Context()
	args := append([]string{"--tables=" + strconv.Itoa(tables), "--table-size=" + strconv.Itoa(tableSize)}, opts...)
	sysbench(t, ctx, e, "oltp_read_write", append(args, "prepare")...)
	want := describe(t, ctx, e)
	sysbench(t, ctx, e, "oltp_read_write", append(args, "cleanup")...)
	dbmark(t, ctx, append([]string{"prepare", "oltp_read_write", "--target", e.target, "-q"}, args...)...)
	got := describe(t, ctx, e)
	dbmark(t, ctx, append([]string{"cleanup", "oltp_read_write", "--target", e.target, "-q"}, args...)...)
	for _, aspect := range slices.Sorted(maps.Keys(want)) {
		if !reflect.DeepEqual(got[aspect], want[aspect]) {
			t.Errorf("%s %s after prepare %s differs:\n  sysbench: %v\n  dbmark:   %v", e.name, aspect, strings.Join(opts, " "), want[aspect], got[aspect])
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

var (
	reWarning   = regexp.MustCompile(`(?m)^WARNING: .*$`)
	reThreads   = regexp.MustCompile(`(?m)^Number of threads: (\d+)$`)
	reTotalTime = regexp.MustCompile(`(?m)^\s*total time:\s+([0-9.]+)s$`)
)

// testLegacyLimits gives both tools sysbench 1.0's deprecated spellings of
// --threads, --events and --time, alone and beside the new ones at their
// defaults or the same values: the same warnings, in the same order, and
// the same threads, events and time. (Beside a new one given a different
// value, sysbench lets the deprecated one win; dbmark refuses, see
// docs/oltp.md.)
func testLegacyLimits(t *testing.T, e *engine) {
	ctx := t.Context()
	for _, c := range []struct {
		name    string
		args    []string
		threads int
		events  int64
		time    float64 // seconds; 0: limited by events
	}{
		{"deprecated_alone", []string{"--num-threads=2", "--max-requests=50", "--time=0"}, 2, 50, 0},
		{"deprecated_agreeing", []string{"--threads=2", "--num-threads=2", "--events=50", "--max-requests=50", "--time=0"}, 2, 50, 0},
		{"defaults_ignored", []string{"--num-threads=1", "--threads=3", "--max-requests=0", "--events=20", "--time=0"}, 3, 20, 0},
		{"max_time", []string{"--max-time=1"}, 1, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--tables=" + strconv.Itoa(tables), "--table-size=" + strconv.Itoa(tableSize)}, c.args...)
			sbOut := sysbench(t, ctx, e, "oltp_point_select", append(args, "run")...)
			jsonPath := filepath.Join(t.TempDir(), "result.json")
			out := dbmark(t, ctx, append([]string{"run", "oltp_point_select", "--target", e.target, "--no-store", "-q", "--json", jsonPath}, args...)...)
			res := readResult(t, jsonPath)

			sbWarn, dbWarn := reWarning.FindAllString(sbOut, -1), reWarning.FindAllString(out, -1)
			t.Logf("sysbench warns %q, dbmark %q", sbWarn, dbWarn)
			if !slices.Equal(sbWarn, dbWarn) {
				t.Errorf("warnings differ:\n  sysbench: %q\n  dbmark:   %q", sbWarn, dbWarn)
			}
			sb := parseSysbench(t, sbOut)
			m := reThreads.FindStringSubmatch(sbOut)
			if m == nil || m[1] != strconv.Itoa(c.threads) || res.Run.Threads != c.threads {
				t.Errorf("threads: sysbench %v, dbmark %d, want %d", m, res.Run.Threads, c.threads)
			}
			if c.events > 0 && (sb.events != c.events || res.Summary.Events != c.events) {
				t.Errorf("events: sysbench %d, dbmark %d, want %d", sb.events, res.Summary.Events, c.events)
			}
			if c.time > 0 {
				m := reTotalTime.FindStringSubmatch(sbOut)
				sbTime, _ := strconv.ParseFloat(m[1], 64)
				t.Logf("time: sysbench %.3fs, dbmark %.3fs", sbTime, res.Summary.DurationS)
				for _, got := range []float64{sbTime, res.Summary.DurationS} {
					if got < c.time*0.9 || got > c.time*1.5 {
						t.Errorf("time: sysbench %.3fs, dbmark %.3fs, want about %gs each", sbTime, res.Summary.DurationS, c.time)
					}
				}
			}
		})
	}
}

// testVerbosity gives both tools sysbench's --verbosity: the same exit code
// for every level and for values sysbench refuses. sysbench prints no
// report below 3 while dbmark still prints its summary (docs/oltp.md).
func testVerbosity(t *testing.T, e *engine) {
	ctx := t.Context()
	for _, v := range []string{"0", "2", "3", "5", "6", "-1", "x"} {
		args := []string{"--tables=" + strconv.Itoa(tables), "--table-size=" + strconv.Itoa(tableSize), "--events=5", "--time=0", "--verbosity=" + v}
		sbOut, sbCode := sysbenchCode(t, ctx, e, "oltp_point_select", append(args, "run")...)
		db := dbmarkCode(t, ctx, append([]string{"run", "oltp_point_select", "--target", e.target, "--no-store"}, args...)...)
		t.Logf("--verbosity=%s: sysbench exit %d, %d lines; dbmark exit %d, %d lines", v, sbCode, strings.Count(sbOut, "\n"), db.code, strings.Count(db.stdout, "\n"))
		if db.code != sbCode {
			t.Errorf("--verbosity=%s: dbmark exit %d, sysbench exit %d (%s)", v, db.code, sbCode, lastLine(sbOut))
		}
		if sbCode == 0 && !strings.Contains(db.stdout, "transactions:") {
			t.Errorf("--verbosity=%s: dbmark printed no summary:\n%s", v, db.stdout)
		}
		if sbCode != 0 && (strings.Count(strings.TrimSpace(db.stderr), "\n") != 0 || !strings.Contains(db.stderr, "verbosity")) {
			t.Errorf("--verbosity=%s: want one line naming --verbosity:\n%s", v, db.stderr)
		}
	}
}

// reLive is sysbench's --report-interval line, field by field; what follows
// reconn/s is captured last (nothing for sysbench, dbmark's further
// percentiles for dbmark).
var reLive = regexp.MustCompile(`^\[ (\d+)s \] thds: (\d+) tps: (\d+\.\d{2}) qps: (\d+\.\d{2}) \(r/w/o: (\d+\.\d{2})/(\d+\.\d{2})/(\d+\.\d{2})\) lat \(ms,(\d+)%\): (\d+\.\d{2}) err/s: (\d+\.\d{2}) reconn/s: (\d+\.\d{2})(.*)$`)

// liveLines are the lines of out that start as a report-interval line,
// each split by reLive (nil where it does not match).
func liveLines(out string) (lines []string, fields [][]string) {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "[ ") {
			lines = append(lines, l)
			fields = append(fields, reLive.FindStringSubmatch(l))
		}
	}
	return lines, fields
}

// testLiveLine runs oltp_read_write with --report-interval=1 with both
// tools and parses every live line of both with the same expression.
func testLiveLine(t *testing.T, e *engine) {
	ctx := t.Context()
	args := []string{"--tables=" + strconv.Itoa(tables), "--table-size=" + strconv.Itoa(tableSize), "--threads=2", "--time=3", "--report-interval=1"}
	sbOut := sysbench(t, ctx, e, "oltp_read_write", append(args, "run")...)
	dbOut := dbmark(t, ctx, append([]string{"run", "oltp_read_write", "--target", e.target, "--no-store", "-q"}, args...)...)
	for _, tool := range []struct{ name, out string }{{"sysbench", sbOut}, {"dbmark", dbOut}} {
		lines, fields := liveLines(tool.out)
		judged := 0
		if len(lines) < 2 {
			t.Fatalf("%s printed %d live lines in 3 s, want 2 or more:\n%s", tool.name, len(lines), tool.out)
		}
		for i, f := range fields {
			t.Logf("%-8s %s", tool.name, lines[i])
			if f == nil {
				t.Errorf("%s's line does not parse as sysbench's: %q", tool.name, lines[i])
				continue
			}
			// sysbench's thds are the threads still running: its last
			// line can count one that has already finished its run.
			thdsOK := f[2] == "2" || tool.name == "sysbench" && i == len(lines)-1 && f[2] == "1"
			if f[1] != strconv.Itoa(i+1) || !thdsOK || f[8] != "95" {
				t.Errorf("%s: time %ss, thds %s, percentile %s%%: want %ds, 2, 95%%", tool.name, f[1], f[2], f[8], i+1)
			}
			if tool.name == "sysbench" && f[12] != "" {
				t.Errorf("sysbench's line has more than the expression knows: %q", f[12])
			}
			num := func(j int) float64 { v, _ := strconv.ParseFloat(f[j], 64); return v }
			tps, qps, r, w, o := num(3), num(4), num(5), num(6), num(7)
			if d := qps - (r + w + o); d > 0.02 || d < -0.02 {
				t.Errorf("%s: qps %.2f is not r+w+o %.2f", tool.name, qps, r+w+o)
			}
			// 14 reads and 4 writes per transaction: within an interval
			// the statements of transactions under way at its ends blur
			// it. Two clients in a deadlock wait out the server's
			// deadlock timeout (1 s), which can leave an interval with a
			// handful of transactions, or none: too few to judge.
			if tps < 20 {
				continue
			}
			judged++
			if r/tps < 12 || r/tps > 16 || w/tps < 3 || w/tps > 5 {
				t.Errorf("%s: %.2f reads and %.2f writes per transaction, want about 14 and 4", tool.name, r/tps, w/tps)
			}
		}
		if judged == 0 {
			t.Errorf("%s: no live line with 20 transactions or more:\n%s", tool.name, tool.out)
		}
	}
}

// testFatalExit makes every UPDATE of sbtest1 fail with an error neither
// tool goes on after (a trigger raising one) and requires dbmark's exit code
// to be sysbench's; likewise for a table that is not there.
func testFatalExit(t *testing.T, e *engine) {
	ctx := t.Context()
	c, err := e.connect(ctx, compatDB)
	if err != nil {
		t.Fatalf("%s: connect to %s: %v", e.name, compatDB, err)
	}
	defer c.Close()
	create := []string{"CREATE TRIGGER compat_fatal BEFORE UPDATE ON sbtest1 FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'compat: no updates'"}
	drop := []string{"DROP TRIGGER IF EXISTS compat_fatal"}
	if e.name == "PostgreSQL" {
		create = []string{"CREATE FUNCTION compat_fatal() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'compat: no updates'; END$$",
			"CREATE TRIGGER compat_fatal BEFORE UPDATE ON sbtest1 FOR EACH ROW EXECUTE FUNCTION compat_fatal()"}
		drop = []string{"DROP TRIGGER IF EXISTS compat_fatal ON sbtest1", "DROP FUNCTION IF EXISTS compat_fatal()"}
	}
	for _, q := range create {
		mustExec(t, c, q)
	}
	dropped := false
	dropTrigger := func() {
		if !dropped {
			for _, q := range drop {
				mustExec(t, c, q)
			}
			dropped = true
		}
	}
	defer dropTrigger()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"error_in_run", []string{"--tables=1", "--table-size=" + strconv.Itoa(tableSize), "--events=10", "--time=0"}},
		{"missing_table", []string{"--tables=" + strconv.Itoa(tables+1), "--table-size=" + strconv.Itoa(tableSize), "--events=10", "--time=0"}},
	} {
		if tc.name == "missing_table" {
			dropTrigger()
		}
		t.Run(tc.name, func(t *testing.T) {
			sbOut, sbCode := sysbenchCode(t, ctx, e, "oltp_update_index", append(tc.args, "run")...)
			db := dbmarkCode(t, ctx, append([]string{"run", "oltp_update_index", "--target", e.target, "--no-store", "-q"}, tc.args...)...)
			t.Logf("sysbench: exit %d: %s", sbCode, lastLine(sbOut))
			t.Logf("dbmark:   exit %d: %s", db.code, lastLine(db.stderr))
			if sbCode == 0 {
				t.Fatalf("sysbench succeeded: the test's premise is wrong:\n%s", sbOut)
			}
			switch {
			case sbCode > 128 && e.name == "PostgreSQL" && tc.name == "missing_table":
				// sysbench 1.0.20's pgsql driver crashes on a missing
				// table; dbmark refuses it as any failed setup (docs/oltp.md).
				if db.code != 1 {
					t.Errorf("dbmark exit %d, want 1 (sysbench crashed: exit %d)", db.code, sbCode)
				}
			case db.code != sbCode:
				t.Errorf("dbmark exit %d, sysbench exit %d", db.code, sbCode)
			}
			if tc.name == "error_in_run" && !strings.Contains(lastLine(db.stderr), "compat: no updates") {
				t.Errorf("dbmark's last line does not carry the server's error: %q", db.stderr)
			}
		})
	}
}

// testPSModePostgres runs oltp_point_select on PostgreSQL with both tools,
// with --db-ps-mode auto and disable, and watches the statements the
// server sees (pg_stat_activity keeps each session's last statement): a
// prepared or extended-protocol statement shows its $1, a plain one the
// id in its text. Both tools must send the same kind in each mode.
func testPSModePostgres(t *testing.T, e *engine) {
	ctx := t.Context()
	args := []string{"--tables=" + strconv.Itoa(tables), "--table-size=" + strconv.Itoa(tableSize), "--threads=2", "--time=1"}
	for _, c := range []struct{ mode, want string }{
		{"auto", "SELECT c FROM sbtestN WHERE id=$N"},
		{"disable", "SELECT c FROM sbtestN WHERE id=N"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			opts := append(slices.Clone(args), "--db-ps-mode="+c.mode)
			sb := watchStatements(t, e, "SELECT c FROM", func() { sysbench(t, ctx, e, "oltp_point_select", append(opts, "run")...) })
			db := watchStatements(t, e, "SELECT c FROM", func() {
				dbmark(t, ctx, append([]string{"run", "oltp_point_select", "--target", e.target, "--no-store", "-q"}, opts...)...)
			})
			t.Logf("sysbench sent %q", sb)
			t.Logf("dbmark sent   %q", db)
			if !slices.Equal(sb, []string{c.want}) || !slices.Equal(db, sb) {
				t.Errorf("--db-ps-mode=%s: sysbench sent %q, dbmark %q; want %q", c.mode, sb, db, c.want)
			}
		})
	}
}

// testInsertPostgres watches the INSERTs oltp_insert sends to PostgreSQL
// with each tool, with --auto_inc on and off.
func testInsertPostgres(t *testing.T, e *engine) {
	ctx := t.Context()
	for _, autoInc := range []string{"on", "off"} {
		t.Run("auto_inc="+autoInc, func(t *testing.T) {
			// A second of inserts, not a count: 300 took a tenth of one,
			// which a loaded machine's polls of pg_stat_activity can miss.
			args := []string{"--tables=" + strconv.Itoa(tables), "--table-size=" + strconv.Itoa(tableSize), "--time=1", "--auto_inc=" + autoInc}
			sb := watchStatements(t, e, "INSERT INTO", func() { sysbench(t, ctx, e, "oltp_insert", append(args, "run")...) })
			db := watchStatements(t, e, "INSERT INTO", func() {
				dbmark(t, ctx, append([]string{"run", "oltp_insert", "--target", e.target, "--no-store", "-q"}, args...)...)
			})
			t.Logf("sysbench sent %q", sb)
			t.Logf("dbmark sent   %q", db)
			if len(sb) != 1 || !slices.Equal(db, sb) {
				t.Errorf("--auto_inc=%s: sysbench sent %q, dbmark %q", autoInc, sb, db)
			}
		})
	}
}

// watchStatements runs run while sampling the statements starting with
// prefix that other sessions of compatDB last sent, and returns them in the
// form of normalStatement.
func watchStatements(t *testing.T, e *engine, prefix string, run func()) []string {
	t.Helper()
	c, err := e.connect(t.Context(), compatDB)
	if err != nil {
		t.Fatalf("%s: connect to %s: %v", e.name, compatDB, err)
	}
	defer c.Close()
	done := make(chan struct{})
	seen := make(chan []string)
	go func() {
		kinds := map[string]bool{}
		for {
			rows, err := c.Rows(t.Context(), `SELECT query FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid() AND starts_with(query, '`+prefix+`')`)
			if err == nil {
				for _, r := range rows {
					kinds[normalStatement(r[0])] = true
				}
			}
			select {
			case <-done:
				seen <- slices.Sorted(maps.Keys(kinds))
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	run()
	close(done)
	return <-seen
}

var reHistRow = regexp.MustCompile(`^([ 0-9.]{12}) \|(\**) *(\d+)$`)

// histogram is a latency histogram as sysbench prints it.
type histogram struct {
	header []string
	values []float64
	stars  []int
	counts []int64
	tail   string // the line after the rows
}

// parseHistogram finds the histogram in out and checks each row's layout:
// a 12-character value, " |", a 40-character field of stars, the count.
func parseHistogram(t *testing.T, tool, out string) histogram {
	t.Helper()
	lines := strings.Split(out, "\n")
	start := slices.Index(lines, "Latency histogram (values are in milliseconds)")
	if start < 0 || start+2 >= len(lines) {
		t.Fatalf("%s printed no histogram:\n%s", tool, out)
	}
	h := histogram{header: lines[start : start+2]}
	for _, l := range lines[start+2:] {
		m := reHistRow.FindStringSubmatch(l)
		if m == nil {
			h.tail = l
			break
		}
		if len(l) != 12+2+40+1+len(m[3]) {
			t.Errorf("%s: row %q is not laid out as value, bar of 40, count", tool, l)
		}
		v, _ := strconv.ParseFloat(strings.TrimSpace(m[1]), 64)
		n, _ := strconv.ParseInt(m[3], 10, 64)
		h.values, h.stars, h.counts = append(h.values, v), append(h.stars, len(m[2])), append(h.counts, n)
	}
	return h
}

// testHistogram runs oltp_point_select with --histogram with both tools and
// compares the histograms' shape: the same header and trailing line, rows in
// ascending buckets, every event counted, bars scaled to 40 stars as sysbench
// scales them.
func testHistogram(t *testing.T, e *engine) {
	ctx := t.Context()
	const n = 2000
	args := []string{"--tables=" + strconv.Itoa(tables), "--table-size=" + strconv.Itoa(tableSize), "--events=" + strconv.Itoa(n), "--time=0", "--histogram"}
	sbOut := sysbench(t, ctx, e, "oltp_point_select", append(args, "run")...)
	dbOut := dbmark(t, ctx, append([]string{"run", "oltp_point_select", "--target", e.target, "--no-store", "-q"}, args...)...)
	sb, db := parseHistogram(t, "sysbench", sbOut), parseHistogram(t, "dbmark", dbOut)
	t.Logf("sysbench: %d rows from %.3f to %.3f ms", len(sb.values), sb.values[0], sb.values[len(sb.values)-1])
	t.Logf("dbmark:   %d rows from %.3f to %.3f ms", len(db.values), db.values[0], db.values[len(db.values)-1])
	if !slices.Equal(sb.header, db.header) || sb.tail != db.tail {
		t.Errorf("header or closing line differ:\n  sysbench %q %q\n  dbmark   %q %q", sb.header, sb.tail, db.header, db.tail)
	}
	for _, h := range []struct {
		tool string
		h    histogram
	}{{"sysbench", sb}, {"dbmark", db}} {
		var total, most int64
		for _, c := range h.h.counts {
			total += c
			most = max(most, c)
		}
		if total != n {
			t.Errorf("%s's histogram counts %d events, want %d", h.tool, total, n)
		}
		if !slices.IsSorted(h.h.values) {
			t.Errorf("%s's rows are not in ascending order: %v", h.tool, h.h.values)
		}
		// Both tools' rows are sysbench's buckets: 1024 spaced evenly on
		// a log scale from 0.001 ms to 100 s (checked from 0.2 ms up,
		// where three decimals tell the buckets apart).
		step := math.Log(1e8) / 1023
		for _, v := range h.h.values {
			if v < 0.2 {
				continue
			}
			if b := 0.001 * math.Exp(math.Round(math.Log(v/0.001)/step)*step); math.Abs(b-v) > 0.0006 {
				t.Errorf("%s: row %.3f is not a bucket of sysbench's (nearest %.4f)", h.tool, v, b)
			}
		}
		for i, c := range h.h.counts {
			if want := int(float64(c)*40/float64(most) + 0.5); h.h.stars[i] != want {
				t.Errorf("%s: %d events drawn with %d stars, want %d (the fullest bucket, %d, has 40)", h.tool, c, h.h.stars[i], want, most)
			}
		}
	}
}

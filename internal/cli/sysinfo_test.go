package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

// fixture is a saved /proc and /sys of a bare-metal server whose RAID1 is
// running its check.
var fixture, _ = filepath.Abs("../probe/testdata/baremetal")

func TestSysinfo(t *testing.T) {
	home(t)
	ctx := context.Background()
	o := dbmark(t, ctx, "sysinfo", "--probe-root", fixture)
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	for _, want := range []string{"Xeon(R) Gold 6240R", "2 socket(s), 4 core(s)", "raid md0:", "raid1 of sda2 sdb2", "sync check",
		"lvm dm-0:", "vgdata-mysql on md1", "governor:", "powersave", "warning: RAID md0: a check is running"} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("sysinfo lacks %q:\n%s", want, o.stdout)
		}
	}
	o = dbmark(t, ctx, "sysinfo", "--json", "--probe-root", fixture)
	var info struct {
		Environment result.Environment `json:"environment"`
		Warnings    []string           `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &info); err != nil {
		t.Fatalf("sysinfo --json: %v\n%s", err, o.stdout)
	}
	if info.Environment.MachineFacts == nil || len(info.Environment.RAID) != 2 || len(info.Warnings) == 0 {
		t.Fatalf("sysinfo --json: %+v", info)
	}
}

func TestSysinfoWithEngines(t *testing.T) {
	for _, env := range []string{"DBMARK_TEST_POSTGRES", "DBMARK_TEST_MYSQL"} {
		t.Run(env, func(t *testing.T) {
			tgt := serverURL(t, env).String()
			home(t)
			o := dbmark(t, context.Background(), "sysinfo", "--json", "--target", tgt)
			if o.code != 0 {
				t.Fatalf("exit %d: %s", o.code, o.stderr)
			}
			var info struct {
				Target result.Target `json:"target"`
			}
			if err := json.Unmarshal([]byte(o.stdout), &info); err != nil {
				t.Fatal(err)
			}
			f := info.Target.EngineFacts
			// The test servers are started with settings of their own
			// (scripts/testenv.sh), so some differ from the defaults.
			if f == nil || f.CacheBytes == 0 || len(f.NonDefault) == 0 || info.Target.Version == "" {
				t.Fatalf("engine facts: %+v", info.Target)
			}
			if strings.Contains(o.stdout, ":bench@") || strings.Contains(o.stdout, ":pw@") {
				t.Error("a password was printed")
			}
		})
	}
	o := dbmark(t, context.Background(), "sysinfo", "--target", "nosuch://x")
	oneLineError(t, o, "unknown scheme")
}

func TestStrictRefusesWhileAWarningStands(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	args := []string{"run", "oltp_point_select", "--time", "1s", "--table-size", "100", "--probe-root", fixture}
	o := dbmark(t, ctx, append(args, "--strict")...)
	oneLineError(t, o, "--strict: ")
	if !strings.Contains(o.stderr, "RAID md0") {
		t.Errorf("the refusal should name the warning: %s", o.stderr)
	}
	// Without --strict the run goes on and keeps the warnings and facts.
	path := filepath.Join(dir, "r.json")
	o = dbmark(t, ctx, append(args, "--json", path, "--sample-interval", "200ms")...)
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	r := readResult(t, path)
	if len(r.Warnings) == 0 || !strings.Contains(r.Warnings[0], "RAID md0") || len(r.Environment.RAID) != 2 {
		t.Fatalf("warnings %q, raid %+v", r.Warnings, r.Environment.RAID)
	}
	if r.Target.EngineFacts == nil || r.Target.NonDefault["journal_mode"].Value != "wal" {
		t.Errorf("engine facts: %+v", r.Target.EngineFacts)
	}
	// The fixture's counters do not move, but they are sampled on the
	// run's time axis all the same, beside SQLite's page cache counters:
	// point selects hit the cache.
	if r.Counters == nil || len(r.Counters.Series) == 0 {
		t.Fatalf("counters: %+v", r.Counters)
	}
	hits := 0.0
	for _, s := range r.Counters.Series {
		if s.Name == "db.blocks_hit" {
			for _, p := range s.Points {
				hits += p[1]
			}
		}
		for _, p := range s.Points {
			if p[0] < 0 || p[0] > r.EndedAt.Sub(r.StartedAt).Seconds()+1 {
				t.Fatalf("%s: point at t=%v is off the run's axis", s.Name, p[0])
			}
		}
	}
	if hits == 0 {
		t.Errorf("no page cache hits sampled during point selects: %+v", r.Counters)
	}
}

func TestSamplingOnAServer(t *testing.T) {
	tgt := serverURL(t, "DBMARK_TEST_MYSQL").String()
	dir := home(t)
	ctx := context.Background()
	args := []string{"--target", tgt, "--tables", "1", "--table-size", "1000"}
	prepared(t, "oltp_point_select", args...)
	path := filepath.Join(dir, "r.json")
	o := dbmark(t, ctx, append([]string{"run", "oltp_point_select", "--time", "3s", "--report-interval", "1s",
		"--show", "rows_read,threads_running,iowait", "--json", path, "--no-store"}, args...)...)
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	if !strings.Contains(o.stdout, "rows_read: ") || !strings.Contains(o.stdout, "cpu.iowait: ") {
		t.Errorf("live lines lack the --show counters:\n%s", o.stdout)
	}
	r := readResult(t, path)
	byName := map[string]result.CounterSeries{}
	for _, s := range r.Counters.Series {
		byName[s.Name] = s
	}
	rr, ok := byName["db.rows_read"]
	if !ok || len(rr.Points) < 2 || rr.Unit != "/s" {
		t.Fatalf("db.rows_read: %+v", rr)
	}
	// Point selects read rows: the rate must be there, not zero.
	if rr.Points[len(rr.Points)-1][1] <= 0 {
		t.Errorf("rows read per second = %v during a point-select run", rr.Points)
	}
	if _, ok := byName["os.cpu.user"]; !ok {
		t.Error("no OS counters")
	}
}

func TestExportRedacts(t *testing.T) {
	// A data directory under a user's home: its path is in the result
	// (the embedded database's URL, the data directory's mount).
	dir := filepath.Join(home(t), "home", "alice", ".local", "share", "dbmark")
	t.Setenv("DBMARK_HOME", dir)
	ctx := context.Background()
	o := dbmark(t, ctx, "run", "oltp_point_select", "--time", "1s", "--table-size", "100", "--sample-interval", "0")
	if o.code != 0 {
		t.Fatalf("run: %d %s", o.code, o.stderr)
	}
	o = dbmark(t, ctx, "results", "export", "1")
	if o.code != 0 {
		t.Fatalf("export: %d %s", o.code, o.stderr)
	}
	r, err := result.Unmarshal([]byte(o.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if r.Environment.Hostname != "(redacted)" {
		t.Errorf("export kept the host name %q", r.Environment.Hostname)
	}
	if strings.Contains(o.stdout, "alice") {
		t.Errorf("export kept the user's home directory %s", dir)
	}
	if r.Counters != nil {
		t.Errorf("--sample-interval 0 should sample nothing: %+v", r.Counters)
	}
	o = dbmark(t, ctx, "results", "export", "1", "--no-redact")
	if r, err = result.Unmarshal([]byte(o.stdout)); err != nil || r.Environment.Hostname == "(redacted)" || !strings.Contains(o.stdout, dir) {
		t.Errorf("--no-redact: %v %q, data directory kept: %v", err, r.Environment.Hostname, strings.Contains(o.stdout, dir))
	}
}

package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// mdstat lines of the fixture's md0, idle and running a check.
const (
	md0Idle     = "md0 : active raid1 sdb2[1] sda2[0]\n      976628736 blocks super 1.2 [2/2] [UU]\n      bitmap: 0/8 pages [0KB], 65536KB chunk\n\n"
	md0Checking = "md0 : active raid1 sdb2[1] sda2[0]\n      976628736 blocks super 1.2 [2/2] [UU]\n      [=======>.............]  check = 37.5% (366235776/976628736) finish=98.4min speed=103365K/sec\n      bitmap: 0/8 pages [0KB], 65536KB chunk\n\n"
)

// machineRoot copies the bare-metal fixture (its RAID idle) where a test
// may change it while a run reads it, and returns its root and a function
// that sets md0's state.
func machineRoot(t *testing.T) (string, func(md0 string)) {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	write := func(path, b string) {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(b), 0o644); err != nil {
			t.Error(err)
			return
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Error(err)
		}
	}
	// /proc/mdstat, and /sys as the machine's facts read it.
	set := func(md0 string) {
		action, done := "idle\n", "none\n"
		if md0 == md0Checking {
			action, done = "check\n", "732471552 / 1953257472\n"
		}
		write(filepath.Join(root, "sys", "block", "md0", "md", "sync_action"), action)
		write(filepath.Join(root, "sys", "block", "md0", "md", "sync_completed"), done)
		write(filepath.Join(root, "proc", "mdstat"), "Personalities : [raid1]\n"+md0+"unused devices: <none>\n")
	}
	set(md0Idle)
	return root, set
}

// A RAID check that starts in the middle of a run is named with when it
// began and how long it has left; a run that waits for an idle machine
// (--wait-idle) waits for it to end.
func TestMachineWatchedThroughTheRun(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	root, setMD0 := machineRoot(t)
	path := filepath.Join(dir, "r.json")
	go func() {
		time.Sleep(1500 * time.Millisecond)
		setMD0(md0Checking)
	}()
	o := dbmark(t, ctx, "run", "oltp_point_select", "--time", "3s", "--table-size", "100", "--probe-root", root,
		"--sample-interval", "200ms", "--json", path)
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	if strings.Contains(o.stderr, "RAID md0: a check is running") {
		t.Errorf("the preflight saw a check before it began: %s", o.stderr)
	}
	began := regexp.MustCompile(`RAID md0: a sync \(check, resync or rebuild\) began (\d+) s into the run \(38% done by its end, about 98 min left\)`)
	r := readResult(t, path)
	var found string
	for _, w := range r.Summary.Warnings {
		if began.MatchString(w) {
			found = w
		}
	}
	if found == "" {
		t.Fatalf("the run's warnings do not name the check that began during it: %q", r.Summary.Warnings)
	}
	if !strings.Contains(o.stdout, "warning: "+found) {
		t.Errorf("the summary does not show %q:\n%s", found, o.stdout)
	}

	// The check runs: --wait-idle waits for it, and it ends.
	go func() {
		time.Sleep(2500 * time.Millisecond)
		setMD0(md0Idle)
	}()
	o = dbmark(t, ctx, "run", "oltp_point_select", "--time", "1s", "--table-size", "100", "--probe-root", root, "--wait-idle", "30s", "--no-store")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	for _, want := range []string{"waiting up to 30s for the machine to be idle: RAID md0: a check is running (38% done, about 98 min left)", "the machine was idle after"} {
		if !strings.Contains(o.stderr, want) {
			t.Errorf("--wait-idle: stderr lacks %q:\n%s", want, o.stderr)
		}
	}
	if strings.Contains(o.stderr, "RAID md0: a check is running (") && strings.Contains(o.stderr, "warning: RAID md0") {
		t.Errorf("the run started before the check ended:\n%s", o.stderr)
	}
	// Still running when the wait is over: it says so and runs.
	setMD0(md0Checking)
	o = dbmark(t, ctx, "run", "oltp_point_select", "--time", "1s", "--table-size", "100", "--probe-root", root, "--wait-idle", "1s", "--no-store")
	if o.code != 0 || !strings.Contains(o.stderr, "still busy after --wait-idle 1s; running all the same") || !strings.Contains(o.stderr, "warning: RAID md0: a check is running") {
		t.Errorf("--wait-idle 1s on a busy machine: exit %d\n%s", o.code, o.stderr)
	}
}

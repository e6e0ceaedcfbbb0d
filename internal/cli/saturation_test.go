package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/dbmark/dbmark/internal/workload/workloadtest"
)

// A CPU-bound run (eight clients of the embedded database on this
// machine's CPUs) says the CPUs were at their limit. Read-only
// transactions, whose range queries keep the CPUs busy: point selects
// leave them 15% idle on SQLite's locks, at the verdict's edge. The
// verdict needs three samples of the CPUs; the sampler's clock ticks an
// instant before each second of the run, so a 3 s run's third sample
// races the run's end, and on a loaded machine, which takes it after the
// end, is dropped: the run is 4 s.
func TestSaturationVerdict(t *testing.T) {
	home(t)
	o := dbmark(t, context.Background(), "run", "oltp_read_only", "--threads", "8", "--time", "4s")
	if o.code != 0 {
		t.Fatalf("run: %s", o.stderr)
	}
	if !strings.Contains(o.stdout, "What saturated (on this machine): CPUs 85% busy or more") {
		t.Errorf("no CPU verdict:\n%s", o.stdout)
	}
	if o := dbmark(t, context.Background(), "results", "show", "1"); !strings.Contains(o.stdout, "What saturated (on this machine): CPUs 85% busy or more") {
		t.Errorf("results show lacks the verdict:\n%s", o.stdout)
	}
}

// A run on a server of this machine, over TCP on loopback, says the
// network is not its limit, and why. The verdict needs sampled counters:
// a run of 3 s has rates from two or more samples of a 1 s interval
// even when a loaded machine takes the last one after the run's end
// (which the sampler drops).
func TestSaturationLoopback(t *testing.T) {
	raw := os.Getenv("DBMARK_TEST_POSTGRES")
	if raw == "" {
		t.Skip("DBMARK_TEST_POSTGRES not set (scripts/testenv.sh env)")
	}
	home(t)
	data := []string{"--target", workloadtest.PostgresDB(t, raw, "dbmark_saturation"), "--tables", "1", "--table-size", "100"}
	prepared(t, "oltp_point_select", data...)
	o := dbmark(t, context.Background(), append([]string{"run", "oltp_point_select", "--time", "3s", "--no-store"}, data...)...)
	if o.code != 0 {
		t.Fatalf("run: %s", o.stderr)
	}
	if !strings.Contains(o.stdout, "the network is not a limit: the server runs on this machine") {
		t.Errorf("the verdict does not set the network aside:\n%s", o.stdout)
	}
}

// An I/O-bound run (sixteen threads writing with O_DIRECT and an fsync
// after each write, on a disk, not tmpfs) names the disk.
func TestSaturationDisk(t *testing.T) {
	home(t)
	dir := diskDir(t)
	files := []string{"--dir", dir, "--file-num", "2", "--file-total-size", "32M"}
	if o := dbmark(t, context.Background(), append([]string{"prepare", "fileio"}, files...)...); o.code != 0 {
		t.Fatalf("prepare: %s", o.stderr)
	}
	o := dbmark(t, context.Background(), append([]string{"run", "fileio", "--mode", "rndwr", "--direct", "--fsync-all", "--threads", "16",
		"--time", "4s", "--report-interval", "500ms", "--no-store"}, files...)...)
	if o.code != 0 {
		t.Fatalf("run: %s", o.stderr)
	}
	if !regexp.MustCompile(`What saturated \(on this machine\): .*disk \S+ busy`).MatchString(o.stdout) {
		t.Errorf("the verdict names no disk:\n%s", o.stdout)
	}
	t.Logf("%s", o.stdout[strings.Index(o.stdout, "What saturated"):])
	if strings.Contains(o.stdout, "network") {
		t.Errorf("a file run's verdict speaks of the network:\n%s", o.stdout)
	}
}

// diskDir is a directory for the test on a disk: the temporary directory
// unless it is in memory (tmpfs), else one beside the test's package.
func diskDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	const tmpfsMagic, ramfsMagic = 0x01021994, 0x858458f6
	if st.Type != tmpfsMagic && st.Type != ramfsMagic {
		return dir
	}
	dir, err := os.MkdirTemp(".", "iotest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

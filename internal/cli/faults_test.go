package cli_test

// Faults made on purpose against the built binary and the private test
// servers: signals, kill -9 in the middle of keeping the result, and a
// full filesystem (a small tmpfs, where the machine lets the test mount
// one).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbmark/dbmark/internal/result"
)

var binary struct {
	once sync.Once
	path string
	err  error
}

// dbmarkBinary builds cmd/dbmark once per test process, into a directory
// of its own that the next run of this package replaces. It is built with
// the tags of `make build` and of the tests (sqlite_dbstat): then the
// packages already built for the tests serve it, where other tags would
// compile SQLite's C source once more.
func dbmarkBinary(t *testing.T) string {
	t.Helper()
	binary.once.Do(func() {
		wd, err := os.Getwd()
		if err != nil {
			binary.err = err
			return
		}
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("dbmark-cli-faults-%x", sha256.Sum256([]byte(wd)))[:len("dbmark-cli-faults-")+12])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			binary.err = err
			return
		}
		path := filepath.Join(dir, "dbmark")
		cmd := exec.Command("go", "build", "-tags", "sqlite_dbstat", "-o", path, "../../cmd/dbmark")
		if out, err := cmd.CombinedOutput(); err != nil {
			binary.err = fmt.Errorf("go build: %v: %s", err, out)
			return
		}
		binary.path = path
	})
	if binary.err != nil {
		t.Fatalf("build dbmark: %v", binary.err)
	}
	return binary.path
}

// syncBuffer is a buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a running dbmark.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	err            error
}

func startDbmark(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(dbmarkBinary(t), args...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// waitFor waits until stdout holds s, or fails the test.
func (p *proc) waitFor(t *testing.T, s string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(p.stdout.String(), s) {
		select {
		case <-p.done:
			t.Fatalf("dbmark ended before printing %q: %v\nstdout: %s\nstderr: %s", s, p.err, p.stdout, p.stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %s\nstdout: %s\nstderr: %s", s, within, p.stdout, p.stderr)
		}
	}
}

// wait waits for the end and returns the exit code.
func (p *proc) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		t.Fatalf("dbmark still running after %s\nstdout: %s\nstderr: %s", within, p.stdout, p.stderr)
	}
	var ee *exec.ExitError
	if p.err != nil && !errors.As(p.err, &ee) {
		t.Fatal(p.err)
	}
	return p.cmd.ProcessState.ExitCode()
}

// selectOne writes a pgbench script that touches no table, so a run on
// the shared test server needs no prepare and disturbs no other test.
func selectOne(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "select1.sql")
	if err := os.WriteFile(p, []byte("SELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func pgRunArgs(t *testing.T, time string, more ...string) []string {
	u := serverURL(t, "DBMARK_TEST_POSTGRES")
	return append([]string{"run", "tpcb", "-n", "-f", selectOne(t), "--target", u.String(), "--time", time}, more...)
}

func TestFaultSIGINTKeepsThePartialResult(t *testing.T) {
	dir := home(t)
	jsonPath := filepath.Join(dir, "r.json")
	p := startDbmark(t, pgRunArgs(t, "60", "--report-interval", "200ms", "--json", jsonPath)...)
	p.waitFor(t, "[ ", 30*time.Second)
	start := time.Now()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 30*time.Second); code != 130 {
		t.Fatalf("exit %d after one SIGINT, want 130\nstderr: %s", code, p.stderr)
	}
	t.Logf("ended %s after SIGINT", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(p.stderr.String(), "keeping what was measured") {
		t.Errorf("stderr %q: want the notice that the result is kept", p.stderr)
	}
	r := readResult(t, jsonPath)
	if r.Status != result.StatusInterrupted || r.Summary.Events == 0 {
		t.Fatalf("result: status %s, %d events; want an interrupted run with its events", r.Status, r.Summary.Events)
	}
	if o := dbmark(t, context.Background(), "results", "list", "--status", "interrupted"); !strings.Contains(o.stdout, "interrupted") {
		t.Fatalf("the interrupted run is not in the store: %s %s", o.stdout, o.stderr)
	}
}

func TestFaultSecondSIGINTQuitsAtOnce(t *testing.T) {
	home(t)
	p := startDbmark(t, pgRunArgs(t, "60", "--report-interval", "200ms")...)
	p.waitFor(t, "[ ", 30*time.Second)
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	// The first one is being handled (its notice is out) when the second comes.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.stderr.String(), "press Ctrl-C again"); {
		if time.Now().After(deadline) {
			t.Fatalf("no notice after the first SIGINT: %s", p.stderr)
		}
		time.Sleep(time.Millisecond)
	}
	second := time.Now()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 130 {
		t.Fatalf("exit %d after two SIGINTs, want 130\nstderr: %s", code, p.stderr)
	}
	// At once: no drain, no save. Generous for a loaded 2-core machine.
	if d := time.Since(second); d > 3*time.Second {
		t.Fatalf("ended %s after the second SIGINT; want at once", d)
	}
	if strings.Contains(p.stderr.String(), "goroutine ") {
		t.Fatalf("stack trace: %s", p.stderr)
	}
}

// TestFaultKillDuringResultWrite kills dbmark with SIGKILL at random
// moments around the end of short runs, when it writes --json and the
// store: the JSON file is always whole (old or new) and the store always
// opens, with no result lost that was reported saved.
func TestFaultKillDuringResultWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("30 runs killed on purpose; not in -short")
	}
	dir := home(t)
	jsonPath := filepath.Join(dir, "r.json")
	args := pgRunArgs(t, "300ms", "--report-interval", "100ms", "--json", jsonPath)
	// Runs to the end, to time one: the shortest of three, since a run
	// slowed by a busy machine would put most kills after the end.
	var full time.Duration
	for range 3 {
		start := time.Now()
		p := startDbmark(t, args...)
		if code := p.wait(t, 60*time.Second); code != 0 {
			t.Fatalf("exit %d: %s", code, p.stderr)
		}
		if d := time.Since(start); full == 0 || d < full {
			full = d
		}
	}
	readResult(t, jsonPath)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	saved, kills, whole := 3, 0, 0
	for i := 0; i < 30; i++ {
		began := time.Now()
		p := startDbmark(t, args...)
		// Uniform over the second half of a run and a little past its end.
		at := time.Duration(float64(full) * (0.5 + 0.6*rng.Float64()))
		select {
		case <-p.done:
			// A run that ended before its kill times the runs again: a
			// machine whose load fell since the first runs would put
			// most kills after the end.
			full = time.Since(began)
		case <-time.After(at):
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			kills++
		}
		<-p.done
		if strings.Contains(p.stdout.String(), "saved (") {
			saved++
		}
		if b, err := os.ReadFile(jsonPath); err != nil {
			t.Fatalf("after kill %d at %s: the JSON file is gone: %v", i, at, err)
		} else if _, err := result.Unmarshal(b); err != nil {
			t.Fatalf("after kill %d at %s: torn JSON file (%d bytes): %v", i, at, len(b), err)
		}
		whole++
		o := dbmark(t, context.Background(), "results", "list", "--limit", "1000")
		if o.code != 0 {
			t.Fatalf("after kill %d at %s: the store does not open: %s", i, at, o.stderr)
		}
		if n := strings.Count(o.stdout, "tpcb"); n < saved {
			t.Fatalf("after kill %d: %d results in the store, but %d runs said they saved theirs", i, n, saved)
		}
	}
	t.Logf("%d runs of %s, %d killed, JSON whole after every one, %d results saved", 30, full.Round(time.Millisecond), kills, saved)
	if kills < 10 {
		t.Fatalf("only %d of 30 runs were killed: the test did not test", kills)
	}
}

// tmpfs mounts a small tmpfs in a directory of the test, or skips.
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+size+",mode=0755"); err != nil {
		t.Skipf("cannot mount a %s tmpfs to fill up (%v): this test needs root where mounting is allowed", size, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes a file in dir until the filesystem has at most leave bytes
// free, and returns how many remain.
func fill(t *testing.T, dir string, leave int64) int64 {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		free := int64(st.Bavail) * st.Bsize
		if free <= leave {
			return free
		}
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, unix.ENOSPC) {
				return 0
			}
			t.Fatal(err)
		}
	}
}

// TestFaultENOSPCDuringFileio runs fileio on a tmpfs that fills up during
// the run: the files are sparse, so the writes into their holes need
// space that runs out. One line names the problem; what was measured is
// kept.
func TestFaultENOSPCDuringFileio(t *testing.T) {
	dir := home(t)
	mnt := tmpfs(t, "4m")
	args := []string{"--dir", mnt, "--file-num", "1", "--file-total-size", "2M", "--block-size", "16K"}
	if o := dbmark(t, context.Background(), append([]string{"prepare", "fileio"}, args...)...); o.code != 0 {
		t.Fatalf("prepare: %s", o.stderr)
	}
	file := filepath.Join(mnt, "test_file.0")
	if err := os.Truncate(file, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, 2<<20); err != nil { // all holes again
		t.Fatal(err)
	}
	free := fill(t, mnt, 256<<10)
	if free < 64<<10 {
		t.Fatalf("%d bytes left free: want room for a few blocks", free)
	}
	jsonPath := filepath.Join(dir, "r.json")
	o := dbmark(t, context.Background(), append([]string{"run", "fileio", "--mode", "seqrewr", "--time", "30", "--json", jsonPath}, args...)...)
	if o.code != 2 {
		t.Fatalf("exit %d, want 2 (the run failed)\nstderr: %s", o.code, o.stderr)
	}
	lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "dbmark: ") || !strings.Contains(last, "no space left on device") ||
		!strings.Contains(last, "test_file.0") || !strings.Contains(last, "partial result was kept") {
		t.Fatalf("stderr %q: want one line naming the file, no space left and the kept result", o.stderr)
	}
	if strings.Contains(o.stderr, "goroutine ") {
		t.Fatalf("stack trace: %s", o.stderr)
	}
	r := readResult(t, jsonPath)
	var writes int64
	for _, op := range r.Summary.Ops {
		if op.Name == "write" {
			writes = op.Count
		}
	}
	if r.Status != result.StatusFailed || writes < 4 {
		t.Fatalf("result: status %s, %d writes; want a failed run that kept the writes before the disk filled (%d bytes were free)", r.Status, writes, free)
	}
	if ls := dbmark(t, context.Background(), "results", "list", "--status", "failed"); !strings.Contains(ls.stdout, "fileio") {
		t.Fatalf("the failed run is not in the store: %s", ls.stdout)
	}
}

// TestFaultENOSPCDuringStoreSave fills the store's filesystem during the
// run: saving fails, dbmark says so in one line and exits non-zero, and
// the result is kept in a file in the data directory.
func TestFaultENOSPCDuringStoreSave(t *testing.T) {
	dir := home(t)
	mnt := tmpfs(t, "2m")
	storePath := filepath.Join(mnt, "results.db")
	if o := dbmark(t, context.Background(), "results", "list", "--store", storePath); o.code != 0 {
		t.Fatalf("create the store: %s", o.stderr)
	}
	p := startDbmark(t, pgRunArgs(t, "2", "--report-interval", "200ms", "--store", storePath)...)
	p.waitFor(t, "[ ", 30*time.Second)
	fill(t, mnt, 0)
	code := p.wait(t, 60*time.Second)
	if code == 0 {
		t.Fatalf("exit 0 with the store's disk full\nstderr: %s", p.stderr)
	}
	stderr := p.stderr.String()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "dbmark: ") || !strings.Contains(last, "store") || !strings.Contains(last, "full") {
		t.Fatalf("stderr %q: want a last line saying the store is full", stderr)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "unsaved-*.json"))
	if len(kept) != 1 {
		t.Fatalf("%d unsaved-*.json files in the data directory, want 1\nstderr: %s", len(kept), stderr)
	}
	if !strings.Contains(stderr, kept[0]) {
		t.Errorf("stderr %q does not say where the result went (%s)", stderr, kept[0])
	}
	r := readResult(t, kept[0])
	if r.Status != result.StatusOK || r.Summary.Events == 0 {
		t.Fatalf("kept result: status %s, %d events", r.Status, r.Summary.Events)
	}
}

// TestFaultNowhereToKeepTheResult fills the disk that holds the store,
// the data directory and the --json file: dbmark says in one line that
// the result is lost, and still prints what it measured.
func TestFaultNowhereToKeepTheResult(t *testing.T) {
	mnt := tmpfs(t, "2m")
	t.Setenv("DBMARK_HOME", filepath.Join(mnt, "home"))
	storePath := filepath.Join(mnt, "results.db")
	if o := dbmark(t, context.Background(), "results", "list", "--store", storePath); o.code != 0 {
		t.Fatalf("create the store: %s", o.stderr)
	}
	p := startDbmark(t, pgRunArgs(t, "2", "--report-interval", "200ms", "--store", storePath, "--json", filepath.Join(mnt, "r.json"))...)
	p.waitFor(t, "[ ", 30*time.Second)
	fill(t, mnt, 0)
	if code := p.wait(t, 60*time.Second); code == 0 {
		t.Fatalf("exit 0 with nowhere to keep the result\nstderr: %s", p.stderr)
	}
	stderr := strings.TrimSpace(p.stderr.String())
	lines := strings.Split(stderr, "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "dbmark: ") || !strings.Contains(last, "could not be kept anywhere and is lost") {
		t.Fatalf("stderr %q: want a last line saying the result is lost", stderr)
	}
	if out := p.stdout.String(); !strings.Contains(out, "General statistics") {
		t.Fatalf("the summary of what was measured is missing:\n%s", out)
	}
}

// killedPrepare starts `dbmark prepare fileio` and kills it with SIGKILL
// once its first test file has data, before it has finished.
func killedPrepare(t *testing.T, args []string) {
	t.Helper()
	dir := args[1]
	p := startDbmark(t, append([]string{"prepare", "fileio"}, args...)...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if st, err := os.Stat(filepath.Join(dir, "test_file.0")); err == nil && st.Size() > 0 {
			break
		}
		select {
		case <-p.done:
			t.Fatalf("prepare ended before it was killed: %v\nstderr: %s", p.err, p.stderr)
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("prepare wrote nothing within 30s\nstderr: %s", p.stderr)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	if p.cmd.ProcessState.Success() {
		t.Fatal("prepare finished before the kill: the test did not test")
	}
}

// testFiles lists the test_file.* in dir.
func testFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "test_file.*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A prepare killed part-way leaves files that cleanup knows as dbmark's
// and removes; a run refuses them, a prepare of other sizes refuses them
// with a line saying to run cleanup, and a prepare of the same sizes
// writes them again.
func TestFaultKilledFileioPrepare(t *testing.T) {
	home(t)
	ctx := context.Background()
	dir := t.TempDir()
	args := []string{"--dir", dir, "--file-num", "4", "--file-total-size", "256M"}

	killedPrepare(t, args)
	if len(testFiles(t, dir)) == 0 {
		t.Fatal("the killed prepare left no files: the test did not test")
	}
	o := dbmark(t, ctx, append([]string{"run", "fileio", "--mode", "rndrd", "--time", "1", "--no-store"}, args...)...)
	oneLineError(t, o, "cut short")
	o = dbmark(t, ctx, "prepare", "fileio", "--dir", dir, "--file-num", "2", "--file-total-size", "1M")
	oneLineError(t, o, "cleanup fileio")
	o = dbmark(t, ctx, append([]string{"cleanup", "fileio"}, args...)...)
	if o.code != 0 || strings.Contains(o.stdout+o.stderr, "nothing to clean up") {
		t.Fatalf("cleanup after a killed prepare: exit %d\nstdout: %s\nstderr: %s", o.code, o.stdout, o.stderr)
	}
	if left := testFiles(t, dir); len(left) > 0 {
		t.Fatalf("cleanup left %v", left)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Fatalf("cleanup left %d entries in the directory, e.g. %s", len(ents), ents[0].Name())
	}

	killedPrepare(t, args)
	if o := dbmark(t, ctx, append([]string{"prepare", "fileio"}, args...)...); o.code != 0 {
		t.Fatalf("prepare after a killed prepare: exit %d: %s", o.code, o.stderr)
	}
	if o := dbmark(t, ctx, append([]string{"run", "fileio", "--mode", "rndrd", "--time", "0.2", "--no-store"}, args...)...); o.code != 0 {
		t.Fatalf("run after a whole prepare: exit %d: %s", o.code, o.stderr)
	}
	dbmark(t, ctx, append([]string{"cleanup", "fileio"}, args...)...)
}

package cli_test

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/target"
)

// A mistyped workload is reported as the workload, with the likely one,
// even when flags follow it; a mistyped flag offers the nearest flag.
func TestTyposGetDidYouMean(t *testing.T) {
	home(t)
	ctx := context.Background()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "oltp_read_wirte", "--time", "2"}, `unknown workload "oltp_read_wirte": did you mean oltp_read_write?`},
		{[]string{"run", "oltp_read_wirte"}, "did you mean oltp_read_write?"},
		{[]string{"prepare", "oltp_raed_only", "--tables", "2"}, "did you mean oltp_read_only?"},
		{[]string{"sweep", "oltp_point_selcet", "--threads", "1,2"}, "did you mean oltp_point_select?"},
		{[]string{"check", "tpbc", "--scale", "2"}, "did you mean tpcb?"},
		{[]string{"check", "tpbc"}, "did you mean tpcb?"},
		{[]string{"run", "oltp_read_write", "--tme", "2"}, "unknown flag: --tme: did you mean --time?"},
		{[]string{"run", "oltp_read_write", "--thread=2"}, "did you mean --threads?"},
		{[]string{"sweep", "oltp_read_write", "--thraeds", "1,2"}, "did you mean --threads?"},
		{[]string{"run", "tpcb", "--clinet", "2"}, "did you mean --client?"},
		{[]string{"run", "--time", "2", "oltp_read_wirte"}, "name the workload before its flags"},
	}
	for _, c := range cases {
		oneLineError(t, dbmark(t, ctx, c.args...), c.want)
	}
	// Nothing near enough: no guess.
	o := dbmark(t, ctx, "run", "xyzzy", "--time", "2")
	oneLineError(t, o, `unknown workload "xyzzy"`)
	o = dbmark(t, ctx, "run", "oltp_read_write", "--frobnicate")
	oneLineError(t, o, "unknown flag: --frobnicate")
	for _, o := range []outcome{o, dbmark(t, ctx, "run", "xyzzy")} {
		if strings.Contains(o.stderr, "did you mean") {
			t.Errorf("a guess for a name near nothing: %s", o.stderr)
		}
	}
}

// mountTmpfs mounts a tmpfs with the given options on a new directory and
// unmounts it when the test ends; it skips the test where the machine does
// not allow it (not root, no mount).
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root; run as root to test a full or read-only filesystem")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s); a full or read-only filesystem is not tested", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// --json naming a file that cannot be written fails at once, with one
// line, before anything is measured or stored.
func TestJSONPathCheckedBeforeTheRun(t *testing.T) {
	h := home(t)
	ctx := context.Background()
	ro := mountTmpfs(t, "ro,size=1m")
	cases := []struct {
		path, want string
	}{
		{filepath.Join(h, "no", "such", "dir", "r.json"), "does not exist"},
		{h, "is a directory"},
		{filepath.Join(ro, "r.json"), "read-only file system"},
	}
	for _, c := range cases {
		start := time.Now()
		o := dbmark(t, ctx, "run", "oltp_point_select", "--time", "30s", "--json", c.path)
		oneLineError(t, o, c.want)
		if !strings.Contains(o.stderr, "--json "+c.path) {
			t.Errorf("the line does not name --json %s: %s", c.path, o.stderr)
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("--json %s: failed after %v: the run was measured first", c.path, took)
		}
	}
	if _, err := os.Stat(filepath.Join(h, "bench.db")); err == nil {
		t.Error("the embedded database was prepared before --json was checked")
	}
	if l := dbmark(t, ctx, "results", "list"); strings.Count(strings.TrimSpace(l.stdout), "\n") != 0 {
		t.Errorf("a result was stored: %s", l.stdout)
	}
	// Nothing was left beside the targets, nor in the root directory.
	for _, dir := range []string{h, filepath.Dir(h), "/"} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.Contains(e.Name(), ".tmp") && strings.HasPrefix(e.Name(), ".") {
				t.Errorf("temporary file left: %s", filepath.Join(dir, e.Name()))
			}
		}
	}
}

// fillUp writes zeros to a file in dir until its filesystem is full.
func fillUp(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
}

// Listing, showing and exporting read the store: they work on a full disk.
func TestResultsReadOnAFullDisk(t *testing.T) {
	home(t)
	dir := mountTmpfs(t, "size=4m")
	t.Setenv("DBMARK_HOME", dir)
	ctx := context.Background()
	if o := dbmark(t, ctx, "run", "oltp_point_select", "--time", "1", "--table-size", "100"); o.code != 0 {
		t.Fatalf("run: exit %d: %s", o.code, o.stderr)
	}
	if err := os.Remove(filepath.Join(dir, "bench.db")); err != nil {
		t.Fatal(err)
	}
	fillUp(t, dir)
	for _, args := range [][]string{{"results", "list"}, {"results", "show", "1"}, {"results", "export", "1"}, {"results", "export", "1", "--format", "csv"}} {
		o := dbmark(t, ctx, args...)
		if o.code != 0 || !strings.Contains(o.stdout, "oltp_point_select") && !strings.Contains(o.stdout, "tps") {
			t.Errorf("%v on a full disk: exit %d, stdout %q, stderr %s", args, o.code, o.stdout, o.stderr)
		}
	}
}

// A store whose pages are garbage behind an intact first page is named as
// damaged, with what to do, and left exactly as it was.
func TestDamagedStoreIsNamedAndLeftAlone(t *testing.T) {
	h := home(t)
	ctx := context.Background()
	for range 2 {
		if o := dbmark(t, ctx, "run", "oltp_point_select", "--time", "0.5", "--table-size", "100"); o.code != 0 {
			t.Fatalf("run: exit %d: %s", o.code, o.stderr)
		}
	}
	path := filepath.Join(h, "results.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pageSize := int(b[16])<<8 | int(b[17])
	if pageSize == 1 {
		pageSize = 65536
	}
	if len(b) <= pageSize {
		t.Fatalf("the store has %d bytes: nothing behind its first page", len(b))
	}
	for i := pageSize; i < len(b); i++ {
		b[i] = byte(i*7919>>3) ^ 0xa5
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"results", "list"}, {"results", "show", "1"}, {"results", "export", "1"}, {"results", "delete", "1"},
		{"run", "oltp_point_select", "--time", "0.5", "--table-size", "100"},
	} {
		o := dbmark(t, ctx, args...)
		oneLineError(t, o, "is damaged")
		for _, want := range []string{path, "move it aside"} {
			if !strings.Contains(o.stderr, want) {
				t.Errorf("%v: %q does not say %q", args, o.stderr, want)
			}
		}
		if strings.Contains(o.stderr, "goose") {
			t.Errorf("%v: the migration's error leaks: %s", args, o.stderr)
		}
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, b) {
		t.Error("the damaged store was modified")
	}
}

// The reported case: the embedded database's first prepare fills the disk.
// The run fails; the next run refuses rather than measure an empty table;
// once there is room, a run prepares afresh and measures the whole table.
func TestPrepareOnAFullDiskIsNotBenchmarked(t *testing.T) {
	home(t)
	dir := mountTmpfs(t, "size=2m")
	t.Setenv("DBMARK_HOME", dir)
	ctx := context.Background()
	o := dbmark(t, ctx, "run", "oltp_read_write", "--time", "1")
	if o.code == 0 || !strings.Contains(o.stderr, "full") {
		t.Fatalf("run on a full disk: exit %d, want a failure saying the disk is full: %s", o.code, o.stderr)
	}
	o = dbmark(t, ctx, "run", "oltp_point_select", "--time", "1")
	if o.code == 0 || strings.Contains(o.stdout, "status: ok") {
		t.Fatalf("the run after a failed prepare measured: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	oneLineError(t, o, "")
	if out, err := exec.Command("mount", "-o", "remount,size=64m", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount with room: %v: %s", err, out)
	}
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	o = dbmark(t, ctx, "run", "oltp_point_select", "--time", "1", "--json", jsonPath)
	if o.code != 0 {
		t.Fatalf("run with room: exit %d: %s", o.code, o.stderr)
	}
	if n := rowCount(t, "sqlite://"+filepath.Join(dir, "bench.db"), "sbtest1"); n != 10000 {
		t.Errorf("sbtest1 has %d rows after the run prepared it again, want 10000", n)
	}
}

// rowCount counts a table's rows through dbmark's own target.
func rowCount(t *testing.T, raw, table string) int64 {
	t.Helper()
	ctx := context.Background()
	c := connect(t, raw)
	v, _, err := c.QueryRow(ctx, "SELECT COUNT(*) FROM "+table)
	if err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

func connect(t *testing.T, raw string) target.Conn {
	t.Helper()
	ctx := context.Background()
	app := cli.NewApp(io.Discard, io.Discard, nil)
	tg, err := app.Targets.Open(ctx, raw, target.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", raw, err)
	}
	t.Cleanup(func() { tg.Close() })
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatalf("connect to %s: %v", tg.Redacted(), err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// faultsDB is this file's own database on the test servers.
const faultsDB = "dbmark_faults_prepare"

// faultTargets are a SQLite file and, when the test servers are up, a
// database of this test's own on PostgreSQL and on MariaDB.
func faultTargets(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{"sqlite": "sqlite://" + filepath.Join(t.TempDir(), "faults.db")}
	for name, env := range map[string]string{"postgres": "DBMARK_TEST_POSTGRES", "mariadb": "DBMARK_TEST_MYSQL"} {
		raw := os.Getenv(env)
		if raw == "" {
			t.Logf("%s not set: %s is not tested (bash scripts/testenv.sh start)", env, name)
			continue
		}
		c := connect(t, raw)
		if err := c.Exec(context.Background(), "CREATE DATABASE "+faultsDB); err != nil && !strings.Contains(err.Error(), "exists") {
			t.Fatalf("create database on %s: %v", name, err)
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + faultsDB
		out[name] = u.String()
	}
	return out
}

// A prepare that stops part way (interrupted during the load, or failing
// at its last step) leaves data that every run refuses with one line,
// on every engine, until cleanup and a whole prepare.
func TestUnfinishedPrepareIsRefused(t *testing.T) {
	home(t)
	for engine, raw := range faultTargets(t) {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dbmark(t, ctx, "cleanup", "oltp_read_write", "--target", raw)
			dbmark(t, ctx, "cleanup", "tpcb", "--target", raw)

			// OLTP: interrupted once its table exists, during the load.
			pctx, cancel := context.WithCancel(ctx)
			done := make(chan outcome, 1)
			go func() {
				done <- dbmark(t, pctx, "prepare", "oltp_read_write", "--target", raw, "--table-size", "2000000")
			}()
			poll := connect(t, raw)
			var o outcome
		wait:
			for {
				select {
				case o = <-done:
					break wait
				case <-time.After(5 * time.Millisecond):
					if _, _, err := poll.QueryRow(ctx, "SELECT COUNT(*) FROM sbtest1 WHERE 1 = 0"); err == nil {
						time.Sleep(50 * time.Millisecond)
						cancel()
					}
				}
			}
			cancel()
			if o.code != cli.ExitInterrupted {
				t.Fatalf("interrupted prepare: exit %d, want %d (the load finished before the interrupt?): %s", o.code, cli.ExitInterrupted, o.stderr)
			}
			for _, w := range []string{"oltp_point_select", "oltp_read_write"} {
				o := dbmark(t, ctx, "run", w, "--target", raw, "--table-size", "2000000", "--time", "1", "--no-store")
				oneLineError(t, o, "not completely prepared")
			}
			if o := dbmark(t, ctx, "cleanup", "oltp_read_write", "--target", raw); o.code != 0 {
				t.Fatalf("cleanup: %s", o.stderr)
			}
			if o := dbmark(t, ctx, "prepare", "oltp_read_write", "--target", raw, "--table-size", "1000"); o.code != 0 {
				t.Fatalf("prepare: %s", o.stderr)
			}
			if o := dbmark(t, ctx, "run", "oltp_point_select", "--target", raw, "--table-size", "1000", "--time", "0.5", "--no-store"); o.code != 0 {
				t.Fatalf("run after a whole prepare: exit %d: %s", o.code, o.stderr)
			}
			// A table emptied behind dbmark's back is refused too.
			if err := poll.Exec(ctx, "DELETE FROM sbtest1"); err != nil {
				t.Fatal(err)
			}
			o = dbmark(t, ctx, "run", "oltp_point_select", "--target", raw, "--table-size", "1000", "--time", "0.5", "--no-store")
			oneLineError(t, o, "table sbtest1 is empty")
			dbmark(t, ctx, "cleanup", "oltp_read_write", "--target", raw)

			// TPC-B: the last init step fails (a second primary key step).
			o = dbmark(t, ctx, "prepare", "tpcb", "--target", raw, "-I", "dtgpp")
			if o.code == 0 {
				t.Fatalf("prepare -I dtgpp succeeded: %s", o.stdout)
			}
			for _, args := range [][]string{{"-t", "10"}, {"-S", "-t", "10"}} {
				o := dbmark(t, ctx, append([]string{"run", "tpcb", "--target", raw, "--no-store"}, args...)...)
				oneLineError(t, o, "not completely prepared")
			}
			if o := dbmark(t, ctx, "prepare", "tpcb", "--target", raw); o.code != 0 {
				t.Fatalf("prepare tpcb: %s", o.stderr)
			}
			if o := dbmark(t, ctx, "run", "tpcb", "--target", raw, "-t", "10", "--no-store"); o.code != 0 {
				t.Fatalf("run tpcb after a whole prepare: exit %d: %s", o.code, o.stderr)
			}
			dbmark(t, ctx, "cleanup", "tpcb", "--target", raw)
		})
	}
}

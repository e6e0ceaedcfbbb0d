package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFileioPrepareRunCleanupStoresTheResult(t *testing.T) {
	home(t)
	ctx := context.Background()
	dir := t.TempDir()
	opts := []string{"--dir", dir, "--file-num", "2", "--file-total-size", "2M"}
	if o := dbmark(t, ctx, append([]string{"prepare", "fileio"}, opts...)...); o.code != 0 {
		t.Fatalf("prepare: %d %s", o.code, o.stderr)
	}
	js := filepath.Join(t.TempDir(), "r.json")
	// sysbench's spellings of the options.
	o := dbmark(t, ctx, append([]string{"run", "fileio", "--file-test-mode=rndrw", "--file-block-size=4096", "--file-fsync-freq=10",
		"--file-fsync-end=off", "--file-extra-flags=direct", "--events", "120", "--json", js}, opts...)...)
	if o.code != 0 {
		t.Fatalf("run: %d %s", o.code, o.stderr)
	}
	if !strings.Contains(o.stdout, "result 1 saved") || !strings.Contains(o.stdout, "read, MiB/s:") {
		t.Fatalf("stdout: %s", o.stdout)
	}
	r := readResult(t, js)
	counts := map[string]int64{}
	for _, op := range r.Summary.Ops {
		counts[op.Name] = op.Count
	}
	if counts["read"] != 60 || counts["write"] != 40 || counts["fsync"] != 20 || r.Summary.Events != 120 {
		t.Fatalf("counts %v, %d events: want 60 reads, 40 writes, 20 fsyncs in 120 events", counts, r.Summary.Events)
	}
	if r.Target.Kind != "dir" || r.Target.Settings["fs_type"] == "" || !strings.Contains(r.Target.Driver, "O_DIRECT") || r.Workload.Headline != "iops" {
		t.Fatalf("target %+v, headline %s", r.Target, r.Workload.Headline)
	}
	if o := dbmark(t, ctx, "results", "show", "1"); o.code != 0 || !strings.Contains(o.stdout, "fileio") {
		t.Fatalf("results show: %d %s %s", o.code, o.stdout, o.stderr)
	}
	if o := dbmark(t, ctx, "cleanup", "fileio", "--dir", dir); o.code != 0 {
		t.Fatalf("cleanup: %s", o.stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("cleanup left %v", ents)
	}
}

func TestFileioBadInput(t *testing.T) {
	home(t)
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	os.WriteFile(file, nil, 0o644)
	empty := func() {
		t.Helper()
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			t.Fatalf("the directory holds %v after a refused command: want it untouched", ents)
		}
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"prepare", "fileio", "--dir", filepath.Join(dir, "nope")}, "no such directory"},
		{[]string{"prepare", "fileio", "--dir", file}, "not a directory"},
		{[]string{"prepare", "fileio"}, "needs --dir"},
		{[]string{"prepare", "fileio", "--dir", dir, "--file-total-size", "100T"}, "not enough free space"},
		{[]string{"prepare", "fileio", "--dir", dir, "--file-num", "1", "--file-total-size", "1M", "--block-size", "1000", "--direct"}, "not a multiple of --block-size"},
		{[]string{"prepare", "fileio", "--dir", dir, "--file-num", "1", "--file-total-size", "1000000", "--block-size", "1000", "--direct"}, "O_DIRECT on"},
		{[]string{"prepare", "fileio", "--dir", dir, "--file-total-size", "256M:6G:256M"}, "dbmark sweep"},
		{[]string{"run", "fileio", "--dir", dir, "--mode", "rndrd", "--no-store"}, "no prepared files"},
		{[]string{"run", "fileio", "--dir", dir, "--mode", "bogus"}, "--mode \"bogus\""},
		{[]string{"run", "fileio", "--dir", dir, "--iodepth", "8"}, "needs --engine io_uring"},
		// A directory is not a database: a target or a database option is
		// refused, never silently ignored.
		{[]string{"run", "fileio", "--dir", dir, "--mode", "rndrd", "--target", "postgres://u:pw@127.0.0.1:1/db"}, "drop --target"},
		{[]string{"prepare", "fileio", "--dir", dir, "--target", "postgres://u:pw@127.0.0.1:1/db"}, "drop --target"},
		{[]string{"run", "fileio", "--dir", dir, "--mode", "rndrd", "--pg-mode", "simple"}, "unknown flag: --pg-mode"},
		{[]string{"run", "fileio", "--dir", dir, "--mode", "rndrd", "--db-ps-mode", "disable"}, "unknown flag: --db-ps-mode"},
	}
	for _, c := range cases {
		oneLineError(t, dbmark(t, ctx, c.args...), c.want)
		empty()
	}
	if os.Getuid() != 0 {
		ro := t.TempDir()
		os.Chmod(ro, 0o555)
		oneLineError(t, dbmark(t, ctx, "prepare", "fileio", "--dir", ro, "--file-total-size", "1M"), "not writable")
	}
}

// tmpfs refused O_DIRECT until Linux 6.6; where it still does, the
// refusal is one clear line.
func TestFileioDirectOnTmpfs(t *testing.T) {
	home(t)
	dir, err := os.MkdirTemp("/dev/shm", "dbmark-test-")
	if err != nil {
		t.Skipf("no tmpfs at /dev/shm: %v", err)
	}
	defer os.RemoveAll(dir)
	o := dbmark(t, context.Background(), "prepare", "fileio", "--dir", dir, "--file-num", "1", "--file-total-size", "1M", "--direct")
	if o.code == 0 {
		t.Skip("this kernel's tmpfs accepts O_DIRECT (Linux 6.6 and later)")
	}
	oneLineError(t, o, "refuses O_DIRECT")
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %v behind", ents)
	}
}

// Temporary files a killed dbmark left beside --json's file and in the
// data directory (the store's fallback) are removed by the next run that
// writes there.
func TestRunRemovesStaleResultTemps(t *testing.T) {
	data := home(t)
	ctx := context.Background()
	dir := t.TempDir()
	out := t.TempDir()
	opts := []string{"--dir", dir, "--file-num", "1", "--file-total-size", "1M"}
	if o := dbmark(t, ctx, append([]string{"prepare", "fileio"}, opts...)...); o.code != 0 {
		t.Fatalf("prepare: %s", o.stderr)
	}
	old := time.Now().Add(-time.Hour)
	stale := []string{filepath.Join(out, ".r1.json.tmp1234567"), filepath.Join(data, ".unsaved-0123.json.tmp98765")}
	for _, p := range stale {
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	o := dbmark(t, ctx, append([]string{"run", "fileio", "--mode", "rndrd", "--events", "10", "--time", "0", "--json", filepath.Join(out, "r1.json")}, opts...)...)
	if o.code != 0 {
		t.Fatalf("run: exit %d: %s", o.code, o.stderr)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the run (%v)", p, err)
		}
	}
}

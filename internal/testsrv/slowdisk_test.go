package testsrv_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/testsrv"
)

// TestSlowDisk checks that the limit holds for a file written and synced
// on the disk: 4 MiB at 2 MiB/s take 1.5 s at least (the kernel lets the
// first slice through at once), and lifting the limit restores the pace.
func TestSlowDisk(t *testing.T) {
	var dir string
	t.Cleanup(func() { // after the disk's own clean-up
		if _, err := os.Stat(dir); dir != "" && !os.IsNotExist(err) {
			t.Errorf("the mount point is left: %v", err)
		}
	})
	d := testsrv.StartSlowDisk(t, 64<<20)
	dir = d.Dir
	write := func(name string) time.Duration {
		t.Helper()
		began := time.Now()
		f, err := os.Create(filepath.Join(d.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(make([]byte, 4<<20)); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		return time.Since(began)
	}
	if err := d.Throttle(2 << 20); err != nil {
		t.Fatal(err)
	}
	took := write("slow")
	if took < 1500*time.Millisecond {
		t.Errorf("4 MiB synced in %v at 2 MiB/s", took)
	}
	t.Logf("at 2 MiB/s: 4 MiB synced in %v", took)
	if err := d.Throttle(0); err != nil {
		t.Fatal(err)
	}
	t.Logf("unthrottled: 4 MiB synced in %v", write("fast"))
}

package fileio

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRawRW checks the raw pread and pwrite against the file's contents:
// the offset is honoured, the end of the file reads short, and a closed
// descriptor is an error rather than a silent zero.
func TestRawRW(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, bytes.Repeat([]byte{'a'}, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(p, unix.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := pwrite(fd, []byte("block"), 4096); n != 5 || err != nil {
		t.Fatalf("pwrite: %d, %v", n, err)
	}
	b := make([]byte, 8)
	if n, err := pread(fd, b, 4094); n != 8 || err != nil || string(b) != "aablocka" {
		t.Errorf("pread at 4094: %d %q, %v", n, b, err)
	}
	if n, err := pread(fd, b, 8190); n != 2 || err != nil {
		t.Errorf("pread across the end: %d, %v; want 2 bytes", n, err)
	}
	if err := unix.Close(fd); err != nil {
		t.Fatal(err)
	}
	if _, err := pread(fd, b, 0); !errors.Is(err, unix.EBADF) {
		t.Errorf("pread on a closed descriptor: %v, want EBADF", err)
	}
}

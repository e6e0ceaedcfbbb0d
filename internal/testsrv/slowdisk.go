package testsrv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// throttleFile is the kernel's write limit per block device at the root of
// cgroup v1's blkio hierarchy: every write to the device passes it,
// whoever issues it (a server's fsync, the kernel's writeback).
const throttleFile = "/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device"

// ErrNoSlowDisk marks a machine where no disk can be slowed on purpose
// (not root, no loop devices, no write throttling); tests skip.
var ErrNoSlowDisk = errors.New("no disk can be slowed on purpose here")

// SlowDisk is a filesystem of its own on a loop device whose writes a test
// limits, for a server's data: a disk that does not keep up, made on
// purpose, where the machine's own disk would absorb what the test writes.
// The limit is set on the loop device alone, so no other writer on the
// machine is slowed.
type SlowDisk struct {
	// Dir is the mounted filesystem, which other users may traverse.
	Dir string

	base string // holds the image and the mount point
	loop string // /dev/loopN
	dev  string // its major:minor
}

// NewSlowDisk makes an ext4 filesystem of size bytes in a sparse file on a
// loop device and mounts it, with no limit yet (Throttle sets one). It
// needs root, losetup and mkfs.ext4, and cgroup v1's blkio throttling;
// without them the error is ErrNoSlowDisk, saying which is missing.
func NewSlowDisk(size int64) (*SlowDisk, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: a throttled loop device needs root", ErrNoSlowDisk)
	}
	if _, err := os.Stat(throttleFile); err != nil {
		return nil, fmt.Errorf("%w: no cgroup v1 blkio write throttling (%s)", ErrNoSlowDisk, throttleFile)
	}
	for _, prog := range []string{"losetup", "mkfs.ext4"} {
		if _, err := exec.LookPath(prog); err != nil {
			return nil, fmt.Errorf("%w: %s is missing", ErrNoSlowDisk, prog)
		}
	}
	base, err := tempDir("")
	if err != nil {
		return nil, err
	}
	d := &SlowDisk{base: base, Dir: filepath.Join(base, "mnt")}
	if err := d.setUp(size); err != nil {
		return nil, errors.Join(fmt.Errorf("slow disk: %w", err), d.Close())
	}
	return d, nil
}

// StartSlowDisk makes a slow disk for t (NewSlowDisk) and removes it when
// t ends, after the servers t started on it have stopped; it skips t,
// saying why, where no disk can be slowed.
func StartSlowDisk(t testing.TB, size int64) *SlowDisk {
	t.Helper()
	d, err := NewSlowDisk(size)
	if errors.Is(err, ErrNoSlowDisk) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("removing the slow disk: %v", err)
		}
	})
	return d
}

func (d *SlowDisk) setUp(size int64) error {
	img := filepath.Join(d.base, "disk.img")
	f, err := os.Create(img)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
		return fmt.Errorf("mkfs.ext4: %v: %s", err, out)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		return fmt.Errorf("losetup: %v: %s", err, out)
	}
	d.loop = strings.TrimSpace(string(out))
	dev, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(d.loop), "dev"))
	if err != nil {
		return fmt.Errorf("the loop device's number: %w", err)
	}
	d.dev = strings.TrimSpace(string(dev))
	if err := os.Mkdir(d.Dir, 0o755); err != nil {
		return err
	}
	if err := unix.Mount(d.loop, d.Dir, "ext4", 0, ""); err != nil {
		return fmt.Errorf("mount %s: %w", d.loop, err)
	}
	return os.Chmod(d.Dir, 0o755)
}

// Throttle limits the disk's writes to bytesPerSec (0: no limit). Writes
// beyond it wait in the kernel before they reach the device, so a sync
// that has more to write than the limit lets through takes that long.
func (d *SlowDisk) Throttle(bytesPerSec int64) error {
	if err := os.WriteFile(throttleFile, []byte(d.dev+" "+strconv.FormatInt(bytesPerSec, 10)), 0); err != nil {
		return fmt.Errorf("throttling %s: %w", d.loop, err)
	}
	return nil
}

// Sync writes back what the page cache holds for the disk's filesystem,
// so that a limit set after it slows only what is written from then on.
func (d *SlowDisk) Sync() error {
	f, err := os.Open(d.Dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", d.Dir, err)
	}
	return nil
}

// Close lifts the limit, unmounts the filesystem, detaches the loop device
// and removes the image. Whatever runs on the disk must have stopped.
func (d *SlowDisk) Close() error {
	var errs []error
	if d.dev != "" {
		errs = append(errs, d.Throttle(0))
	}
	if err := unix.Unmount(d.Dir, 0); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		// Busy: detach it now, the kernel finishes when the last user goes.
		errs = append(errs, unix.Unmount(d.Dir, unix.MNT_DETACH))
	}
	if d.loop != "" {
		if out, err := exec.Command("losetup", "--detach", d.loop).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("losetup --detach %s: %v: %s", d.loop, err, out))
		}
	}
	errs = append(errs, os.RemoveAll(d.base))
	return errors.Join(errs...)
}

package fileio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// Dir is fileio's target: a directory on a filesystem, which Inspect
// describes. It has no connections: each client of a run opens its own set
// of files (Load's Clients).
type Dir struct {
	path string
	opt  *Options
}

// Kind is "dir".
func (d *Dir) Kind() string { return "dir" }

// Path is the directory's absolute path.
func (d *Dir) Path() string { return d.path }

// Redacted is the directory: there is nothing secret in it.
func (d *Dir) Redacted() string { return d.path }

// Close has nothing to release.
func (d *Dir) Close() error { return nil }

// Dialect is nil: there is no SQL here.
func (d *Dir) Dialect() target.Dialect { return nil }

// Classify: the run's end is not an error; an errno is the code.
func (d *Dir) Classify(err error) target.ErrorInfo {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return target.ErrorInfo{Class: target.Canceled}
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return target.ErrorInfo{Class: target.Fatal, Code: unix.ErrnoName(en)}
	}
	return target.ErrorInfo{Class: target.Fatal}
}

// errNoSQL is what a directory answers where a database would run SQL.
var errNoSQL = errors.New("a fileio directory has no database connection: it runs no SQL")

// Connect is refused: a directory has no database connection.
func (d *Dir) Connect(context.Context) (target.Conn, error) { return nil, errNoSQL }

// open opens every test file with the run's flags.
func (d *Dir) open() (*Files, error) {
	c := &Files{fds: make([]int, 0, d.opt.FileNum)}
	flags := openFlags(d.opt)
	for i := 0; i < d.opt.FileNum; i++ {
		p := filepath.Join(d.path, FileName(i))
		fd, err := unix.Open(p, flags, 0o600)
		if err != nil {
			c.Close()
			return nil, openError(p, d.opt, err)
		}
		c.fds = append(c.fds, fd)
	}
	return c, nil
}

// openFlags are the run's open(2) flags.
func openFlags(o *Options) int {
	f := unix.O_RDWR | unix.O_CLOEXEC
	if o.Direct {
		f |= unix.O_DIRECT
	}
	if o.DSync {
		f |= unix.O_DSYNC
	}
	if o.Sync {
		f |= unix.O_SYNC
	}
	return f
}

// openError explains the usual reasons an open fails.
func openError(path string, o *Options, err error) error {
	switch {
	case errors.Is(err, unix.EINVAL) && o.Direct:
		return fmt.Errorf("--direct: the filesystem of %s refuses O_DIRECT (tmpfs and some FUSE filesystems do); use a directory on a disk, or drop --direct", filepath.Dir(path))
	case errors.Is(err, unix.ENOENT):
		return fmt.Errorf("open %s: no such file (run dbmark prepare fileio with the same --dir, --file-num and --file-total-size first)", path)
	}
	return fmt.Errorf("open %s: %w", path, err)
}

// Inspect reports the filesystem: its type, mount options, device and
// what O_DIRECT requires.
func (d *Dir) Inspect(_ context.Context) (target.Engine, error) {
	fs, err := inspectDir(d.path)
	if err != nil {
		return target.Engine{}, err
	}
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	drv := EngineSync + " (pread/pwrite)"
	if d.opt.Engine == EngineIOUring {
		drv = fmt.Sprintf("%s (iodepth %d)", EngineIOUring, d.opt.IODepth)
	}
	var fl []string
	for _, f := range []struct {
		on   bool
		name string
	}{{d.opt.Direct, "O_DIRECT"}, {d.opt.DSync, "O_DSYNC"}, {d.opt.Sync, "O_SYNC"}} {
		if f.on {
			fl = append(fl, f.name)
		}
	}
	if len(fl) > 0 {
		drv += " " + strings.Join(fl, "|")
	}
	return target.Engine{Name: fs.Type, Version: "Linux " + unix.ByteSliceToString(uts.Release[:]),
		Settings: fs.settings(), DataDir: d.path, Driver: drv}, nil
}

// FS is what dbmark knows of a directory's filesystem.
type FS struct {
	Type         string
	MountPoint   string
	MountOptions string
	SuperOptions string
	Device       string
	DevNum       string // major:minor
	LogicalBlock int64  // the device's logical block size, 0 if unknown
	Rotational   string
	FreeBytes    int64
}

func (f FS) settings() map[string]string {
	m := map[string]string{"fs_type": f.Type, "mount_point": f.MountPoint, "mount_options": f.MountOptions,
		"super_options": f.SuperOptions, "device": f.Device, "device_number": f.DevNum,
		"free_bytes": strconv.FormatInt(f.FreeBytes, 10)}
	if f.LogicalBlock > 0 {
		m["logical_block_size"] = strconv.FormatInt(f.LogicalBlock, 10)
	}
	if f.Rotational != "" {
		m["rotational"] = f.Rotational
	}
	return m
}

// inspectDir gathers the facts of path's filesystem from statfs and
// /proc/self/mountinfo (the mount whose point is the longest prefix).
func inspectDir(path string) (FS, error) {
	var sf unix.Statfs_t
	if err := unix.Statfs(path, &sf); err != nil {
		return FS{}, fmt.Errorf("inspect %s: %w", path, err)
	}
	fs := FS{Type: fsTypeName(sf.Type), FreeBytes: int64(sf.Bavail) * sf.Bsize}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fs, nil // facts are best effort
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	best := -1
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - type source superoptions
		left, right, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		lf, rf := strings.Fields(left), strings.Fields(right)
		if len(lf) < 6 || len(rf) < 3 {
			continue
		}
		mp := unescapeMount(lf[4])
		if !under(real, mp) || len(mp) < best {
			continue
		}
		best = len(mp)
		fs.MountPoint, fs.MountOptions, fs.DevNum = mp, lf[5], lf[2]
		fs.Type, fs.Device, fs.SuperOptions = rf[0], unescapeMount(rf[1]), rf[2]
	}
	fs.LogicalBlock, fs.Rotational = blockDevice(fs.DevNum)
	return fs, nil
}

func under(path, mp string) bool {
	return mp == "/" || path == mp || strings.HasPrefix(path, mp+"/")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// blockDevice reads the device's logical block size and whether it is
// rotational from sysfs; a partition's queue is its disk's.
func blockDevice(devnum string) (int64, string) {
	if devnum == "" {
		return 0, ""
	}
	base := "/sys/dev/block/" + devnum
	for _, q := range []string{base + "/queue", base + "/../queue"} {
		b, err := os.ReadFile(q + "/logical_block_size")
		if err != nil {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		rot, _ := os.ReadFile(q + "/rotational")
		return n, strings.TrimSpace(string(rot))
	}
	return 0, ""
}

// fsTypeName names the common statfs magic numbers (mountinfo's type wins
// when it is readable).
func fsTypeName(t int64) string {
	switch uint32(t) {
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlay"
	case unix.NFS_SUPER_MAGIC:
		return "nfs"
	case unix.F2FS_SUPER_MAGIC:
		return "f2fs"
	case unix.FUSE_SUPER_MAGIC:
		return "fuse"
	}
	return fmt.Sprintf("0x%x", uint32(t))
}

// directAlign checks that dir's filesystem takes O_DIRECT and returns the
// alignment it needs for offsets and sizes and for memory. It creates and
// removes a probe file, since filesystems report the alignment only for
// regular files.
func directAlign(dir string) (offset, mem int64, err error) {
	f, err := os.CreateTemp(dir, ".dbmark-probe-*")
	if err != nil {
		return 0, 0, writableError(dir, err)
	}
	name := f.Name()
	f.Close()
	defer os.Remove(name)
	fd, err := unix.Open(name, unix.O_RDWR|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EINVAL) {
			return 0, 0, fmt.Errorf("--direct: the filesystem of %s refuses O_DIRECT (tmpfs and some FUSE filesystems do); use a directory on a disk, or drop --direct", dir)
		}
		return 0, 0, fmt.Errorf("--direct: open a probe file in %s: %w", dir, err)
	}
	defer unix.Close(fd)
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &stx); err == nil && stx.Mask&unix.STATX_DIOALIGN != 0 {
		if stx.Dio_offset_align == 0 {
			return 0, 0, fmt.Errorf("--direct: the filesystem of %s does not support O_DIRECT; use a directory on a disk, or drop --direct", dir)
		}
		return int64(stx.Dio_offset_align), int64(stx.Dio_mem_align), nil
	}
	// Older kernels: the device's logical block size, else 4096 to be safe.
	fs, _ := inspectDir(dir)
	if fs.LogicalBlock > 0 {
		return fs.LogicalBlock, fs.LogicalBlock, nil
	}
	return 4096, 4096, nil
}

// writableError turns a failed create in dir into a clear line.
func writableError(dir string, err error) error {
	switch {
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM), errors.Is(err, unix.EROFS):
		return fmt.Errorf("--dir %s: not writable (%v); choose a directory you can write to", dir, errors.Unwrap(err))
	case errors.Is(err, unix.ENOSPC):
		return fmt.Errorf("--dir %s: no space left on the device", dir)
	}
	return fmt.Errorf("--dir %s: %w", dir, err)
}

// Files is one client's set of open test files: its session.
type Files struct {
	fds []int
}

var _ workload.Session = (*Files)(nil)

// Reset has nothing to undo after a failed request.
func (c *Files) Reset(context.Context) {}

// Waiting has no statement to name.
func (c *Files) Waiting() string { return "" }

// Close closes the files; it is safe to call twice.
func (c *Files) Close() error {
	var errs []error
	for _, fd := range c.fds {
		if err := unix.Close(fd); err != nil {
			errs = append(errs, err)
		}
	}
	c.fds = nil
	return errors.Join(errs...)
}

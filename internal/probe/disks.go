package probe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbmark/dbmark/internal/result"
)

// virtualDisk says a /sys/block entry is no disk of its own: loop devices,
// RAM disks and compressed swap. md and dm devices are listed as RAID and
// LVM instead.
func virtualDisk(name string) bool {
	for _, p := range []string{"loop", "ram", "zram", "md", "dm-", "sr", "nbd"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func (c *collector) blockNames() ([]string, error) {
	if c.blk == nil {
		return nil, errNoSys
	}
	return c.blk.SysBlockDevices()
}

func (c *collector) disks() {
	names, err := c.blockNames()
	if err != nil {
		c.miss("disks", err)
		return
	}
	for _, n := range names {
		if virtualDisk(n) {
			continue
		}
		d := result.Disk{Name: n}
		if sz, err := c.blk.SysBlockDeviceSize(n); err == nil {
			d.SizeBytes = sz
		} else {
			c.miss("disk."+n+".size", err)
		}
		if r, err := c.blk.SysBlockDeviceRotational(n); err == nil {
			rot := r == 1
			d.Rotational = &rot
		} else {
			c.miss("disk."+n+".rotational", err)
		}
		if m, err := c.readTrim("sys", "block", n, "device", "model"); err == nil {
			d.Model = m
		} else {
			c.miss("disk."+n+".model", err)
		}
		// procfs reads all thirty queue files at once and fails on the
		// first missing one; these three are read one by one.
		if s, err := c.readTrim("sys", "block", n, "queue", "scheduler"); err == nil {
			d.Scheduler = bracketed(s)
		} else {
			c.miss("disk."+n+".scheduler", err)
		}
		d.QueueDepth = c.readUint("disk."+n+".nr_requests", "sys", "block", n, "queue", "nr_requests")
		d.ReadAheadK = c.readUint("disk."+n+".read_ahead_kb", "sys", "block", n, "queue", "read_ahead_kb")
		c.f.Disks = append(c.f.Disks, d)
	}
}

func (c *collector) readUint(fact string, p ...string) uint64 {
	s, err := c.readTrim(p...)
	if err == nil {
		var v uint64
		if v, err = strconv.ParseUint(s, 10, 64); err == nil {
			return v
		}
	}
	c.miss(fact, err)
	return 0
}

// raid lists the md arrays from /sys, or from /proc/mdstat where /sys is
// missing or incomplete.
func (c *collector) raid() {
	if c.sys != nil {
		mds, err := c.sys.Mdraids()
		if err == nil {
			for _, m := range mds {
				r := result.RAID{Name: m.Device, Level: m.Level, ChunkBytes: m.ChunkSize, State: m.ArrayState,
					SyncAction: m.SyncAction, Degraded: m.DegradedDisks}
				if m.SyncAction != "" && m.SyncAction != "idle" {
					r.SyncDone = m.SyncCompleted
				}
				for _, comp := range m.Components {
					r.Members = append(r.Members, comp.Device)
				}
				sort.Strings(r.Members)
				c.f.RAID = append(c.f.RAID, r)
			}
			return
		}
		c.log.Debug("md arrays in /sys unreadable, trying /proc/mdstat", "err", err)
	}
	if c.proc == nil {
		c.miss("raid", fmt.Errorf("no /proc and no /sys: %w", os.ErrNotExist))
		return
	}
	mds, err := c.proc.MDStat()
	if err != nil {
		if os.IsNotExist(err) {
			return // no md driver loaded: no arrays, which is a fact
		}
		c.miss("raid", err)
		return
	}
	for _, m := range mds {
		r := result.RAID{Name: m.Name, Level: m.Type, State: m.ActivityState}
		switch m.ActivityState {
		case "checking", "resyncing", "recovering", "reshaping":
			r.SyncAction = map[string]string{"checking": "check", "resyncing": "resync", "recovering": "recover", "reshaping": "reshape"}[m.ActivityState]
			r.SyncDone = m.BlocksSyncedPct / 100
		default:
			r.SyncAction = "idle"
		}
		for _, d := range m.Devices {
			r.Members = append(r.Members, d.Name)
		}
		sort.Strings(r.Members)
		c.f.RAID = append(c.f.RAID, r)
	}
}

// lvm lists device-mapper devices by name with what they sit on.
func (c *collector) lvm() {
	names, err := c.blockNames()
	if err != nil {
		return // already recorded by disks
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "dm-") {
			continue
		}
		name, err := c.readTrim("sys", "block", n, "dm", "name")
		if err != nil {
			c.miss("lvm."+n, err)
			continue
		}
		lv := result.LV{Device: n, Name: name}
		if u, err := c.blk.SysBlockDeviceUnderlyingDevices(n); err == nil {
			lv.Slaves = u.DeviceNames
			sort.Strings(lv.Slaves)
		}
		c.f.LVM = append(c.f.LVM, lv)
	}
}

// mounts finds the mount holding each directory: the longest mount point
// that is a prefix of its path.
func (c *collector) mounts(dirs []Dir) {
	if len(dirs) == 0 {
		return
	}
	if c.proc == nil {
		c.miss("mounts", fmt.Errorf("no /proc: %w", os.ErrNotExist))
		return
	}
	mis, err := c.proc.GetMounts()
	if err != nil {
		c.miss("mounts", err)
		return
	}
	for _, d := range dirs {
		path := filepath.Clean(d.Path)
		if c.root == "/" {
			if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			if real, err := filepath.EvalSymlinks(path); err == nil {
				path = real
			}
		}
		best := -1
		for i, m := range mis {
			if within(path, m.MountPoint) && (best < 0 || len(m.MountPoint) >= len(mis[best].MountPoint)) {
				best = i
			}
		}
		if best < 0 {
			c.miss("mount."+d.Role, fmt.Errorf("no mount holds %s", path))
			continue
		}
		m := mis[best]
		mt := result.Mount{Role: d.Role, Path: path, MountPoint: m.MountPoint, Device: m.Source, FSType: m.FSType,
			Options: mountOptions(m.Options, m.SuperOptions)}
		if c.root != "/" {
			c.miss("mount."+d.Role+".free", errors.New("free space is read on the live machine only"))
		} else if free, total, err := diskSpace(existing(path)); err == nil {
			mt.FreeBytes, mt.TotalBytes = free, total
		} else {
			c.miss("mount."+d.Role+".free", err)
		}
		if d.Role == "data_dir" && c.root == "/" {
			if used, err := usedBytes(path, sizeWalkFor); err == nil {
				mt.UsedBytes = used
			} else {
				c.miss("mount.data_dir.used", err)
			}
		}
		c.f.Mounts = append(c.f.Mounts, mt)
	}
}

func within(path, mountPoint string) bool {
	if mountPoint == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == mountPoint || strings.HasPrefix(path, mountPoint+"/")
}

// mountOptions merges the per-mount and the superblock options, sorted, as
// "name" or "name=value".
func mountOptions(sets ...map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, set := range sets {
		for k, v := range set {
			if strings.Contains(v, "/") {
				continue // overlay's layer paths say nothing about speed
			}
			o := k
			if v != "" {
				o += "=" + v
			}
			if !seen[o] {
				seen[o] = true
				out = append(out, o)
			}
		}
	}
	sort.Strings(out)
	return out
}

// diskSpace is the free space (for an unprivileged user) and the size of
// the filesystem holding path.
// sizeWalkFor bounds the walk of a data directory: the start-up probe must
// stay quick whatever the database holds.
const sizeWalkFor = 500 * time.Millisecond

// usedBytes is the space the files under dir take on disk (allocated
// blocks, as du counts them): the database's tables and indexes, and its
// logs, which the engine's own figure for its data leaves out.
func usedBytes(dir string, within time.Duration) (uint64, error) {
	deadline := time.Now().Add(within)
	var used uint64
	errSlow := fmt.Errorf("walking %s took longer than %v", dir, within)
	err := filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return errSlow
		}
		info, err := de.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			used += uint64(st.Blocks) * 512
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", dir, err)
	}
	return used, nil
}

func diskSpace(path string) (free, total uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
}

// existing is path or its nearest existing parent: a data directory not
// created yet will be on its parent's filesystem.
func existing(path string) string {
	for {
		if _, err := os.Stat(path); err == nil {
			return path
		}
		parent := filepath.Dir(path)
		if parent == path {
			return path
		}
		path = parent
	}
}

package fileio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// pread and pwrite enter the kernel without telling the Go scheduler
// (RawSyscall). A read that waits on the disk for 50 µs or more outlasts
// the scheduler monitor's 20 µs look, so through unix.Pread every one had
// its processor taken away and won back: 16 KiB O_DIRECT reads cost 15 µs
// more CPU each than fio's and ran 10% slower at one thread. The runner
// gives every sync worker a processor of its own (Load.SyscallBound), so
// holding it through the call keeps no other goroutine waiting. fsync stays
// a scheduler-visible call: it can take long enough to matter to the
// garbage collector, which must wait for raw calls to return.
func pread(fd int, b []byte, off int64) (int, error) {
	return rawRW(unix.SYS_PREAD64, fd, b, off)
}

func pwrite(fd int, b []byte, off int64) (int, error) {
	return rawRW(unix.SYS_PWRITE64, fd, b, off)
}

// preadFull and pwriteFull transfer all of b, retrying the rest after a
// short transfer: a write that comes up short on a full disk is tried
// again for the rest, so it ends with the error the retry meets (ENOSPC)
// rather than a count. They return what was transferred; a read that
// meets the end of the file stops short with no error.
func preadFull(fd int, b []byte, off int64) (int, error) {
	return fullRW(pread, fd, b, off)
}

func pwriteFull(fd int, b []byte, off int64) (int, error) {
	return fullRW(pwrite, fd, b, off)
}

func fullRW(rw func(int, []byte, int64) (int, error), fd int, b []byte, off int64) (int, error) {
	done := 0
	for done < len(b) {
		n, err := rw(fd, b[done:], off+int64(done))
		if err != nil {
			return done, err
		}
		if n <= 0 {
			break
		}
		done += n
	}
	return done, nil
}

func rawRW(trap uintptr, fd int, b []byte, off int64) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, _, errno := unix.RawSyscall6(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(off), 0, 0)
		switch errno {
		case 0:
			return int(n), nil
		case unix.EINTR:
			continue
		default:
			return 0, errno
		}
	}
}

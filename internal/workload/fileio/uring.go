package fileio

// io_uring through raw system calls. The Go io_uring libraries are either
// unmaintained or not on the module proxy, and this engine needs only a
// ring's setup, read, write and fsync submissions and completion reaping:
// about a hundred lines over golang.org/x/sys/unix.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/workload"
)

// Kernel ABI (include/uapi/linux/io_uring.h).
const (
	ioringOpFsync = 3
	ioringOpRead  = 22
	ioringOpWrite = 23

	ioringFsyncDatasync  = 1
	ioringEnterGetevents = 1
	ioringFeatSingleMmap = 1

	ioringOffSQRing = 0
	ioringOffCQRing = 0x8000000
	ioringOffSQEs   = 0x10000000
)

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	_           uint64
}

type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// ring is one io_uring instance, used by one goroutine.
type ring struct {
	fd      int
	sqMem   []byte
	cqMem   []byte
	sqeMem  []byte
	sqHead  *uint32
	sqTail  *uint32
	sqMask  uint32
	sqArray []uint32
	sqes    []sqe
	cqHead  *uint32
	cqTail  *uint32
	cqMask  uint32
	cqes    []cqe
	pending uint32 // prepared, not yet submitted
}

// uringError explains why the kernel refused a ring.
func uringError(err error) error {
	switch {
	case errors.Is(err, unix.ENOSYS):
		return errors.New("--engine io_uring: this kernel has no io_uring (Linux 5.6 or later is needed); use --engine sync")
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return fmt.Errorf("--engine io_uring: the kernel refused io_uring (%v: disabled by /proc/sys/kernel/io_uring_disabled or a seccomp filter, as containers often have); use --engine sync", err)
	}
	return fmt.Errorf("--engine io_uring: set up a ring: %w", err)
}

// uringAvailable sets up and closes a small ring, so a refusal is a clear
// error before the run rather than a failed worker.
func uringAvailable() error {
	r, err := newRing(2)
	if err != nil {
		return err
	}
	r.close()
	return nil
}

func newRing(entries uint32) (*ring, error) {
	var p uringParams
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, uringError(errno)
	}
	r := &ring{fd: int(fd)}
	sqSize := p.sqOff.array + p.sqEntries*4
	cqSize := p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(cqe{}))
	if p.features&ioringFeatSingleMmap != 0 {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	if r.sqMem, err = unix.Mmap(r.fd, ioringOffSQRing, int(sqSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.close()
		return nil, uringError(err)
	}
	r.cqMem = r.sqMem
	if p.features&ioringFeatSingleMmap == 0 {
		if r.cqMem, err = unix.Mmap(r.fd, ioringOffCQRing, int(cqSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
			r.close()
			return nil, uringError(err)
		}
	}
	sqeSize := int(p.sqEntries) * int(unsafe.Sizeof(sqe{}))
	if r.sqeMem, err = unix.Mmap(r.fd, ioringOffSQEs, sqeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.close()
		return nil, uringError(err)
	}
	u32 := func(b []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&b[off])) }
	r.sqHead, r.sqTail = u32(r.sqMem, p.sqOff.head), u32(r.sqMem, p.sqOff.tail)
	r.sqMask = *u32(r.sqMem, p.sqOff.ringMask)
	r.sqArray = unsafe.Slice(u32(r.sqMem, p.sqOff.array), p.sqEntries)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqHead, r.cqTail = u32(r.cqMem, p.cqOff.head), u32(r.cqMem, p.cqOff.tail)
	r.cqMask = *u32(r.cqMem, p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&r.cqMem[p.cqOff.cqes])), p.cqEntries)
	return r, nil
}

func (r *ring) close() {
	if r.sqeMem != nil {
		_ = unix.Munmap(r.sqeMem)
	}
	if r.cqMem != nil && (r.sqMem == nil || &r.cqMem[0] != &r.sqMem[0]) {
		_ = unix.Munmap(r.cqMem)
	}
	if r.sqMem != nil {
		_ = unix.Munmap(r.sqMem)
	}
	r.sqMem, r.cqMem, r.sqeMem = nil, nil, nil
	unix.Close(r.fd)
}

// push queues one submission; the caller keeps at most the ring's size in flight.
func (r *ring) push(e sqe) {
	tail := atomic.LoadUint32(r.sqTail)
	i := tail & r.sqMask
	r.sqes[i] = e
	r.sqArray[i] = i
	atomic.StoreUint32(r.sqTail, tail+1)
	r.pending++
}

// enter submits what was pushed and waits for at least wait completions,
// in a raw system call for the reason pread is one (rawio.go): the worker
// has a processor of its own (Load.SyscallBound).
func (r *ring) enter(wait uint32) error {
	for {
		n, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.pending), uintptr(wait), ioringEnterGetevents, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return fmt.Errorf("io_uring_enter: %w", errno)
		}
		r.pending -= uint32(n)
		return nil
	}
}

// peek returns the oldest completion, if any.
func (r *ring) peek() (cqe, bool) {
	head := atomic.LoadUint32(r.cqHead)
	if head == atomic.LoadUint32(r.cqTail) {
		return cqe{}, false
	}
	c := r.cqes[head&r.cqMask]
	atomic.StoreUint32(r.cqHead, head+1)
	return c, true
}

// slot is one request in flight with its buffer.
type slot struct {
	req   request
	start time.Time
	buf   []byte
}

// uringWorker keeps --iodepth requests in flight; each Event reaps one
// completion and records it, timed from its submission.
type uringWorker struct {
	base
	r        *ring
	slots    []slot
	free     []uint64
	inflight int
	mem      []byte
}

func newUringWorker(s *shared, f *Files, h *metrics.Handle, rng *rand.Rand) (*uringWorker, error) {
	depth := s.opt.IODepth
	r, err := newRing(uint32(depth))
	if err != nil {
		return nil, err
	}
	bs := int(s.opt.BlockSize)
	stride := (bs + 4095) &^ 4095
	mem, err := alignedBuf(stride * depth)
	if err != nil {
		r.close()
		return nil, err
	}
	fillRandom(mem, rng)
	w := &uringWorker{base: base{s: s, f: f, h: h, rng: rng}, r: r, mem: mem}
	for i := 0; i < depth; i++ {
		w.slots = append(w.slots, slot{buf: mem[i*stride : i*stride+bs]})
		w.free = append(w.free, uint64(i))
	}
	return w, nil
}

// fill submits requests until --iodepth are in flight.
func (w *uringWorker) fill() {
	for len(w.free) > 0 {
		id := w.free[len(w.free)-1]
		w.free = w.free[:len(w.free)-1]
		sl := &w.slots[id]
		sl.req = w.s.plan.next(w.rng)
		e := sqe{fd: int32(w.f.fds[sl.req.file]), userData: id}
		switch sl.req.kind {
		case opRead, opWrite:
			e.opcode = ioringOpRead
			if sl.req.kind == opWrite {
				e.opcode = ioringOpWrite
			}
			e.off = uint64(sl.req.off)
			e.addr = uint64(uintptr(unsafe.Pointer(&sl.buf[0])))
			e.len = uint32(sl.req.size)
		case opFsync:
			e.opcode = ioringOpFsync
			if w.s.opt.FsyncMode == "fdatasync" {
				e.opFlags = ioringFsyncDatasync
			}
		}
		sl.start = time.Now()
		w.r.push(e)
		w.inflight++
	}
}

// Event reaps one completed request and records it.

var _ workload.Worker = (*uringWorker)(nil)

func (w *uringWorker) Event(_ context.Context, _ bool) (metrics.Op, error) {
	w.fill()
	c, ok := w.r.peek()
	switch {
	case !ok:
		// The kernel may return before a completion is posted (a signal,
		// pending task work): wait again.
		for !ok {
			if err := w.r.enter(1); err != nil {
				return 0, err
			}
			c, ok = w.r.peek()
		}
	case w.r.pending > 0:
		if err := w.r.enter(0); err != nil {
			return 0, err
		}
	}
	now := time.Now()
	w.inflight--
	w.free = append(w.free, c.userData)
	sl := &w.slots[c.userData]
	req := sl.req
	d := now.Sub(sl.start)
	what := [...]string{"read", "write", "fsync"}[req.kind]
	if c.res < 0 {
		return 0, fmt.Errorf("%s %s at offset %d: %w", what, FileName(req.file), req.off, unix.Errno(-c.res))
	}
	if req.kind != opFsync && int(c.res) != req.size {
		// A short transfer (a full disk): the rest is tried again with a
		// plain call, whose error is the one to report.
		rw := preadFull
		if req.kind == opWrite {
			rw = pwriteFull
		}
		n, err := rw(w.f.fds[req.file], sl.buf[c.res:req.size], req.off+int64(c.res))
		if err := ioResult(what, req, int(c.res)+n, err); err != nil {
			return 0, err
		}
	}
	w.h.Record(kindOp[req.kind], d)
	w.h.Record(opEvent, d)
	if req.kind == opWrite && w.s.opt.FsyncAll {
		t := time.Now()
		if err := w.fsync(req.file); err != nil {
			return 0, fmt.Errorf("fsync %s: %w", FileName(req.file), err)
		}
		w.h.Record(opFsyncM, time.Since(t))
	}
	return metrics.SelfRecorded, nil
}

// Close waits for what is still in flight (not counted), runs the
// end-of-thread fsyncs and releases the ring.
func (w *uringWorker) Close() error {
	var errs []error
	for w.inflight > 0 {
		if _, ok := w.r.peek(); ok {
			w.inflight--
			continue
		}
		if err := w.r.enter(1); err != nil {
			errs = append(errs, err)
			break
		}
	}
	errs = append(errs, w.fsyncEnd())
	w.r.close()
	_ = unix.Munmap(w.mem)
	return errors.Join(errs...)
}

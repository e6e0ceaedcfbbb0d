package fileio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbmark/dbmark/internal/errclass"
	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/workload"
)

// The operations, in this order: the event (one request) and what it did.
const (
	opEvent metrics.Op = iota
	opReadM
	opWriteM
	opFsyncM
)

var kindOp = [...]metrics.Op{opRead: opReadM, opWrite: opWriteM, opFsync: opFsyncM}

// shared is the state of one run that every worker sees.
type shared struct {
	opt    Options
	plan   *plan
	gen    uint64       // generation stamped by this run's writes
	stripe []sync.Mutex // --verify: one request at a time per block
	gens   *genTable    // --verify: each block's generation
	seed   uint64       // --verify: the manifest's payload seed
	align  int64        // memory alignment of the buffers
}

// Load checks what was prepared and builds the workers.
func (w *Workload) Load(_ context.Context, env workload.Env) (*workload.Load, error) {
	d, err := w.dir(env)
	if err != nil {
		return nil, err
	}
	o := w.opt
	if o.Mode == "" {
		return nil, fmt.Errorf("--mode: give the test mode, one of %s (sysbench's --file-test-mode)", strings.Join(Modes, ", "))
	}
	m, err := readManifest(d.path)
	if err != nil {
		return nil, fmt.Errorf("no prepared files in %s: run dbmark prepare fileio first (%w)", d.path, err)
	}
	if m.Incomplete {
		return nil, cutShort(d.path)
	}
	s := &shared{opt: o, plan: newPlan(&o), gen: m.Generation, align: 4096}
	if o.Engine == EngineIOUring {
		if err := uringAvailable(); err != nil {
			return nil, err
		}
	}
	if o.Verify {
		switch {
		case m.Unverified:
			return nil, errors.New("--verify: a run without --verify has written into these files since prepare, so their blocks carry no checksums; run cleanup and prepare again")
		case m.BlockSize != int64(o.BlockSize):
			return nil, fmt.Errorf("--verify: the files were prepared in blocks of %s, not %s; use --block-size %s or prepare again",
				FormatSize(m.BlockSize), FormatSize(int64(o.BlockSize)), FormatSize(m.BlockSize))
		case m.Version < manifestVersion:
			return nil, errors.New("--verify: these files were prepared by an earlier dbmark, whose blocks cannot be rebuilt for checking; run cleanup and prepare again")
		case m.Generation >= math.MaxUint32:
			return nil, errors.New("--verify: the files have been through too many write runs to track; run cleanup and prepare again")
		}
		s.stripe = make([]sync.Mutex, 4096)
		s.seed = m.PayloadSeed
		if s.gens, err = loadGens(d.path, m); err != nil {
			return nil, err
		}
	}
	var closeLoad func(context.Context) error
	if writes(o.Mode) {
		if o.Verify {
			// The table exists from the first write on, so one that is
			// missing later was removed (loadGens refuses that), not
			// never saved by a run cut short.
			if _, err := os.Stat(filepath.Join(d.path, GensName)); errors.Is(err, os.ErrNotExist) {
				if err := s.gens.save(d.path, s.gens.through); err != nil {
					return nil, err
				}
			}
			if s.gens.through < m.Generation {
				// A write run was cut short before it recorded its
				// blocks: which ones it wrote is not known.
				s.gens.fill(0)
			}
			if o.Mode == "seqwr" {
				s.gens.fill(0) // the files start empty
			}
			m.Generation++
			s.gen = m.Generation
			s.gens.through = s.gen
			closeLoad = func(context.Context) error { return s.gens.save(d.path, s.gen) }
		} else {
			m.Unverified = true
		}
		if o.Mode == "seqwr" {
			// sysbench's seqwr is a creation test: the files start empty.
			if err := truncateAll(d.path, o.FileNum); err != nil {
				return nil, err
			}
			if w.resizes(m) {
				m.FileSize, m.TotalSize = o.FileSize(), int64(o.TotalSize)
			}
		}
		if err := m.write(d.path); err != nil {
			return nil, err
		}
	}
	return &workload.Load{
		Ops: []metrics.OpSpec{
			{Name: "event", Kind: metrics.Event},
			{Name: "read", Kind: metrics.Read},
			{Name: "write", Kind: metrics.Write},
			{Name: "fsync", Kind: metrics.Other},
		},
		OpBytes:      []int64{0, int64(o.BlockSize), int64(o.BlockSize), 0},
		SyscallBound: true,
		Close:        closeLoad,
		Clients:      &clients{dir: d, shared: s, seed: env.Seed},
	}, nil
}

// clients opens each client's own files and its worker on them: file I/O
// needs no database connection.
type clients struct {
	dir    *Dir
	shared *shared
	seed   uint64
}

var _ workload.Clients = (*clients)(nil)

func (c *clients) Open(_ context.Context, id int, h *metrics.Handle, _ *workload.Clock) (workload.Worker, workload.Session, error) {
	f, err := c.dir.open()
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(c.seed, uint64(id)))
	var w workload.Worker
	if c.shared.opt.Engine == EngineIOUring {
		w, err = newUringWorker(c.shared, f, h, rng)
	} else {
		w, err = newSyncWorker(c.shared, f, h, rng)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return w, f, nil
}

func (c *clients) Classify(err error) errclass.Info { return c.dir.Classify(err) }

func truncateAll(dir string, n int) error {
	for i := 0; i < n; i++ {
		p := dir + "/" + FileName(i)
		if err := unix.Truncate(p, 0); err != nil {
			return fmt.Errorf("seqwr: empty %s: %w", p, err)
		}
	}
	return nil
}

// alignedBuf returns n bytes aligned for O_DIRECT, from mmap (page aligned,
// and outside the Go heap so the collector never scans it).
func alignedBuf(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, max(n, 1), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("allocate an I/O buffer of %d bytes: %w", n, err)
	}
	return b[:n], nil
}

// base has what both engines share.
type base struct {
	s   *shared
	f   *Files
	h   *metrics.Handle
	rng *rand.Rand
}

// prepareWrite fills buf for a write of req, under the block's stripe;
// under --verify it is the block this generation puts there, and the
// block's generation is not known until the write has succeeded.
func (b *base) prepareWrite(buf []byte, req request) {
	if b.s.stripe == nil || len(buf) < int(b.s.opt.BlockSize) {
		return
	}
	fillBlock(buf, b.s.seed, req.file, req.off, b.s.gen)
	b.s.gens.entry(req.file, req.off).Store(0)
}

// written records a successful write of req, under the block's stripe.
func (b *base) written(req request) {
	if b.s.stripe == nil || req.size < int(b.s.opt.BlockSize) {
		return
	}
	b.s.gens.entry(req.file, req.off).Store(uint32(b.s.gen))
}

// expected is what a read of req must find, taken under the block's
// stripe so a concurrent write cannot change it between read and check.
func (b *base) expected(req request) expect {
	if b.s.stripe == nil || req.size < int(b.s.opt.BlockSize) {
		return expect{}
	}
	return expect{seed: b.s.seed, want: uint64(b.s.gens.entry(req.file, req.off).Load()),
		through: b.s.gens.through, max: b.s.gen}
}

// lock takes the block's stripe under --verify, so a read never sees a
// write half done by another thread.
func (b *base) lock(req request) func() {
	if b.s.stripe == nil || req.kind == opFsync {
		return func() {}
	}
	m := &b.s.stripe[(uint64(req.file)*0x9e3779b97f4a7c15+uint64(req.off/int64(b.s.opt.BlockSize)))%uint64(len(b.s.stripe))]
	m.Lock()
	return m.Unlock
}

func (b *base) checkRead(buf []byte, req request, x expect) error {
	if b.s.stripe == nil || len(buf) < int(b.s.opt.BlockSize) {
		return nil
	}
	return check(buf, req.file, req.off, x)
}

func (b *base) fsync(file int) error {
	fd := b.f.fds[file]
	if b.s.opt.FsyncMode == "fdatasync" {
		return unix.Fdatasync(fd)
	}
	return unix.Fsync(fd)
}

// fsyncEnd is sysbench's --file-fsync-end: each thread fsyncs every file
// when it ends, in the writing modes. The fsyncs are counted, as sysbench
// counts them.
func (b *base) fsyncEnd() error {
	if !b.s.opt.FsyncEnd || b.s.opt.FsyncAll || !writes(b.s.opt.Mode) {
		return nil
	}
	for i := range b.f.fds {
		t := time.Now()
		if err := b.fsync(i); err != nil {
			return fmt.Errorf("fsync %s at the end: %w", FileName(i), err)
		}
		b.h.Record(opFsyncM, time.Since(t))
	}
	return nil
}

// syncWorker issues one request at a time with pread, pwrite and fsync.
type syncWorker struct {
	base
	buf []byte
}

func newSyncWorker(s *shared, f *Files, h *metrics.Handle, rng *rand.Rand) (*syncWorker, error) {
	buf, err := alignedBuf(int(s.opt.BlockSize))
	if err != nil {
		return nil, err
	}
	fillRandom(buf, rng)
	return &syncWorker{base: base{s: s, f: f, h: h, rng: rng}, buf: buf}, nil
}

// Event runs one request.

var _ workload.Worker = (*syncWorker)(nil)

func (w *syncWorker) Event(_ context.Context, _ bool) (metrics.Op, error) {
	req := w.s.plan.next(w.rng)
	t := time.Now()
	switch req.kind {
	case opFsync:
		if err := w.fsync(req.file); err != nil {
			return 0, fmt.Errorf("fsync %s: %w", FileName(req.file), err)
		}
		w.h.Record(opFsyncM, time.Since(t))
	case opRead:
		buf := w.buf[:req.size]
		unlock := w.lock(req)
		x := w.expected(req)
		n, err := preadFull(w.f.fds[req.file], buf, req.off)
		unlock()
		if err := ioResult("read", req, n, err); err != nil {
			return 0, err
		}
		w.h.Record(opReadM, time.Since(t))
		if err := w.checkRead(buf, req, x); err != nil {
			return 0, err
		}
	case opWrite:
		buf := w.buf[:req.size]
		unlock := w.lock(req)
		w.prepareWrite(buf, req)
		n, err := pwriteFull(w.f.fds[req.file], buf, req.off)
		if err == nil && n == req.size {
			w.written(req)
		}
		unlock()
		if err := ioResult("write", req, n, err); err != nil {
			return 0, err
		}
		now := time.Now()
		w.h.Record(opWriteM, now.Sub(t))
		if w.s.opt.FsyncAll {
			if err := w.fsync(req.file); err != nil {
				return 0, fmt.Errorf("fsync %s: %w", FileName(req.file), err)
			}
			w.h.Record(opFsyncM, time.Since(now))
		}
	}
	return opEvent, nil
}

// ioResult turns a short or failed transfer into an error naming it; a
// transfer that failed part-way says how much of it was done.
func ioResult(what string, req request, n int, err error) error {
	if err != nil && n > 0 {
		return fmt.Errorf("%s %s at offset %d: %d of %d bytes, then %w", what, FileName(req.file), req.off, n, req.size, err)
	}
	if err != nil {
		return fmt.Errorf("%s %s at offset %d: %w", what, FileName(req.file), req.off, err)
	}
	if n != req.size {
		return fmt.Errorf("%s %s at offset %d: %d of %d bytes (%w)", what, FileName(req.file), req.off, n, req.size, io.ErrUnexpectedEOF)
	}
	return nil
}

// Close runs the end-of-thread fsyncs and frees the buffer.
func (w *syncWorker) Close() error {
	err := w.fsyncEnd()
	if w.buf != nil {
		_ = unix.Munmap(w.buf[:cap(w.buf)])
		w.buf = nil
	}
	return err
}

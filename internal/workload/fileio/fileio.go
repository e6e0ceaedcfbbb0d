// Package fileio is the file I/O benchmark: sysbench fileio's modes and
// options on a directory of prepared files, with reads, writes and fsyncs
// measured apart, a synchronous and an io_uring engine, O_DIRECT, and
// self-checking blocks (--verify).
package fileio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// Version changes when the file layout or the request pattern changes.
const Version = "1"

// Name is the workload's name, as sysbench's test.
const Name = "fileio"

// Modes are sysbench's --file-test-mode values.
var Modes = []string{"seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"}

// Engines are the ways requests are issued.
const (
	EngineSync    = "sync"     // pread/pwrite, one request at a time per thread (fio's psync)
	EngineIOUring = "io_uring" // up to --iodepth requests in flight per thread
)

// Options are sysbench fileio's options with its defaults, plus dbmark's.
type Options struct {
	Dir       string
	FileNum   int
	TotalSize Size
	BlockSize Size
	Mode      string
	RWRatio   float64
	Direct    bool
	DSync     bool
	Sync      bool
	FsyncFreq int
	FsyncAll  bool
	FsyncEnd  bool
	FsyncMode string
	Engine    string
	IODepth   int
	Verify    bool
}

// Workload is the fileio benchmark.
type Workload struct {
	opt Options
}

// Register adds fileio to r.
func Register(r *workload.Registry) {
	r.Register(Name, func() workload.Spec { return New().Spec() })
}

// Spec declares the workload: file I/O runs on its own target, a
// directory, with clients of its own.
func (w *Workload) Spec() workload.Spec {
	return workload.Spec{
		Meta: w.Meta(), Flags: w.Flags, Load: w.Load, OwnTarget: w.OwnTarget,
		// The options that change the prepared files: a sweep over them
		// runs cleanup and prepare for each cell.
		PrepareOptions: []string{"file-num", "file-total-size"},
		Hooks: workload.Hooks{
			Validate: w.Validate, Prepare: w.Prepare, Cleanup: w.Cleanup, Prepared: w.Prepared,
			AnnotateSweep: w.AnnotateSweep,
		},
	}
}

// New returns the workload with sysbench's defaults.
func New() *Workload {
	w := &Workload{opt: Options{
		FileNum: 128, TotalSize: 2 << 30, BlockSize: 16 << 10, RWRatio: 1.5, FsyncFreq: 100,
		FsyncEnd: true, FsyncMode: "fsync", Engine: EngineSync, IODepth: 1,
	}}
	return w
}

// Opts returns the options, for tests and callers that set them directly.
func (w *Workload) Opts() *Options { return &w.opt }

// Meta describes the workload. The headline is IOPS: events per second,
// where an event is one request as sysbench counts it (a read, a write,
// or a periodic fsync).
func (w *Workload) Meta() workload.Meta {
	return workload.Meta{Name: Name, Description: "file I/O: sysbench fileio's modes on a directory (--dir), with O_DIRECT, io_uring and verification",
		Version: Version, Headline: "iops", Better: "higher"}
}

// Flags binds the options, with sysbench's spellings as hidden aliases.
func (w *Workload) Flags(fs *pflag.FlagSet) {
	o := &w.opt
	fs.StringVar(&o.Dir, "dir", "", "directory holding the test files (required)")
	fs.IntVar(&o.FileNum, "file-num", o.FileNum, "number of files")
	fs.Var(&o.TotalSize, "file-total-size", "total size of the files (K, M, G, T suffixes)")
	fs.Var(&o.BlockSize, "block-size", "size of every request (K, M suffixes)")
	fs.StringVar(&o.Mode, "mode", "", "test mode: "+strings.Join(Modes, ", ")+" (required for run)")
	fs.Float64Var(&o.RWRatio, "rw-ratio", o.RWRatio, "reads per write in rndrw")
	fs.Var((*workload.OnOff)(&o.Direct), "direct", "open the files with O_DIRECT (bypass the page cache)")
	fs.Var((*workload.OnOff)(&o.DSync), "dsync", "open the files with O_DSYNC")
	fs.Var((*workload.OnOff)(&o.Sync), "sync", "open the files with O_SYNC")
	fs.IntVar(&o.FsyncFreq, "fsync-freq", o.FsyncFreq, "fsync every file after this many requests, when anything was written (0: never)")
	fs.Var((*workload.OnOff)(&o.FsyncAll), "fsync-all", "fsync after every write (overrides --fsync-freq and --fsync-end)")
	fs.Var((*workload.OnOff)(&o.FsyncEnd), "fsync-end", "fsync every file when a thread ends, in the writing modes")
	fs.StringVar(&o.FsyncMode, "fsync-mode", o.FsyncMode, "how to sync: fsync or fdatasync")
	fs.StringVar(&o.Engine, "engine", o.Engine, "how requests are issued: sync (pread/pwrite) or io_uring")
	fs.IntVar(&o.IODepth, "iodepth", o.IODepth, "requests in flight per thread with --engine io_uring")
	fs.Var((*workload.OnOff)(&o.Verify), "verify", "stamp every written block with its offset, a generation and a CRC32C, and check them on every read")
	for _, n := range []string{"direct", "dsync", "sync", "fsync-all", "fsync-end", "verify"} {
		fs.Lookup(n).NoOptDefVal = "true"
	}
	alias(fs, "file-test-mode", "mode")
	alias(fs, "file-block-size", "block-size")
	alias(fs, "file-rw-ratio", "rw-ratio")
	alias(fs, "file-fsync-freq", "fsync-freq")
	alias(fs, "file-fsync-all", "fsync-all")
	alias(fs, "file-fsync-end", "fsync-end")
	alias(fs, "file-fsync-mode", "fsync-mode")
	alias(fs, "validate", "verify")
	fs.Var(extraFlags{o: o}, "file-extra-flags", "sysbench's list of open flags: sync, dsync, direct")
	_ = fs.MarkHidden("file-extra-flags")
}

// Validate checks the options before anything is touched.
func (w *Workload) Validate(t target.Target) error {
	if err := w.opt.Validate(); err != nil {
		return err
	}
	d, ok := t.(*Dir)
	if !ok || !w.opt.Direct {
		return nil
	}
	align, _, err := directAlign(d.path)
	if err != nil {
		return err
	}
	if bs := int64(w.opt.BlockSize); bs%align != 0 {
		return fmt.Errorf("--block-size %s: O_DIRECT on %s needs a multiple of %d bytes (the device's logical block size); try --block-size %s",
			FormatSize(bs), d.path, align, FormatSize(max(align, bs/align*align)))
	}
	return nil
}

// Validate checks the options on their own.
func (o *Options) Validate() error {
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if o.Dir == "" {
		add("--dir: give the directory for the test files")
	}
	if o.FileNum < 1 || o.FileNum > 1_000_000 {
		add("--file-num %d: must be between 1 and 1000000", o.FileNum)
	}
	if o.BlockSize < 1 || o.BlockSize > 1<<30 {
		add("--block-size %s: must be between 1 byte and 1G", FormatSize(int64(o.BlockSize)))
	}
	if o.TotalSize < 1 {
		add("--file-total-size %s: must be positive", FormatSize(int64(o.TotalSize)))
	} else if o.FileNum > 0 && o.BlockSize > 0 && o.FileSize() < int64(o.BlockSize) {
		add("--file-total-size %s over %d files is %d bytes per file, less than one block of %s: give a larger size or fewer files",
			FormatSize(int64(o.TotalSize)), o.FileNum, o.FileSize(), FormatSize(int64(o.BlockSize)))
	}
	if o.Mode != "" && !slices.Contains(Modes, o.Mode) {
		add("--mode %q: use one of %s", o.Mode, strings.Join(Modes, ", "))
	}
	if o.RWRatio < 0 {
		add("--rw-ratio %g: must not be negative", o.RWRatio)
	}
	if o.FsyncFreq < 0 {
		add("--fsync-freq %d: must not be negative (0: no periodic fsync)", o.FsyncFreq)
	}
	if o.FsyncMode != "fsync" && o.FsyncMode != "fdatasync" {
		add("--fsync-mode %q: use fsync or fdatasync", o.FsyncMode)
	}
	switch o.Engine {
	case EngineSync:
		if o.IODepth != 1 {
			add("--iodepth %d: needs --engine io_uring (the sync engine has one request in flight per thread)", o.IODepth)
		}
	case EngineIOUring:
		if o.IODepth < 1 || o.IODepth > 4096 {
			add("--iodepth %d: must be between 1 and 4096", o.IODepth)
		}
		if o.Verify {
			add("--verify needs --engine sync")
		}
	default:
		add("--engine %q: use sync or io_uring", o.Engine)
	}
	if o.Verify && o.BlockSize < blockTrailer {
		add("--verify needs --block-size of at least %d bytes", blockTrailer)
	}
	if o.Verify && o.BlockSize > 0 && o.FileNum > 0 && o.FileSize()%int64(o.BlockSize) != 0 {
		add("--verify: each file is %d bytes, not a multiple of --block-size %s, so random requests would straddle the stamped blocks; choose a --file-total-size that divides into whole blocks per file",
			o.FileSize(), FormatSize(int64(o.BlockSize)))
	}
	if o.Direct && o.BlockSize > 0 && o.FileNum > 0 && o.FileSize()%int64(o.BlockSize) != 0 {
		add("--direct: each file is %d bytes, not a multiple of --block-size %s; choose a --file-total-size that divides into whole blocks per file",
			o.FileSize(), FormatSize(int64(o.BlockSize)))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// FileSize is the size of each file, as sysbench computes it.
func (o *Options) FileSize() int64 { return int64(o.TotalSize) / int64(o.FileNum) }

// FileName is sysbench's name of the n-th file.
func FileName(n int) string { return "test_file." + strconv.Itoa(n) }

// writes says whether a mode writes.
func writes(mode string) bool {
	return mode == "seqwr" || mode == "seqrewr" || mode == "rndwr" || mode == "rndrw"
}

// OwnTarget is the directory: fileio needs no --target.
func (w *Workload) OwnTarget(_ context.Context) (target.Target, error) {
	if w.opt.Dir == "" {
		return nil, errors.New("fileio needs --dir: the directory for the test files (e.g. --dir /mnt/data)")
	}
	dir, err := filepath.Abs(w.opt.Dir)
	if err != nil {
		return nil, fmt.Errorf("--dir %s: %w", w.opt.Dir, err)
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("--dir %s: no such directory (create it first)", w.opt.Dir)
	case err != nil:
		return nil, fmt.Errorf("--dir %s: %w", w.opt.Dir, err)
	case !st.IsDir():
		return nil, fmt.Errorf("--dir %s: not a directory", w.opt.Dir)
	}
	w.opt.Dir = dir
	return &Dir{path: dir, opt: &w.opt}, nil
}

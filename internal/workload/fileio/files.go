package fileio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/dbmark/dbmark/internal/progress"
	"github.com/dbmark/dbmark/internal/workload"
)

// ManifestName is the file prepare leaves beside the test files, so cleanup
// removes only what prepare made and a run knows what was prepared.
const ManifestName = ".dbmark-fileio.json"

// manifestVersion 2 derives block payloads from PayloadSeed (version 1
// wrote random ones, which --verify cannot rebuild).
const manifestVersion = 2

// Manifest describes the prepared files.
type Manifest struct {
	Version   int      `json:"version"`
	FileNum   int      `json:"file_num"`
	FileSize  int64    `json:"file_size"`
	TotalSize int64    `json:"total_size"`
	BlockSize int64    `json:"block_size"` // of the stamped blocks
	Files     []string `json:"files"`
	// Generation is the last generation written into blocks.
	Generation uint64 `json:"generation"`
	// PayloadSeed, with a block's file, offset and generation, gives the
	// payload of every stamped block.
	PayloadSeed uint64 `json:"payload_seed"`
	// Unverified says a run wrote blocks without stamping them, so the
	// files can no longer be verified.
	Unverified bool `json:"unverified,omitempty"`
	// Incomplete says prepare has not finished writing Files: it writes
	// the manifest so before the first file, so a prepare cut short (a
	// kill) leaves files that cleanup knows as its own.
	Incomplete bool `json:"incomplete,omitempty"`
}

// cutShort is the refusal of files a prepare left unfinished.
func cutShort(dir string) error {
	return fmt.Errorf("a prepare in %s was cut short before its files were complete: run dbmark cleanup fileio --dir %s, or prepare again", dir, dir)
}

func readManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w (remove it and the test files by hand)", filepath.Join(dir, ManifestName), err)
	}
	return &m, nil
}

// write replaces the manifest atomically.
func (m *Manifest) write(dir string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, ManifestName+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write the manifest: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, ManifestName)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write the manifest: %w", err)
	}
	return nil
}

func (w *Workload) dir(env workload.Env) (*Dir, error) {
	d, ok := env.Target.(*Dir)
	if !ok {
		return nil, errors.New("fileio runs on a directory (--dir), not on a database target")
	}
	return d, nil
}

// mismatch says how the prepared files differ from the options, or "".
func (m *Manifest) mismatch(o *Options) string {
	if m.FileNum != o.FileNum || m.FileSize != o.FileSize() {
		return fmt.Sprintf("the directory holds %d files of %s (prepared with --file-num %d --file-total-size %s), not %d of %s",
			m.FileNum, FormatSize(m.FileSize), m.FileNum, FormatSize(m.TotalSize), o.FileNum, FormatSize(o.FileSize()))
	}
	return ""
}

// resizes says whether the run writes the prepared files anew at the
// options' size: seqwr creates its files from empty, so it runs on the
// same files prepared at another size, as sysbench's does (without
// --verify, whose block table is the prepared files').
func (w *Workload) resizes(m *Manifest) bool {
	return w.opt.Mode == "seqwr" && !w.opt.Verify && m.FileNum == w.opt.FileNum
}

// Prepared checks that prepare made files matching the options.
func (w *Workload) Prepared(_ context.Context, env workload.Env) error {
	d, err := w.dir(env)
	if err != nil {
		return err
	}
	m, err := readManifest(d.path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no prepared files in %s: run dbmark prepare fileio --dir %s with the same --file-num and --file-total-size", d.path, d.path)
	}
	if err != nil {
		return err
	}
	if m.Incomplete {
		return cutShort(d.path)
	}
	if s := m.mismatch(&w.opt); s != "" && !w.resizes(m) {
		return fmt.Errorf("%s: run cleanup and prepare again, or use the prepared sizes", s)
	}
	if w.opt.Mode == "seqwr" {
		return nil // it rewrites the files from empty
	}
	for _, name := range m.Files {
		st, err := os.Stat(filepath.Join(d.path, name))
		if err != nil {
			return fmt.Errorf("prepared file %s: %w (run cleanup and prepare again)", name, err)
		}
		if st.Size() < m.FileSize {
			return fmt.Errorf("prepared file %s is %d bytes, expected %d (a seqwr run was cut short?): run dbmark prepare fileio again, it rewrites them", name, st.Size(), m.FileSize)
		}
	}
	return nil
}

// Prepare writes the files with real, verifiable blocks (no holes: every
// block is allocated, so run pays no first-write penalty) and fsyncs them.
// A failed or interrupted prepare removes what it wrote.
func (w *Workload) Prepare(ctx context.Context, env workload.Env) (err error) {
	d, err := w.dir(env)
	if err != nil {
		return err
	}
	o := &w.opt
	if m, err := readManifest(d.path); err == nil {
		if s := m.mismatch(o); s != "" && m.Incomplete {
			return fmt.Errorf("a prepare of %d files of %s in %s was cut short: run dbmark cleanup fileio --dir %s first",
				m.FileNum, FormatSize(m.FileSize), d.path, d.path)
		}
		if s := m.mismatch(o); s != "" {
			return fmt.Errorf("%s: run dbmark cleanup fileio --dir %s first", s, d.path)
		}
		if perr := w.Prepared(ctx, env); perr == nil {
			env.Logger.Info("the files are already prepared", "dir", d.path)
			return nil
		}
		// Its own files, left short (a seqwr run cut short empties them):
		// they are written again.
		fmt.Fprintf(env.Progress, "the prepared files in %s are incomplete: writing them again\n", d.path)
		if err := w.Cleanup(ctx, env); err != nil {
			return err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for i := 0; i < o.FileNum; i++ {
		if _, err := os.Lstat(filepath.Join(d.path, FileName(i))); err == nil {
			return fmt.Errorf("%s already exists and was not made by dbmark prepare: remove it or choose another --dir", filepath.Join(d.path, FileName(i)))
		}
	}
	if err := checkWritable(d.path); err != nil {
		return err
	}
	// A generation table left without its manifest belongs to no files.
	if err := os.Remove(filepath.Join(d.path, GensName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the stale %s: %w", GensName, err)
	}
	need := o.FileSize() * int64(o.FileNum)
	var sf unix.Statfs_t
	if err := unix.Statfs(d.path, &sf); err != nil {
		return fmt.Errorf("free space of %s: %w", d.path, err)
	}
	if free := int64(sf.Bavail) * sf.Bsize; free < need {
		return fmt.Errorf("not enough free space in %s: the files need %s, %s is free; use a smaller --file-total-size or another --dir",
			d.path, FormatSize(need), FormatSize(free))
	}

	bs := int64(o.BlockSize)
	rng := rand.New(rand.NewPCG(env.Seed, 0xf11e))
	names := make([]string, o.FileNum)
	for i := range names {
		names[i] = FileName(i)
	}
	m := &Manifest{Version: manifestVersion, FileNum: o.FileNum, FileSize: o.FileSize(), TotalSize: int64(o.TotalSize),
		BlockSize: bs, Files: names, Generation: 1, PayloadSeed: rng.Uint64(), Incomplete: true}
	// The manifest first: whatever stops this prepare, even a kill, leaves
	// only files that cleanup knows are dbmark's.
	if err := m.write(d.path); err != nil {
		return err
	}
	var made []string
	defer func() {
		if err != nil {
			for _, p := range made {
				os.Remove(p)
			}
			os.Remove(filepath.Join(d.path, ManifestName))
			os.Remove(filepath.Join(d.path, GensName))
		}
	}()
	bar := progress.New(env.Progress, env.Interactive, fmt.Sprintf("writing %d files of %s (MiB)", o.FileNum, FormatSize(o.FileSize())), need>>20)
	seed := m.PayloadSeed
	chunk := max(bs, (1<<20)/bs*bs) // whole blocks, about 1 MiB a write
	buf := make([]byte, chunk)
	var written int64
	for i := 0; i < o.FileNum; i++ {
		p := filepath.Join(d.path, FileName(i))
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return writableError(d.path, err)
		}
		made = append(made, p)
		if err := writeFile(ctx, f, i, o.FileSize(), bs, buf, seed, rng, func(n int64) {
			written += n
			bar.Set(written >> 20)
		}); err != nil {
			f.Close()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("write %s: %w", p, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	bar.Finish()
	m.Incomplete = false
	return m.write(d.path)
}

// writeFile fills f with stamped blocks of generation 1 (random bytes
// where no whole block fits) and fsyncs it.
func writeFile(ctx context.Context, f *os.File, file int, size, bs int64, buf []byte, seed uint64, rng *rand.Rand, done func(int64)) error {
	for off := int64(0); off < size; {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		n := min(int64(len(buf)), size-off)
		b := buf[:n]
		s := int64(0)
		for ; s+bs <= n && bs >= blockTrailer; s += bs {
			fillBlock(b[s:s+bs], seed, file, off+s, 1)
		}
		fillRandom(b[s:], rng)
		if _, err := f.WriteAt(b, off); err != nil {
			if errors.Is(err, unix.ENOSPC) {
				return unix.ENOSPC // the errno, without the path said twice
			}
			return err
		}
		off += n
		done(n)
	}
	return f.Sync()
}

// checkWritable creates and removes a probe file.
func checkWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".dbmark-probe-*")
	if err != nil {
		return writableError(dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// Cleanup removes the files the manifest lists, and the manifest; anything
// else in the directory is left alone.
func (w *Workload) Cleanup(_ context.Context, env workload.Env) error {
	d, err := w.dir(env)
	if err != nil {
		return err
	}
	m, err := readManifest(d.path)
	if errors.Is(err, os.ErrNotExist) {
		env.Logger.Info("nothing to clean up: no files prepared by dbmark", "dir", d.path)
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range m.Files {
		if filepath.Base(name) != name {
			errs = append(errs, fmt.Errorf("manifest names %q, outside the directory: left alone", name))
			continue
		}
		if err := os.Remove(filepath.Join(d.path, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(filepath.Join(d.path, GensName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("cleanup: %w", errors.Join(errs...))
	}
	return os.Remove(filepath.Join(d.path, ManifestName))
}

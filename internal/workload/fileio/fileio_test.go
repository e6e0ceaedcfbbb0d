package fileio_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/fileio"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

// setup returns a workload on a fresh directory with small files, prepared.
func setup(t *testing.T, fileNum int, total string, change func(o *fileio.Options)) (*fileio.Workload, workload.Env) {
	t.Helper()
	w := fileio.New()
	o := w.Opts()
	o.Dir = t.TempDir()
	o.FileNum = fileNum
	if err := o.TotalSize.Set(total); err != nil {
		t.Fatal(err)
	}
	o.BlockSize = 4096
	if change != nil {
		change(o)
	}
	tg, err := w.OwnTarget(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(tg); err != nil {
		t.Fatal(err)
	}
	env := workload.Env{Target: tg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Threads: 1, Seed: 7, Progress: io.Discard}
	if err := w.Prepare(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	return w, env
}

// run runs the workload for exactly events events and returns the counts
// of each operation.
func run(t *testing.T, w *fileio.Workload, env workload.Env, threads int, events int64) (map[string]int64, *runner.Outcome) {
	t.Helper()
	ctx := context.Background()
	if err := w.Prepared(ctx, env); err != nil {
		t.Fatal(err)
	}
	load, err := w.Load(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	cfg := runner.Config{Threads: threads, Events: events, MaxTries: 1, Percentiles: []float64{50, 95}, Seed: env.Seed}
	out := sqlclient.Run(ctx, cfg, env.Target, load, nil, env.Logger)
	counts := map[string]int64{}
	for _, op := range out.Summary.Ops {
		counts[op.Name] = op.Count
	}
	return counts, out
}

func wantCounts(t *testing.T, got map[string]int64, want map[string]int64) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
}

func TestPrepareWritesRealBlocksAndCleanupLeavesForeignFiles(t *testing.T) {
	w, env := setup(t, 3, "3M", nil)
	dir := w.Opts().Dir
	for i := 0; i < 3; i++ {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(dir, fileio.FileName(i)), &st); err != nil {
			t.Fatal(err)
		}
		if st.Size != 1<<20 || st.Blocks*512 < st.Size {
			t.Fatalf("%s: size %d, %d bytes allocated: want 1 MiB, fully allocated (no holes)", fileio.FileName(i), st.Size, st.Blocks*512)
		}
	}
	// Foreign files, one with a name sysbench would use, stay.
	for _, n := range []string{"notes.txt", "test_file.3"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Cleanup(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "notes.txt test_file.3" {
		t.Fatalf("after cleanup the directory holds %v, want only the foreign files", names)
	}
}

func TestPrepareRefusesFilesItDidNotMake(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "test_file.0"), []byte("sysbench's"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := fileio.New()
	o := w.Opts()
	o.Dir, o.FileNum, o.TotalSize = dir, 2, 1<<20
	tg, _ := w.OwnTarget(context.Background())
	err := w.Prepare(context.Background(), workload.Env{Target: tg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Progress: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "not made by dbmark") {
		t.Fatalf("err %v: want a refusal to overwrite test_file.0", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "test_file.0")); string(b) != "sysbench's" {
		t.Fatal("the foreign file was changed")
	}
}

// sysbench's rule, with 1.5 reads per write: 100 requests are 60 reads
// and 40 writes; after every 10 requests with a write among them, the next
// 2 events fsync the 2 files; --fsync-end adds one fsync per file at the end.
func TestRndrwRatioAndFsyncFreq(t *testing.T) {
	w, env := setup(t, 2, "2M", func(o *fileio.Options) {
		o.Mode, o.RWRatio, o.FsyncFreq, o.FsyncEnd = "rndrw", 1.5, 10, false
	})
	got, out := run(t, w, env, 1, 120)
	wantCounts(t, got, map[string]int64{"event": 120, "read": 60, "write": 40, "fsync": 20})
	if out.Summary.ReadMiBPerS <= 0 || out.Summary.WriteMiBPerS <= 0 {
		t.Errorf("MiB/s: read %v, write %v: want both reported", out.Summary.ReadMiBPerS, out.Summary.WriteMiBPerS)
	}

	w.Opts().FsyncEnd = true
	got, _ = run(t, w, env, 1, 120)
	wantCounts(t, got, map[string]int64{"event": 120, "read": 60, "write": 40, "fsync": 22})

	w.Opts().FsyncAll = true // every write fsyncs; no periodic fsyncs, no fsync at the end
	got, _ = run(t, w, env, 1, 100)
	wantCounts(t, got, map[string]int64{"event": 100, "read": 60, "write": 40, "fsync": 40})
}

func TestModes(t *testing.T) {
	// 2 files of 256 KiB in 4 KiB blocks: 128 blocks.
	w, env := setup(t, 2, "512K", func(o *fileio.Options) { o.FsyncFreq = 0 })
	o := w.Opts()
	for _, c := range []struct {
		mode    string
		threads int
		want    map[string]int64
	}{
		{"rndrd", 2, map[string]int64{"read": 300, "write": 0, "fsync": 0}},
		{"rndwr", 2, map[string]int64{"read": 0, "write": 300, "fsync": 4}}, // fsync-end: 2 files per thread
		{"seqrd", 3, map[string]int64{"read": 300, "write": 0, "fsync": 0}},
		{"seqrewr", 1, map[string]int64{"read": 0, "write": 300, "fsync": 2}},
	} {
		o.Mode = c.mode
		got, out := run(t, w, env, c.threads, 300)
		if out.Status != result.StatusOK {
			t.Fatalf("%s: %s %v", c.mode, out.Status, out.Err)
		}
		wantCounts(t, got, c.want)
	}
	// seqwr starts from empty files and writes them through in order:
	// exactly one pass of 128 blocks leaves both files whole.
	o.Mode = "seqwr"
	got, _ := run(t, w, env, 2, 128)
	wantCounts(t, got, map[string]int64{"write": 128})
	for i := 0; i < 2; i++ {
		st, err := os.Stat(filepath.Join(o.Dir, fileio.FileName(i)))
		if err != nil || st.Size() != 256<<10 {
			t.Fatalf("after seqwr %s: %v, err %v; want 256 KiB", fileio.FileName(i), st.Size(), err)
		}
	}
}

func TestVerifyFindsACorruptBlock(t *testing.T) {
	w, env := setup(t, 1, "64K", func(o *fileio.Options) { o.Mode, o.Verify = "seqrd", true })
	got, out := run(t, w, env, 1, 16) // every block once
	if out.Status != result.StatusOK || got["read"] != 16 {
		t.Fatalf("clean files: %s %v, %v", out.Status, out.Err, got)
	}
	// Writes under --verify stamp a new generation that reads accept.
	w.Opts().Mode = "rndwr"
	if _, out := run(t, w, env, 2, 200); out.Status != result.StatusOK {
		t.Fatalf("rndwr --verify: %v", out.Err)
	}
	w.Opts().Mode = "seqrd"
	if _, out := run(t, w, env, 1, 16); out.Status != result.StatusOK {
		t.Fatalf("reading back: %v", out.Err)
	}

	// Flip one byte of the fourth block on disk.
	p := filepath.Join(w.Opts().Dir, "test_file.0")
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	f.ReadAt(b, 3*4096+100)
	b[0] ^= 0x40
	f.WriteAt(b, 3*4096+100)
	f.Close()

	_, out = run(t, w, env, 1, 16)
	var ve *fileio.VerifyError
	if out.Status != result.StatusFailed || !errors.As(out.Err, &ve) {
		t.Fatalf("status %s, err %v: want a failed run with a verify error", out.Status, out.Err)
	}
	if ve.File != "test_file.0" || ve.Offset != 3*4096 || !strings.Contains(ve.What, "CRC32C") {
		t.Fatalf("verify error %+v: want test_file.0 at offset 12288, a CRC mismatch", ve)
	}
}

func TestVerifyRefusesFilesWrittenWithoutIt(t *testing.T) {
	w, env := setup(t, 1, "64K", func(o *fileio.Options) { o.Mode = "rndwr" })
	run(t, w, env, 1, 10)
	w.Opts().Mode, w.Opts().Verify = "rndrd", true
	if _, err := w.Load(context.Background(), env); err == nil || !strings.Contains(err.Error(), "prepare again") {
		t.Fatalf("err %v: want a refusal naming prepare", err)
	}
}

func TestIOUring(t *testing.T) {
	w, env := setup(t, 2, "1M", func(o *fileio.Options) {
		o.Mode, o.Engine, o.IODepth, o.FsyncFreq = "rndrw", fileio.EngineIOUring, 8, 10
	})
	load, err := w.Load(context.Background(), env)
	if err != nil {
		t.Skipf("io_uring is not available here: %v", err)
	}
	_ = load
	got, out := run(t, w, env, 2, 600)
	if out.Status != result.StatusOK {
		t.Fatalf("%s: %v", out.Status, out.Err)
	}
	// Each event is one completion: reads, writes and periodic fsyncs add
	// up to the events; the end adds one fsync per file and thread.
	if got["event"] != 600 || got["read"]+got["write"]+got["fsync"]-4 != 600 || got["write"] == 0 || got["fsync"] <= 4 {
		t.Fatalf("counts %v: want 600 events made of reads, writes and fsyncs", got)
	}
	if l := out.Summary.Latency; l == nil || l.MinMS <= 0 {
		t.Fatalf("latency %+v: want the completions timed", l)
	}
}

func TestRunRefusesOtherPreparedSizes(t *testing.T) {
	w, env := setup(t, 2, "1M", nil)
	w.Opts().TotalSize = 2 << 20
	err := w.Prepared(context.Background(), env)
	if err == nil || !strings.Contains(err.Error(), "cleanup and prepare") {
		t.Fatalf("err %v: want a refusal naming cleanup and prepare", err)
	}
	if got := w.Spec().PrepareOptions; strings.Join(got, ",") != "file-num,file-total-size" {
		t.Fatalf("PrepareOptions %v", got)
	}
}

// TestSeqwrRunsOnFilesOfAnotherSize: seqwr creates its files, so, as
// sysbench's, it runs on the same files prepared at another size and
// writes them at the size asked; a mode that reads them still refuses.
func TestSeqwrRunsOnFilesOfAnotherSize(t *testing.T) {
	w, env := setup(t, 2, "64K", nil)
	o := w.Opts()
	o.TotalSize, o.Mode, o.FsyncFreq = 1<<20, "seqwr", 0
	counts, out := run(t, w, env, 1, 256) // 2 files of 512K in 4K blocks
	if out.Status != result.StatusOK {
		t.Fatalf("seqwr on files prepared at 64K: %s %v", out.Status, out.Err)
	}
	wantCounts(t, counts, map[string]int64{"write": 256})
	for _, name := range []string{"test_file.0", "test_file.1"} {
		st, err := os.Stat(filepath.Join(o.Dir, name))
		if err != nil || st.Size() != 512<<10 {
			t.Fatalf("%s after seqwr: %v %v, want 512K", name, st.Size(), err)
		}
	}
	o.Mode = "rndrd"
	if err := w.Prepared(context.Background(), env); err != nil {
		t.Fatalf("rndrd on the files seqwr wrote at 1M: %v", err)
	}
	o.TotalSize = 2 << 20
	if err := w.Prepared(context.Background(), env); err == nil {
		t.Fatal("rndrd on files of another size accepted")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"16K": 16384, "2G": 2 << 30, "256M": 256 << 20, "1.5G": 3 << 29, "4096": 4096, "16KiB": 16384, "1t": 1 << 40} {
		if got, err := fileio.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "-1K", "256M:6G:256M", "1,4"} {
		if _, err := fileio.ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q): want an error", in)
		}
	}
}

func TestPlateaus(t *testing.T) {
	// Three tiers, as the seed posts see them, with noise and one dip that
	// is not a tier.
	ys := []float64{40000, 41000, 39500, 40200, 24000, 40100, 12100, 11800, 12300, 11900, 3000, 3100, 2950, 3050}
	if got := fileio.Plateaus(ys); !equal(got, []int{0, 6, 10}) {
		t.Fatalf("Plateaus = %v, want [0 6 10]", got)
	}
	if got := fileio.Plateaus([]float64{100, 90, 110, 95, 105}); !equal(got, []int{0}) {
		t.Fatalf("flat: %v, want [0]", got)
	}
	if got := fileio.Plateaus([]float64{100, 100, 50}); !equal(got, []int{0, 2}) {
		t.Fatalf("drop at the last point: %v, want [0 2]", got)
	}
	// A slow decline of 5% a step is no cache tier ending.
	decl := []float64{100, 95, 90, 85, 80, 76, 72, 68}
	if got := fileio.Plateaus(decl); !equal(got, []int{0}) {
		t.Fatalf("decline: %v, want [0]", got)
	}
	w := fileio.New()
	xs := make([]float64, len(ys))
	for i := range xs {
		xs[i] = float64(int64(i+1) * 256 << 20)
	}
	notes := w.AnnotateSweep("file-total-size", xs, ys)
	if len(notes) != 3 || !strings.Contains(notes[1], "at 1792M") || !strings.Contains(notes[2], "at 2816M") {
		t.Fatalf("notes %q", notes)
	}
	if w.AnnotateSweep("threads", xs, ys) != nil {
		t.Fatal("other axes get no notes")
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestInterruptedRunEndsQuickly(t *testing.T) {
	w, env := setup(t, 1, "1M", func(o *fileio.Options) { o.Mode = "rndrd" })
	load, err := w.Load(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	out := sqlclient.Run(ctx, runner.Config{Threads: 2, Duration: time.Minute, MaxTries: 1, Percentiles: []float64{50}}, env.Target, load, nil, env.Logger)
	if out.Status != result.StatusInterrupted || out.Summary.Events == 0 {
		t.Fatalf("status %s, %d events: want an interrupted run with its partial counts", out.Status, out.Summary.Events)
	}
}

// copyBlock reads or writes one block of test_file.0 at off.
func blockAt(t *testing.T, dir string, off int64, put []byte) []byte {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "test_file.0"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if put != nil {
		if _, err := f.WriteAt(put, off); err != nil {
			t.Fatal(err)
		}
		return put
	}
	b := make([]byte, 4096)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	return b
}

func verifyError(t *testing.T, out *runner.Outcome) *fileio.VerifyError {
	t.Helper()
	var ve *fileio.VerifyError
	if out.Status != result.StatusFailed || !errors.As(out.Err, &ve) {
		t.Fatalf("status %s, err %v: want a failed run with a verify error", out.Status, out.Err)
	}
	return ve
}

func TestVerifyCatchesAStaleBlock(t *testing.T) {
	w, env := setup(t, 1, "64K", func(o *fileio.Options) { o.Mode, o.Verify = "seqrewr", true })
	dir := w.Opts().Dir
	if _, out := run(t, w, env, 1, 16); out.Status != result.StatusOK { // every block, generation 2
		t.Fatalf("first write: %v", out.Err)
	}
	old := blockAt(t, dir, 5*4096, nil)
	if _, out := run(t, w, env, 1, 16); out.Status != result.StatusOK { // generation 3
		t.Fatalf("second write: %v", out.Err)
	}
	blockAt(t, dir, 5*4096, old) // a valid block, one write too old

	w.Opts().Mode = "seqrd"
	_, out := run(t, w, env, 1, 16)
	ve := verifyError(t, out)
	if ve.File != "test_file.0" || ve.Offset != 5*4096 || ve.Byte != 5*4096 ||
		!strings.Contains(ve.What, "generation 2, expected 3") || !strings.Contains(ve.What, "stale") {
		t.Fatalf("verify error %+v: want test_file.0, the block at 20480, its first byte, a stale generation 2", ve)
	}
	for _, s := range []string{"test_file.0", "block at offset 20480", "byte at offset 20480", "stale"} {
		if !strings.Contains(ve.Error(), s) {
			t.Errorf("message %q: want %q in it", ve.Error(), s)
		}
	}
}

func TestVerifyNamesTheFlippedByte(t *testing.T) {
	w, env := setup(t, 1, "64K", func(o *fileio.Options) { o.Mode, o.Verify = "rndwr", true })
	dir := w.Opts().Dir
	if _, out := run(t, w, env, 2, 100); out.Status != result.StatusOK {
		t.Fatalf("rndwr --verify: %v", out.Err)
	}
	// A byte of the payload, then one of the trailer (its generation).
	for _, at := range []int64{7*4096 + 1234, 9*4096 + 4096 - 16} {
		b := blockAt(t, dir, at&^4095, nil)
		b[at&4095] ^= 0x08
		blockAt(t, dir, at&^4095, b)
		w.Opts().Mode = "seqrd"
		_, out := run(t, w, env, 1, 16)
		ve := verifyError(t, out)
		if ve.Offset != at&^4095 || ve.Byte != at || ve.Differ != 1 || !strings.Contains(ve.What, "CRC32C") {
			t.Fatalf("flipped byte at %d: verify error %+v (%v); want the block at %d, exactly that byte, a CRC mismatch", at, ve, ve, at&^4095)
		}
		if !strings.Contains(ve.Error(), fmt.Sprintf("byte at offset %d (1 byte of the block differs)", at)) {
			t.Fatalf("message %q: want the byte's offset", ve.Error())
		}
		b[at&4095] ^= 0x08 // mend it for the next case
		blockAt(t, dir, at&^4095, b)
	}
}

// A write run that ended before it recorded its blocks (killed) leaves
// them unknown: later reads accept any generation it may have written,
// and a write run after it tracks blocks afresh.
func TestVerifyAfterACutShortWriteRun(t *testing.T) {
	w, env := setup(t, 1, "64K", func(o *fileio.Options) { o.Mode, o.Verify = "rndrw", true })
	dir := w.Opts().Dir
	if _, out := run(t, w, env, 2, 300); out.Status != result.StatusOK {
		t.Fatalf("rndrw --verify: %v", out.Err)
	}
	gens := filepath.Join(dir, fileio.GensName)
	saved, err := os.ReadFile(gens)
	if err != nil {
		t.Fatal(err)
	}
	if _, out := run(t, w, env, 2, 300); out.Status != result.StatusOK {
		t.Fatalf("second rndrw --verify: %v", out.Err)
	}
	if err := os.WriteFile(gens, saved, 0o644); err != nil { // as if the second run had been killed
		t.Fatal(err)
	}
	w.Opts().Mode = "seqrd"
	if _, out := run(t, w, env, 1, 16); out.Status != result.StatusOK {
		t.Fatalf("reading after a cut-short run: %v", out.Err)
	}
	w.Opts().Mode = "seqrewr"
	if _, out := run(t, w, env, 1, 16); out.Status != result.StatusOK {
		t.Fatalf("rewriting: %v", out.Err)
	}
	w.Opts().Mode = "seqrd"
	if _, out := run(t, w, env, 1, 16); out.Status != result.StatusOK {
		t.Fatalf("reading back: %v", out.Err)
	}
	// A damaged table is named, never trusted.
	if err := os.WriteFile(gens, []byte("DBMKGEN1 garbage garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Load(context.Background(), env); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("load with a damaged table: %v; want it named damaged", err)
	}
}

func TestVerifyNeedsWholeBlocksPerFile(t *testing.T) {
	o := fileio.New().Opts()
	o.Dir, o.FileNum, o.TotalSize, o.BlockSize, o.Verify = "/tmp", 3, 1<<20, 4096, true
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "whole blocks") {
		t.Fatalf("err %v: want a refusal naming whole blocks", err)
	}
}

// A seqwr run cut short leaves dbmark's own files short: prepare writes
// them again instead of taking them for someone else's.
func TestPrepareRewritesFilesACutShortSeqwrLeft(t *testing.T) {
	w, env := setup(t, 2, "2M", func(o *fileio.Options) { o.Mode = "seqwr" })
	run(t, w, env, 1, 10) // 10 blocks of 512 written, files emptied first
	w.Opts().Mode = "rndrd"
	if err := w.Prepared(context.Background(), env); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("Prepared after a cut-short seqwr: %v", err)
	}
	var progress strings.Builder
	env.Progress = &progress
	if err := w.Prepare(context.Background(), env); err != nil {
		t.Fatalf("prepare after a cut-short seqwr: %v", err)
	}
	if !strings.Contains(progress.String(), "incomplete: writing them again") {
		t.Errorf("prepare said %q: want it to say it writes the files again", progress.String())
	}
	if err := w.Prepared(context.Background(), env); err != nil {
		t.Fatalf("not prepared after prepare: %v", err)
	}
}

// smallTmpfs mounts a tmpfs of size in a directory of the test, or skips.
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs to fill up needs root")
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+size+",mode=0755"); err != nil {
		t.Skipf("cannot mount a %s tmpfs (%v): this test needs a machine where root may mount", size, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// A write that comes up short on a full disk is tried again for the rest,
// and the run reports the errno of that try, never "unexpected EOF".
func TestShortWriteOnAFullDiskReportsENOSPC(t *testing.T) {
	mnt := smallTmpfs(t, "4m")
	for _, engine := range []string{fileio.EngineSync, fileio.EngineIOUring} {
		t.Run(engine, func(t *testing.T) {
			dir := filepath.Join(mnt, engine)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			w, env := setup(t, 1, "1M", func(o *fileio.Options) {
				o.Dir, o.Mode, o.BlockSize, o.Engine = dir, "seqrewr", 64<<10, engine
			})
			if engine == fileio.EngineIOUring {
				if _, err := w.Load(context.Background(), env); err != nil && strings.Contains(err.Error(), "io_uring") {
					t.Skipf("no io_uring here: %v", err)
				}
			}
			file := filepath.Join(dir, fileio.FileName(0))
			// Holes again, so the run's writes need space.
			if err := unix.Fallocate(mustOpen(t, file), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, 1<<20); err != nil {
				t.Fatal(err)
			}
			// Fill the filesystem, then free two pages: a 64 KiB write
			// into a hole finds room for 8 KiB of it.
			filler := filepath.Join(dir, "filler")
			f, err := os.Create(filler)
			if err != nil {
				t.Fatal(err)
			}
			chunk := make([]byte, 64<<10)
			var size int64
			for {
				n, err := f.Write(chunk)
				size += int64(n)
				if errors.Is(err, syscall.ENOSPC) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := f.Truncate(size - 8192); err != nil {
				t.Fatal(err)
			}
			f.Close()
			defer os.Remove(filler)
			_, out := run(t, w, env, 1, 16)
			if out.Err == nil {
				t.Fatal("the run succeeded on a full disk")
			}
			msg := out.Err.Error()
			if !errors.Is(out.Err, syscall.ENOSPC) || strings.Contains(msg, "unexpected EOF") || !strings.Contains(msg, "no space left on device") {
				t.Fatalf("error %q: want ENOSPC, not an unexpected EOF", msg)
			}
			if !strings.Contains(msg, "8192 of 65536 bytes") {
				t.Errorf("error %q: want it to say how much of the write was done", msg)
			}
		})
	}
}

func mustOpen(t *testing.T, path string) int {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// Deleting the generation table a verifying write run left does not turn
// the stale-block check off silently: --verify refuses.
func TestVerifyRefusesAMissingGenerationTable(t *testing.T) {
	w, env := setup(t, 1, "64K", func(o *fileio.Options) { o.Mode, o.Verify = "rndwr", true })
	if _, out := run(t, w, env, 1, 50); out.Status != result.StatusOK {
		t.Fatalf("rndwr --verify: %v", out.Err)
	}
	if err := os.Remove(filepath.Join(w.Opts().Dir, fileio.GensName)); err != nil {
		t.Fatal(err)
	}
	w.Opts().Mode = "seqrd"
	_, err := w.Load(context.Background(), env)
	if err == nil || !strings.Contains(err.Error(), fileio.GensName) || !strings.Contains(err.Error(), "missing") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("load after the generation table was removed: %v; want one line naming it missing", err)
	}
}

package fileio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync/atomic"
)

// GensName is the generation table beside the test files: the generation
// of every block's last --verify write, so a read catches a block that is
// older than it should be (put back from a copy, or a write the device
// acknowledged and lost).
const GensName = ".dbmark-fileio.gens"

// The table's file: a magic, the generation it is complete through, the
// number of blocks, one little-endian uint32 per block (0: not known), and
// a CRC32C of everything before it.
const gensMagic = "DBMKGEN1"

// genTable holds the generation of each block, file after file. Entries
// are atomic so a save after the run never races a worker the runner gave
// up on; a worker changes a block's entry only under that block's stripe.
type genTable struct {
	perFile int64 // whole blocks in each file
	block   int64
	gens    []atomic.Uint32
	// through is the generation the table is complete through: a block may
	// also hold a generation after it that a cut-short run wrote.
	through uint64
}

func newGenTable(m *Manifest) (*genTable, error) {
	if m.BlockSize <= 0 {
		return nil, errors.New("the manifest has no block size")
	}
	per := m.FileSize / m.BlockSize
	n := per * int64(m.FileNum)
	if n < 0 || n > 1<<34 {
		return nil, fmt.Errorf("%d blocks are too many to track (--verify keeps 4 bytes of memory per block)", n)
	}
	return &genTable{perFile: per, block: m.BlockSize, gens: make([]atomic.Uint32, n)}, nil
}

// loadGens reads the table for the prepared files. Without one the files
// are as prepare left them (generation 1 everywhere) if nothing has been
// written since, and otherwise unknown.
func loadGens(dir string, m *Manifest) (*genTable, error) {
	t, err := newGenTable(m)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, GensName)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if m.Generation > 1 {
			// A verifying write run made it (Load saves it before the run
			// writes): without it a stale block would pass unseen.
			return nil, fmt.Errorf("--verify: the generation table %s, which a verifying write run left, is missing: without it a stale block cannot be caught; run dbmark cleanup fileio and prepare again", path)
		}
		t.fill(1)
		t.through = 1
		return t, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the generation table: %w", err)
	}
	damaged := fmt.Errorf("the generation table %s is damaged: run dbmark cleanup fileio and prepare again", path)
	const head = len(gensMagic) + 16
	if len(b) < head+4 || string(b[:len(gensMagic)]) != gensMagic {
		return nil, damaged
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, damaged
	}
	through := binary.LittleEndian.Uint64(b[len(gensMagic):])
	n := binary.LittleEndian.Uint64(b[len(gensMagic)+8:])
	if n != uint64(len(t.gens)) || uint64(len(body)-head) != 4*n || through > m.Generation {
		return nil, damaged
	}
	for i := range t.gens {
		t.gens[i].Store(binary.LittleEndian.Uint32(body[head+4*i:]))
	}
	t.through = through
	return t, nil
}

// save replaces the table atomically, complete through generation gen.
func (t *genTable) save(dir string, gen uint64) error {
	const head = len(gensMagic) + 16
	b := make([]byte, head+4*len(t.gens), head+4*len(t.gens)+4)
	copy(b, gensMagic)
	binary.LittleEndian.PutUint64(b[len(gensMagic):], gen)
	binary.LittleEndian.PutUint64(b[len(gensMagic)+8:], uint64(len(t.gens)))
	for i := range t.gens {
		binary.LittleEndian.PutUint32(b[head+4*i:], t.gens[i].Load())
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	tmp := filepath.Join(dir, GensName+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write the generation table: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, GensName)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write the generation table: %w", err)
	}
	t.through = gen
	return nil
}

// fill sets every entry to gen.
func (t *genTable) fill(gen uint32) {
	for i := range t.gens {
		t.gens[i].Store(gen)
	}
}

// entry is the block of file holding off.
func (t *genTable) entry(file int, off int64) *atomic.Uint32 {
	return &t.gens[int64(file)*t.perFile+off/t.block]
}

package fileio

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
)

// A verifiable block ends with a trailer:
//
//	offset     uint64  where the block belongs in its file
//	generation uint64  which write put it there (prepare writes 1)
//	file       uint32  the file's number
//	crc        uint32  CRC32C (Castagnoli) of everything before it
//
// so a read can tell a corrupt block (CRC), a misdirected or lost write
// (offset, file) and a stale block (generation, against the generation
// table). The payload before the trailer is derived from the manifest's
// payload seed, the file, the offset and the generation, so a reader can
// rebuild what was written and point at the first byte that differs.
const blockTrailer = 24

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// stamp writes b's trailer; the payload before it is left as it is.
func stamp(b []byte, file int, off int64, gen uint64) {
	t := b[len(b)-blockTrailer:]
	binary.LittleEndian.PutUint64(t[0:], uint64(off))
	binary.LittleEndian.PutUint64(t[8:], gen)
	binary.LittleEndian.PutUint32(t[16:], uint32(file))
	binary.LittleEndian.PutUint32(t[20:], crc32.Checksum(b[:len(b)-4], castagnoli))
}

// fillBlock writes the whole block that generation gen puts at off in
// file: the derived payload and the trailer. len(b) >= blockTrailer.
func fillBlock(b []byte, seed uint64, file int, off int64, gen uint64) {
	fillPayload(b[:len(b)-blockTrailer], seed, file, off, gen)
	stamp(b, file, off, gen)
}

// fillPayload fills b with incompressible bytes that depend only on its
// arguments (a SplitMix64 stream), so equal blocks are never written to
// two places and a reader can rebuild any block.
func fillPayload(b []byte, seed uint64, file int, off int64, gen uint64) {
	s := mix64(seed ^ mix64(uint64(file)+0x632be59bd9b4e019) ^ mix64(uint64(off)+0x8cb92ba72f3d8dd7) ^ mix64(gen))
	i := 0
	for ; i+8 <= len(b); i += 8 {
		s += 0x9e3779b97f4a7c15
		binary.LittleEndian.PutUint64(b[i:], mix64(s))
	}
	if i < len(b) {
		var tail [8]byte
		s += 0x9e3779b97f4a7c15
		binary.LittleEndian.PutUint64(tail[:], mix64(s))
		copy(b[i:], tail[:])
	}
}

// mix64 is SplitMix64's finaliser: a bijection that spreads every input
// bit over the output.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// fillRandom fills b with incompressible bytes.
func fillRandom(b []byte, rng *rand.Rand) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
	for ; i < len(b); i++ {
		b[i] = byte(rng.Uint32())
	}
}

// VerifyError is a block that does not hold what was written there.
type VerifyError struct {
	File string
	// Offset is the block's offset in the file.
	Offset int64
	// Byte is the offset in the file of the first byte that differs from
	// what the block's last write put there, or -1 when not known.
	Byte int64
	// Differ is how many of the block's bytes differ (0 when not known).
	Differ int
	What   string
}

func (e *VerifyError) Error() string {
	if e.Byte < 0 {
		return fmt.Sprintf("verify: %s, block at offset %d: %s", e.File, e.Offset, e.What)
	}
	n := fmt.Sprintf("%d bytes of the block differ", e.Differ)
	if e.Differ == 1 {
		n = "1 byte of the block differs"
	}
	return fmt.Sprintf("verify: %s, block at offset %d, first wrong byte at offset %d (%s): %s",
		e.File, e.Offset, e.Byte, n, e.What)
}

// expect is what a read of one block must find.
type expect struct {
	seed uint64
	// want is the generation the generation table holds for the block;
	// 0 when it is not known (after a run that was cut short).
	want uint64
	// through: besides want, the block may hold any generation in
	// (through, max], written by runs the table has not recorded.
	through, max uint64
}

func (x expect) accepts(gen uint64) bool {
	if gen == 0 || gen > x.max {
		return false
	}
	return x.want == 0 || gen == x.want || gen > x.through
}

// check verifies a block read from file at off.
func check(b []byte, file int, off int64, x expect) error {
	t := b[len(b)-blockTrailer:]
	gotOff := int64(binary.LittleEndian.Uint64(t[0:]))
	gen := binary.LittleEndian.Uint64(t[8:])
	gotFile := int(binary.LittleEndian.Uint32(t[16:]))
	stored := binary.LittleEndian.Uint32(t[20:])
	var what string
	switch sum := crc32.Checksum(b[:len(b)-4], castagnoli); {
	case sum != stored:
		what = fmt.Sprintf("CRC32C of the block is 0x%08x, expected the stored 0x%08x (the block is corrupt)", sum, stored)
	case gotOff != off || gotFile != file:
		what = fmt.Sprintf("the block belongs to %s at offset %d (a misdirected or lost write)", FileName(gotFile), gotOff)
	case !x.accepts(gen):
		if x.want != 0 && gen != 0 && gen < x.want {
			what = fmt.Sprintf("generation %d, expected %d (a stale block: an older write put back, or a write the device lost)", gen, x.want)
		} else if x.want != 0 && x.through >= x.max {
			what = fmt.Sprintf("generation %d, expected %d", gen, x.want)
		} else {
			what = fmt.Sprintf("generation %d, expected 1 to %d", gen, x.max)
		}
	default:
		return nil
	}
	e := &VerifyError{File: FileName(file), Offset: off, Byte: -1, What: what}
	// Rebuild what the block's last write put there: the table's
	// generation, or the trailer's when the table does not know it.
	g := x.want
	if g == 0 {
		g = gen
	}
	if g != 0 && g <= x.max {
		want := make([]byte, len(b))
		fillBlock(want, x.seed, file, off, g)
		for i := range b {
			if b[i] != want[i] {
				if e.Differ == 0 {
					e.Byte = off + int64(i)
					e.What += fmt.Sprintf("; the byte there is 0x%02x, generation %d wrote 0x%02x", b[i], g, want[i])
				}
				e.Differ++
			}
		}
	}
	return e
}

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
// (offset, file) and a block from the future (generation).
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
	File   string
	Offset int64
	What   string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("verify: %s at offset %d: %s", e.File, e.Offset, e.What)
}

// check verifies a block read from file at off, written at most at
// generation maxGen.
func check(b []byte, file int, off int64, maxGen uint64) error {
	t := b[len(b)-blockTrailer:]
	gotOff := int64(binary.LittleEndian.Uint64(t[0:]))
	gen := binary.LittleEndian.Uint64(t[8:])
	gotFile := int(binary.LittleEndian.Uint32(t[16:]))
	stored := binary.LittleEndian.Uint32(t[20:])
	fail := func(format string, a ...any) error {
		return &VerifyError{File: FileName(file), Offset: off, What: fmt.Sprintf(format, a...)}
	}
	if sum := crc32.Checksum(b[:len(b)-4], castagnoli); sum != stored {
		return fail("CRC32C of the block is 0x%08x, expected the stored 0x%08x (the block is corrupt)", sum, stored)
	}
	if gotOff != off || gotFile != file {
		return fail("the block belongs to %s at offset %d (a misdirected or lost write)", FileName(gotFile), gotOff)
	}
	if gen == 0 || gen > maxGen {
		return fail("generation %d, expected 1 to %d", gen, maxGen)
	}
	return nil
}

package fileio

import (
	"math/rand/v2"
	"sync"
)

// opKind is what a request does.
type opKind uint8

const (
	opRead opKind = iota
	opWrite
	opFsync
)

// request is one event: a read or write of one block, or a periodic fsync
// of one file.
type request struct {
	kind opKind
	file int
	off  int64
	size int
}

// plan hands out requests as sysbench 1.0's fileio does
// (src/tests/fileio/sb_fileio.c): sequential modes share one cursor that
// walks the files in order, so threads split the work between them; rndrw
// reads while (reads+1)/(writes+1) is below --rw-ratio; after every
// --fsync-freq requests, if anything was written, the next events fsync
// each file in turn. That state is shared, so it is kept under a lock;
// random reads and writes without periodic fsyncs need none.
type plan struct {
	mode      string
	fileNum   int
	fileSize  int64
	total     int64
	block     int64
	ratio     float64
	fsyncFreq uint64
	locked    bool

	mu        sync.Mutex
	file      int   // sequential: current file
	pos       int64 // sequential: position in it
	fsynced   int   // next file to fsync
	dirty     bool  // written since the last round of fsyncs
	performed uint64
	reads     int64
	writes    int64
}

func newPlan(o *Options) *plan {
	p := &plan{mode: o.Mode, fileNum: o.FileNum, fileSize: o.FileSize(), block: int64(o.BlockSize),
		ratio: o.RWRatio, fsyncFreq: uint64(o.FsyncFreq)}
	p.total = p.fileSize * int64(p.fileNum)
	if o.FsyncAll {
		p.fsyncFreq = 0 // --fsync-all overrides it, as in sysbench
	}
	p.locked = p.sequential() || p.mode == "rndrw" || (p.fsyncFreq > 0 && writes(p.mode))
	return p
}

func (p *plan) sequential() bool {
	return p.mode == "seqwr" || p.mode == "seqrewr" || p.mode == "seqrd"
}

// next returns the next request; rng is the calling worker's own.
func (p *plan) next(rng *rand.Rand) request {
	if !p.locked {
		return p.random(rng, p.mode == "rndwr")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	write := p.mode == "seqwr" || p.mode == "seqrewr" || p.mode == "rndwr"
	if p.mode == "rndrw" {
		write = float64(p.reads+1)/float64(p.writes+1) >= p.ratio
	}
	// Sequential reads never fsync; random modes check whatever they do.
	if p.fsyncFreq != 0 && p.dirty && p.performed%p.fsyncFreq == 0 && (write || !p.sequential()) {
		r := request{kind: opFsync, file: p.fsynced}
		p.fsynced++
		if p.fsynced == p.fileNum {
			p.fsynced, p.dirty = 0, false
		}
		return r
	}
	p.performed++
	if write {
		p.dirty = true
		p.writes++
	} else {
		p.reads++
	}
	if !p.sequential() {
		return p.random(rng, write)
	}
	if p.file == p.fileNum {
		p.file, p.pos = 0, 0
	}
	r := request{kind: opRead, file: p.file, off: p.pos, size: int(min(p.block, p.fileSize-p.pos))}
	if write {
		r.kind = opWrite
	}
	p.pos += int64(r.size)
	if p.pos == p.fileSize {
		p.file++
		p.pos = 0
	}
	return r
}

// random picks a block uniformly over all files, as sysbench does.
func (p *plan) random(rng *rand.Rand, write bool) request {
	at := rng.Int64N(p.total)
	at -= at % p.block
	r := request{kind: opRead, file: int(at / p.fileSize), off: at % p.fileSize}
	r.size = int(min(p.block, p.fileSize-r.off))
	if write {
		r.kind = opWrite
	}
	return r
}

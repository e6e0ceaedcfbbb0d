package metrics

import (
	"math/bits"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// sparse counts a worker's values between two ticks by histogram bucket,
// in a small open-addressed table. Recording is a shift, a multiply and
// a probe, where hdrhistogram's packed histogram moved memory to keep its
// counts sorted: that was a tenth of the client's user CPU on pgbench's
// select-only script. Merging into a dense histogram gives exactly the
// counts recording there directly would have. The table is kept at most
// half full: a worker's values in a tick mostly fall in buckets of their
// own, and a new bucket's probe, which ends at a free slot, took eight
// steps on average in a table three quarters full, two at half.
type sparse struct {
	slots []slot
	shift uint // 64 - log2(len(slots))
	used  int
	total int64
	// The most slots used at one merge, over the merges of a window
	// (sparseWindow), by which the table is judged too large.
	peak, merges int
}

// slot is one bucket's count. Key and count share a cache line: the
// table is often cold when a value arrives, the server having run on
// the processor since the last one.
type slot struct {
	key   int64 // the bucket's lowest value; 0 marks a free slot (values are >= 1)
	count int64
}

const (
	// subBucketBits is log2 of the histograms' sub-bucket count: with
	// three significant digits, hdrhistogram keeps values below 2048
	// exactly and the 11 highest bits of larger ones.
	subBucketBits = 11
	sparseMinSize = 64
	sparseWindow  = 16
)

// bucketFloor is the lowest value of v's bucket in a histogram of three
// significant digits with a lowest value of 1.
func bucketFloor(v int64) int64 {
	if s := bits.Len64(uint64(v)) - subBucketBits; s > 0 {
		return v >> s << s
	}
	return v
}

func (s *sparse) record(v int64) {
	if s.slots == nil {
		s.alloc(sparseMinSize)
	}
	k := bucketFloor(v)
	slots, mask := s.slots, uint64(len(s.slots)-1)
	for i := uint64(k) * 0x9E3779B97F4A7C15 >> s.shift; ; i = (i + 1) & mask {
		sl := &slots[i]
		if sl.key == k {
			sl.count++
			break
		}
		if sl.key == 0 {
			sl.key, sl.count = k, 1
			if s.used++; s.used*2 > len(slots) {
				s.rehash(2 * len(slots))
			}
			break
		}
	}
	s.total++
}

func (s *sparse) alloc(n int) {
	s.slots = make([]slot, n)
	s.shift = uint(64 - bits.TrailingZeros(uint(n)))
	s.used = 0
}

// rehash moves the table into one of n slots.
func (s *sparse) rehash(n int) {
	old := s.slots
	s.alloc(n)
	mask := n - 1
	for _, o := range old {
		if o.key == 0 {
			continue
		}
		i := int(uint64(o.key) * 0x9E3779B97F4A7C15 >> s.shift)
		for s.slots[i].key != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = o
		s.used++
	}
}

// addTo adds the counts to h and keeps them.
func (s *sparse) addTo(h *hdr.Histogram) {
	for _, sl := range s.slots {
		if sl.key != 0 {
			_ = h.RecordValues(sl.key, sl.count) // the key is within h's bounds
		}
	}
}

// mergeInto adds the counts to h and empties the table. A table less
// than an eighth full at every merge of a window gives back the room a
// burst of spread-out values took. Judged at each merge instead, tables
// shrank and grew again every few ticks with hundreds of connections (a
// worker's values per tick vary from none to a hundred there): half of
// the client's allocations in a run, spread over hundreds of processors.
func (s *sparse) mergeInto(h *hdr.Histogram) {
	s.addTo(h)
	s.total = 0
	s.peak = max(s.peak, s.used)
	if s.merges++; s.merges == sparseWindow {
		peak := s.peak
		s.peak, s.merges = 0, 0
		if len(s.slots) > sparseMinSize && peak*8 < len(s.slots) {
			n := sparseMinSize
			for n < 4*peak {
				n *= 2
			}
			s.alloc(n)
			return
		}
	}
	clear(s.slots)
	s.used = 0
}

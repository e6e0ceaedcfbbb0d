package randgen

const (
	// uniquePrime is the largest prime below 2^32. It is 3 mod 4, which
	// is what makes quadraticResidue a permutation.
	uniquePrime = 4294967291

	// uniqueXor scrambles the sum between the two permutation rounds;
	// any odd-looking constant works.
	uniqueXor = 0x3C6EF372

	// uniqueStride spaces workers' starting indexes by the golden ratio
	// of 2^32, which keeps any number of workers well apart on the
	// cycle (three-distance theorem).
	uniqueStride = 0x9E3779B9
)

// quadraticResidue permutes uint32. For a prime p = 3 mod 4, x -> x^2 mod p
// is one-to-one on [0, p/2] and its complement p - (x^2 mod p) covers the
// rest of [0, p); the five values >= p map to themselves.
func quadraticResidue(x uint32) uint32 {
	if x >= uniquePrime {
		return x
	}
	r := uint32(uint64(x) * uint64(x) % uniquePrime)
	if x <= uniquePrime/2 {
		return r
	}
	return uniquePrime - r
}

// uniqueStart is the first index of a stream's window on the shared cycle.
func uniqueStart(base uint32, stream uint64) uint32 {
	return base + uint32(stream)*uniqueStride
}

// Unique returns the next value of a pseudo-random sequence of uint32 that
// does not repeat, the equivalent of sysbench.rand.unique().
//
// sysbench keeps one global atomic counter and passes it through a
// bijection of uint32 built from two rounds of a quadratic-residue
// permutation (the RandomSequence technique by Jeff Preshing), so values are
// unique across all threads until 2^32 have been drawn. Here the counter
// lives in each Source to avoid a shared atomic: all Sources of a run share
// the bijection (it depends on the seed only), and each stream starts its
// counter at base + stream*0x9E3779B9. Values are therefore unique within a
// stream for 2^32 calls, and unique across a run's streams 0..W-1 as long as
// no stream draws more than 2^32/(3W) values (about 22 million each for 64
// workers), because until then the streams' counter windows cannot overlap.
func Unique(src *Source) uint32 {
	i := src.uniqueIndex
	src.uniqueIndex++
	return quadraticResidue((quadraticResidue(i) + src.uniqueOffset) ^ uniqueXor)
}

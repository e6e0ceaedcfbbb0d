// Package randgen generates seeded pseudo-random numbers with the meaning of
// sysbench 1.0's random number API (src/sb_rand.c and the Lua
// sysbench.rand.* functions), so that dbmark workloads can reproduce the
// access patterns sysbench users know: --rand-type
// uniform|gaussian|special|pareto|zipfian with the --rand-spec-*,
// --rand-pareto-h and --rand-zipfian-exp knobs.
//
// Every worker owns one [Source]. Sources are not safe for concurrent use,
// which keeps them lock-free and allocation-free; a [Generator], which holds
// the precomputed constants for one distribution over one range, is
// immutable and may be shared by all workers.
//
// Runs are reproducible: a Source is a pure function of the run seed and the
// worker (stream) number, unlike sysbench, which seeds its per-thread
// generators from libc random() in thread start-up order.
package randgen

import "math/bits"

// Source is a xoroshiro128+ generator (the one sysbench uses) plus the
// per-worker state of the [Unique] sequence. It must be used by one goroutine
// at a time. The zero value is not usable; create Sources with [New].
type Source struct {
	s0, s1 uint64

	// Unique sequence state: a counter fed through a fixed permutation
	// of uint32 (see unique.go).
	uniqueIndex  uint32
	uniqueOffset uint32
}

const (
	// splitmix64 constants (Steele, Lea and Flood), used only for seeding:
	// the xoroshiro authors recommend splitmix64 so that similar seeds do
	// not produce correlated states.
	splitmixGamma = 0x9E3779B97F4A7C15
	splitmixMul1  = 0xBF58476D1CE4E5B9
	splitmixMul2  = 0x94D049BB133111EB

	// Salts keep the state, stream and unique-sequence derivations from
	// colliding when seed and stream happen to be equal.
	streamSalt = 0xD1B54A32D192ED03
	uniqueSalt = 0x8CB92BA72F3D8DD7
)

// mix64 is the splitmix64 output function, a bijection on uint64.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * splitmixMul1
	z = (z ^ z>>27) * splitmixMul2
	return z ^ z>>31
}

// New returns a Source for one worker of a run. The sequence depends only on
// seed and stream, so the same pair always yields the same numbers, and
// different streams of one seed yield unrelated sequences. Use the worker
// number (0, 1, 2, ...) as stream: [Unique] relies on small stream numbers
// to keep workers' unique values apart.
func New(seed, stream uint64) *Source {
	s := new(Source)
	s.Seed(seed, stream)
	return s
}

// Seed resets s to the state New(seed, stream) would return.
func (s *Source) Seed(seed, stream uint64) {
	// mix64 is a bijection, so for a fixed seed distinct streams get
	// distinct splitmix64 starting points.
	sm := mix64(seed) ^ mix64(stream^streamSalt)
	sm += splitmixGamma
	s.s0 = mix64(sm)
	sm += splitmixGamma
	s.s1 = mix64(sm)
	// Two consecutive splitmix64 outputs are never both zero (mix64 is a
	// bijection and the inputs differ), so xoroshiro's forbidden all-zero
	// state cannot occur.

	// The unique sequence's offset depends on the seed only, so all
	// workers of a run walk the same permutation; each starts at its own
	// point on it (see uniqueStart).
	u := mix64(seed ^ uniqueSalt)
	s.uniqueOffset = uint32(u)
	s.uniqueIndex = uniqueStart(uint32(u>>32), stream)
}

// Uint64 returns 64 uniformly distributed random bits
// (sysbench.rand.uniform_uint64).
func (s *Source) Uint64() uint64 {
	s0, s1 := s.s0, s.s1
	r := s0 + s1
	s1 ^= s0
	s.s0 = bits.RotateLeft64(s0, 55) ^ s1 ^ s1<<14
	s.s1 = bits.RotateLeft64(s1, 36)
	return r
}

// Float64 returns a uniformly distributed number in [0, 1)
// (sysbench.rand.uniform_double). It uses the top 53 bits because the lowest
// bits of xoroshiro128+ are its weakest.
func (s *Source) Float64() float64 {
	return float64(s.Uint64()>>11) * 0x1p-53
}

// Uniform returns a uniformly distributed integer in [lo, hi], inclusive
// (sysbench.rand.uniform). It panics if lo > hi.
//
// sysbench computes lo + floor(u*(hi-lo+1)) with a 52-bit double u; this
// does the same scaling in 64-bit fixed point (the high word of x*(hi-lo+1)),
// which uses the strong high bits rather than the weak low ones a modulo
// would, takes exactly one draw, and is biased by at most (hi-lo+1)/2^64.
func (s *Source) Uniform(lo, hi int64) int64 {
	if lo > hi {
		panic("randgen: Uniform called with lo > hi")
	}
	return lo + int64(s.below(uint64(hi-lo)))
}

// below returns a uniform offset in [0, maxOff].
func (s *Source) below(maxOff uint64) uint64 {
	x := s.Uint64()
	if maxOff == ^uint64(0) {
		return x // full 64-bit range: every value is valid
	}
	hi, _ := bits.Mul64(x, maxOff+1)
	return hi
}

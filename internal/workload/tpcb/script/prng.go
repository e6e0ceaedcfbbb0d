package script

import (
	"math"
	"math/bits"
)

// Rand is PostgreSQL's pg_prng generator (xoroshiro128**), so that a
// --random-seed gives the same sequences as pgbench. The zero value is not
// usable; seed it with Seed.
type Rand struct{ s0, s1 uint64 }

// splitMix64 advances *x and returns the next SplitMix64 output; it expands
// one 64-bit seed into the generator's two words.
func splitMix64(x *uint64) uint64 {
	*x += 0x9E3779B97F4A7C15
	z := *x
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// NewRand returns a generator seeded with seed.
func NewRand(seed uint64) Rand {
	var r Rand
	r.Seed(seed)
	return r
}

// Seed resets the state from seed as pg_prng_seed does.
func (r *Rand) Seed(seed uint64) {
	r.s0 = splitMix64(&seed)
	r.s1 = splitMix64(&seed)
	if r.s0 == 0 && r.s1 == 0 { // the all-zero state is a fixed point
		r.s0 = 0x5851F42D4C957F2D
		r.s1 = 0x14057B7EF767814F
	}
}

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 {
	s0 := r.s0
	sx := r.s1 ^ s0
	v := bits.RotateLeft64(s0*5, 7) * 9
	r.s0 = bits.RotateLeft64(s0, 24) ^ sx ^ (sx << 16)
	r.s1 = bits.RotateLeft64(sx, 37)
	return v
}

// Uint64Range returns a uniform value in [lo, hi], by rejection on the
// smallest covering power of two.
func (r *Rand) Uint64Range(lo, hi uint64) uint64 {
	if hi <= lo {
		return lo
	}
	span := hi - lo
	shift := uint(bits.LeadingZeros64(span))
	for {
		v := r.Uint64() >> shift
		if v <= span {
			return lo + v
		}
	}
}

// Int64Range returns a uniform value in [lo, hi] (pgbench's getrand); hi-lo
// must not overflow.
func (r *Rand) Int64Range(lo, hi int64) int64 {
	return lo + int64(r.Uint64Range(0, uint64(hi-lo)))
}

// Float64 returns a uniform value in [0, 1) with 52 random bits.
func (r *Rand) Float64() float64 {
	return math.Ldexp(float64(r.Uint64()>>12), -52)
}

// exponential draws from [lo, hi] with density falling to exp(-param) at hi.
func (r *Rand) exponential(lo, hi int64, param float64) int64 {
	cut := math.Exp(-param)
	u := 1.0 - r.Float64() // (0, 1]
	x := -math.Log(cut+(1.0-cut)*u) / param
	return lo + int64(float64(hi-lo+1)*x)
}

// gaussian draws from [lo, hi] with a normal distribution truncated at
// +/- param standard deviations (Box-Muller).
func (r *Rand) gaussian(lo, hi int64, param float64) int64 {
	var z float64
	for {
		u1 := 1.0 - r.Float64()
		u2 := 1.0 - r.Float64()
		z = math.Sqrt(-2.0*math.Log(u1)) * math.Sin(2.0*math.Pi*u2)
		if z >= -param && z < param {
			break
		}
	}
	x := (z + param) / (param * 2.0)
	return lo + int64(float64(hi-lo+1)*x)
}

// zipfian draws from [lo, hi] with exponent s by rejection (Devroye).
func (r *Rand) zipfian(lo, hi int64, s float64) int64 {
	n := hi - lo + 1
	if n <= 1 {
		return lo
	}
	b := math.Pow(2.0, s-1.0)
	var x float64
	for {
		u := r.Float64()
		v := r.Float64()
		x = math.Floor(math.Pow(u, -1.0/(s-1.0)))
		t := math.Pow(1.0+1.0/x, s-1.0)
		if v*x*(t-1.0)/(b-1.0) <= t/b && x <= float64(n) {
			break
		}
	}
	return lo - 1 + int64(x)
}

// FNV-1a and MurmurHash2 (64-bit) constants.
const (
	fnvPrime       = 0x100000001b3
	fnvOffsetBasis = 0xcbf29ce484222325
	mm2Mul         = 0xc6a4a7935bd1e995
	mm2MulTimes8   = 0x35253c9ade8f4ca8
	mm2Rot         = 47
)

// hashFNV1a hashes the 8 bytes of v, low byte first, from a seeded basis.
func hashFNV1a(v int64, seed uint64) int64 {
	h := uint64(fnvOffsetBasis) ^ seed
	u := uint64(v)
	for range 8 {
		h ^= u & 0xff
		h *= fnvPrime
		u >>= 8
	}
	return int64(h)
}

// hashMurmur2 is MurmurHash64A on the single 8-byte block v.
func hashMurmur2(v int64, seed uint64) int64 {
	h := seed ^ mm2MulTimes8
	k := uint64(v)
	k *= mm2Mul
	k ^= k >> mm2Rot
	k *= mm2Mul
	h ^= k
	h *= mm2Mul
	h ^= h >> mm2Rot
	h *= mm2Mul
	h ^= h >> mm2Rot
	return int64(h)
}

// permute maps v into [0, size) by a seeded bijection: six rounds of an odd
// multiply, xor and rotate on the lower and the upper power-of-two window,
// each followed by a random offset modulo size.
func permute(v, size, seed int64) int64 {
	if size < 2 {
		return 0
	}
	r := NewRand(uint64(seed))
	n := uint64(size)
	x := uint64(v) % n
	width := uint(63 - bits.LeadingZeros64(n))
	mask := uint64(1)<<width - 1
	for range 6 {
		m := (r.Uint64() & mask) | 1
		k := r.Uint64() & mask
		if x <= mask {
			x = ((x * m) ^ k) & mask
			x = ((x << 1) & mask) | (x >> (width - 1))
		}
		m = (r.Uint64() & mask) | 1
		k = r.Uint64() & mask
		t := n - 1 - x
		if t <= mask {
			t = ((t * m) ^ k) & mask
			t = ((t << 1) & mask) | (t >> (width - 1))
			x = n - 1 - t
		}
		x = (x + r.Uint64Range(0, n-1)) % n
	}
	return int64(x)
}

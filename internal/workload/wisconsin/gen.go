package wisconsin

import (
	"context"

	"github.com/dbmark/dbmark/internal/randgen"
	"github.com/dbmark/dbmark/internal/target"
)

// columns are the attributes of every relation, in the paper's order.
var columns = []string{
	"unique1", "unique2", "two", "four", "ten", "twenty", "onePercent", "tenPercent", "twentyPercent",
	"fiftyPercent", "unique3", "evenOnePercent", "oddOnePercent", "stringu1", "stringu2", "string4",
}

// The string attributes are 52 characters: stringu1 and stringu2 carry
// their number in 7 significant letters, string4 one of four 4-letter
// values; 'x' fills the rest.
const (
	strLen     = 52
	uniqueSig  = 7
	string4Sig = 4
)

// string4Values are string4's four values, which it takes in turn.
var string4Values = func() [4][]byte {
	var out [4][]byte
	for i, c := range []byte("AHOV") {
		b := make([]byte, strLen)
		for j := range b {
			b[j] = 'x'
			if j < string4Sig {
				b[j] = c
			}
		}
		out[i] = b
	}
	return out
}()

// appendStringU appends the 52-character string of a unique value: v in
// base 26 as 7 letters, the most significant first ('A' is 0, so 0 is
// AAAAAAA), then 45 'x'. 26^7 is over 8 billion: every scale's values
// are distinct.
func appendStringU(dst []byte, v int64) []byte {
	var sig [uniqueSig]byte
	for i := uniqueSig - 1; i >= 0; i-- {
		sig[i] = byte('A' + v%26)
		v /= 26
	}
	dst = append(dst, sig[:]...)
	for range strLen - uniqueSig {
		dst = append(dst, 'x')
	}
	return dst
}

// string4 is string4's value in the tuple at position unique2: the four
// values cycle in the order the tuples are generated.
func string4(unique2 int64) []byte { return string4Values[unique2%4] }

// tuple is one generated tuple's numbers; the rest derive from unique1
// and unique2 (attrs).
type tuple struct{ unique1, unique2 int64 }

// attrs are a tuple's integer attributes after unique1 and unique2, in
// the paper's order: each derives from unique1.
func attrs(unique1 int64) [11]int64 {
	onePercent := unique1 % 100
	return [11]int64{
		unique1 % 2, unique1 % 4, unique1 % 10, unique1 % 20, onePercent, unique1 % 10, unique1 % 5,
		unique1 % 2, unique1, onePercent * 2, onePercent*2 + 1,
	}
}

// perm walks a permutation of 0..n-1 in constant memory, as Gray et al.
// generate the Wisconsin benchmark's unique1 ("Quickly generating
// billion-record synthetic databases", SIGMOD 1994): the powers of a
// primitive root g modulo the smallest prime p above n visit every value
// of 1..p-1 once, and those above n are skipped. The seed picks the root
// and the first power.
type perm struct{ n, p, g, x uint64 }

// newPerm returns relation stream's permutation of 0..n-1 under seed.
func newPerm(n int64, seed, stream uint64) *perm {
	p := nextPrime(uint64(n) + 1)
	src := randgen.New(seed, stream)
	g := primitiveRoot(p, 2+src.Uint64()%(p-2))
	return &perm{n: uint64(n), p: p, g: g, x: 1 + src.Uint64()%(p-1)}
}

// next is the permutation's next value. p < 2^32, so x*g does not overflow.
func (q *perm) next() int64 {
	for {
		q.x = q.x * q.g % q.p
		if q.x <= q.n {
			return int64(q.x - 1)
		}
	}
}

// nextPrime is the smallest prime at or above k (k >= 3).
func nextPrime(k uint64) uint64 {
	for ; ; k++ {
		if isPrime(k) {
			return k
		}
	}
}

func isPrime(k uint64) bool {
	if k < 2 {
		return false
	}
	for d := uint64(2); d*d <= k; d++ {
		if k%d == 0 {
			return false
		}
	}
	return true
}

// primitiveRoot is the first primitive root of the prime p at or after
// start, in 2..p-1 taken round: g is one when g^((p-1)/q) is not 1 for
// any prime factor q of p-1.
func primitiveRoot(p, start uint64) uint64 {
	var factors []uint64
	m := p - 1
	for d := uint64(2); d*d <= m; d++ {
		if m%d == 0 {
			factors = append(factors, d)
			for m%d == 0 {
				m /= d
			}
		}
	}
	if m > 1 {
		factors = append(factors, m)
	}
	span := p - 2 // the candidates 2..p-1
	for i := uint64(0); i < span; i++ {
		g := 2 + (start-2+i)%span
		root := true
		for _, q := range factors {
			if powMod(g, (p-1)/q, p) == 1 {
				root = false
				break
			}
		}
		if root {
			return g
		}
	}
	return 2 // unreachable: every prime has a primitive root
}

func powMod(b, e, m uint64) uint64 {
	r := uint64(1)
	b %= m
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = r * b % m
		}
		b = b * b % m
	}
	return r
}

// relation is one generated relation: its name in the paper, its size
// and the stream of its permutation.
type relation struct {
	name   string
	rows   int64
	stream uint64
}

// each calls f with every tuple of r under seed, in unique2 order.
func (r relation) each(seed uint64, f func(t tuple)) {
	q := newPerm(r.rows, seed, r.stream)
	for u2 := range r.rows {
		f(tuple{unique1: q.next(), unique2: u2})
	}
}

// rowSource generates a relation's rows for BulkInsert.
type rowSource struct {
	// ctx ends the rows early when it is done: not every engine's bulk
	// path stops on its own when the prepare is interrupted.
	ctx        context.Context
	q          *perm
	n, u2      int64
	su1, su2   []byte
	pending    int64
	progressed func(int64)
}

func newRowSource(ctx context.Context, r relation, seed uint64, progressed func(int64)) *rowSource {
	return &rowSource{ctx: ctx, q: newPerm(r.rows, seed, r.stream), n: r.rows, progressed: progressed}
}

func (s *rowSource) Next(dst []target.Value) bool {
	if s.u2 >= s.n || s.u2%1024 == 0 && s.ctx.Err() != nil {
		return false
	}
	u1, u2 := s.q.next(), s.u2
	s.u2++
	if s.pending++; s.pending == 10_000 {
		s.progressed(s.pending)
		s.pending = 0
	}
	dst[0].SetInt(u1)
	dst[1].SetInt(u2)
	for i, v := range attrs(u1) {
		dst[2+i].SetInt(v)
	}
	s.su1 = appendStringU(s.su1[:0], u1)
	s.su2 = appendStringU(s.su2[:0], u2)
	dst[13].SetStr(s.su1)
	dst[14].SetStr(s.su2)
	dst[15].SetStr(string4(u2))
	return true
}

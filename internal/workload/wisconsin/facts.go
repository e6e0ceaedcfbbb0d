package wisconsin

import (
	"strconv"
	"strings"
)

// facts are what the generator's rules imply for the queries at one scale
// and seed: the bounds of the selections and every answer that depends on
// the seed's permutations, computed by walking the relations as the
// prepare generated them (three passes, a bit per tuple of memory).
type facts struct {
	// n is the scale, m a tenth of it (ONEKTUP, BPRIME, the joins'
	// selections), p1 a hundredth (the 1% selections); lo is where the
	// 10% selections begin and k7 the tuple query 7 selects, both where
	// the paper's are at 10,000 (792 and 2001), scaled.
	n, m, p1, lo, k7 int64

	selU2P1, selU2Ten int64 // sum of unique1 over TENKTUP1's 1% and 10% by unique2
	selU1P1, selU1Ten int64 // sum of unique2 over the same by unique1
	u1AtK7            int64 // unique1 of the tuple at unique2 = k7
	joinA             int64 // sum of unique1 over TENKTUP1's tuples with unique2 < m
	joinU1B           int64 // sum of TENKTUP2's unique2 over those tuples, joined on unique1
	joinU1BPrime      int64 // sum of TENKTUP1's unique2 over its tuples joining BPRIME on unique1
	joinU1C           int64 // sum of unique2 over TENKTUP1's tuples with unique1 < m
	proj1Rows         int64 // distinct (onePercent, string4) pairs of TENKTUP1
	proj1Sum          int64 // sum of onePercent over those pairs

	// r0 is TENKTUP1's tuple with unique1 = 0, which an inserted tuple
	// copies; keyTuple and attrTuple are tuples no query reads, whose
	// unique2 and unique1 the update queries move.
	r0, keyTuple, attrTuple tuple
}

func computeFacts(data Data) facts {
	n, seed := data.Scale, data.Seed
	f := facts{n: n, m: n / 10, p1: n / 100, lo: 792 * n / 10_000, k7: 2001 * n / 10_000}
	rels := generated(n)
	a, b := rels[1], rels[2]
	selected := newBits(n) // unique1 of TENKTUP1's tuples with unique2 < m
	var pairs [100 * 4]bool
	a.each(seed, func(t tuple) {
		u1, u2 := t.unique1, t.unique2
		if u2 < f.p1 {
			f.selU2P1 += u1
		}
		if f.inTen(u2) {
			f.selU2Ten += u1
		}
		if u1 < f.p1 {
			f.selU1P1 += u2
		}
		if f.inTen(u1) {
			f.selU1Ten += u2
		}
		if u2 == f.k7 {
			f.u1AtK7 = u1
		}
		if u2 < f.m {
			f.joinA += u1
			selected.set(u1)
		}
		if u1 < f.m {
			f.joinU1C += u2
		}
		if u1 == 0 {
			f.r0 = t
		}
		if p := u1%100*4 + u2%4; !pairs[p] {
			pairs[p] = true
			f.proj1Rows++
			f.proj1Sum += u1 % 100
		}
	})
	bprime := newBits(n) // unique1 of BPRIME's tuples
	b.each(seed, func(t tuple) {
		if selected.has(t.unique1) {
			f.joinU1B += t.unique2
		}
		if t.unique2 < f.m {
			bprime.set(t.unique1)
		}
	})
	a.each(seed, func(t tuple) {
		if bprime.has(t.unique1) {
			f.joinU1BPrime += t.unique2
		}
		if f.unread(t, bprime) {
			f.attrTuple, f.keyTuple = f.keyTuple, t
		}
	})
	return f
}

// inTen says whether v is in the 10% selections' range.
func (f *facts) inTen(v int64) bool { return v >= f.lo && v < f.lo+f.m }

// unread says whether no query's answer depends on TENKTUP1's tuple t's
// unique1 or unique2: neither is in a range a selection or a join's
// selection reads, nor query 7's tuple, nor a unique1 BPRIME joins on.
// The projections and aggregates read neither.
func (f *facts) unread(t tuple, bprime bits) bool {
	return t.unique2 >= f.m && !f.inTen(t.unique2) && t.unique2 != f.k7 &&
		t.unique1 >= f.m && !f.inTen(t.unique1) && !bprime.has(t.unique1)
}

// copyValues are the values, after its keys, of a tuple equal to r0 in
// every attribute but unique1 and unique2, as SQL literals.
func (f *facts) copyValues() string {
	var parts []string
	for _, v := range attrs(f.r0.unique1) {
		parts = append(parts, strconv.FormatInt(v, 10))
	}
	for _, s := range [][]byte{appendStringU(nil, f.r0.unique1), appendStringU(nil, f.r0.unique2), string4(f.r0.unique2)} {
		parts = append(parts, "'"+string(s)+"'")
	}
	return strings.Join(parts, ", ")
}

// bits is a set of values 0..n-1.
type bits []uint64

func newBits(n int64) bits      { return make(bits, n/64+1) }
func (b bits) set(v int64)      { b[v/64] |= 1 << (v % 64) }
func (b bits) has(v int64) bool { return b[v/64]&(1<<(v%64)) != 0 }

package series

import "testing"

// span is a stretch of raw points first..last, with a flag a merge must
// not mix.
type span struct {
	first, last, sum int
	warm             bool
}

func mergeSpans(a, b span) (span, bool) {
	if a.warm != b.warm {
		return a, false
	}
	return span{first: a.first, last: b.last, sum: a.sum + b.sum, warm: a.warm}, true
}

func TestStaysWithinItsLimitAndLosesNothing(t *testing.T) {
	b := New(8, mergeSpans)
	for i := 1; i <= 1000; i++ {
		b.Add(span{first: i, last: i, sum: i})
		if n := len(b.Points()); n > 9 {
			t.Fatalf("after %d points the series holds %d, limit 8 (+1 being filled)", i, n)
		}
	}
	pts := b.Points()
	sum, next := 0, 1
	for _, p := range pts {
		if p.first != next {
			t.Fatalf("point %+v: expected it to start at %d (points must stay in order, none lost): %+v", p, next, pts)
		}
		next = p.last + 1
		sum += p.sum
	}
	if next != 1001 || sum != 500500 {
		t.Errorf("points cover 1..%d with sum %d, want 1..1000 and 500500", next-1, sum)
	}
	// The series halves at 8 stored points, at 8, 16, 32 ... 512 raw
	// points: after 1000, each stored point covers 128 (or 64, before the
	// last halving's pairs).
	if s := b.Stride(); s != 128 {
		t.Errorf("stride %d, want 128", s)
	}
	for _, p := range pts[:len(pts)-1] {
		if n := p.last - p.first + 1; n != b.Stride() && n != b.Stride()/2 {
			t.Errorf("point %+v covers %d raw points; stride %d", p, n, b.Stride())
		}
	}
}

func TestShortSeriesIsKeptAsIs(t *testing.T) {
	b := New(100, mergeSpans)
	for i := 1; i <= 99; i++ {
		b.Add(span{first: i, last: i, sum: i})
	}
	if pts := b.Points(); len(pts) != 99 || pts[98].first != 99 || b.Stride() != 1 {
		t.Errorf("99 points under a limit of 100 must stay as they are: %d points, stride %d", len(pts), b.Stride())
	}
}

func TestRefusedMergesStayApart(t *testing.T) {
	b := New(4, mergeSpans)
	for i := 1; i <= 3; i++ {
		b.Add(span{first: i, last: i, sum: i, warm: true})
	}
	for i := 4; i <= 100; i++ {
		b.Add(span{first: i, last: i, sum: i})
	}
	pts := b.Points()
	if len(pts) > 6 {
		t.Errorf("%d points: the limit of 4 was not kept", len(pts))
	}
	for _, p := range pts {
		if p.warm != (p.last <= 3) || p.warm != (p.first <= 3) {
			t.Errorf("point %+v mixes warm-up and measured points", p)
		}
	}
	if last := pts[len(pts)-1]; last.last != 100 {
		t.Errorf("last point %+v, want it to end at 100", last)
	}
}

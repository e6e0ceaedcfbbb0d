// Package series keeps a run's time series within a fixed number of points
// however long the run lasts: when the series is full, neighbouring points
// are merged in pairs and from then on each new point covers twice the
// time. A run of a week then holds as many points as a run of an hour, at a
// coarser step, and its memory stays flat.
package series

// Merge combines two neighbouring points, a before b, into one covering
// both. It returns false when they must stay apart (a warm-up interval
// beside a measured one).
type Merge[P any] func(a, b P) (P, bool)

// Bounded is a series of at most its limit of points (plus one being filled). It is
// used by one goroutine.
type Bounded[P any] struct {
	max    int
	merge  Merge[P]
	points []P
	stride int // raw points per stored point
	pend   P   // the point being filled
	npend  int // raw points in pend
}

// DefaultLimit keeps two hours of one-second points; a longer run's series
// has a coarser step.
const DefaultLimit = 7200

// New returns an empty series that keeps at most limit points: 0 or less
// means DefaultLimit, and fewer than 2 means 2.
func New[P any](limit int, merge Merge[P]) *Bounded[P] {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return &Bounded[P]{max: max(limit, 2), merge: merge, stride: 1}
}

// Add appends one raw point.
func (b *Bounded[P]) Add(p P) {
	if b.npend > 0 {
		if m, ok := b.merge(b.pend, p); ok {
			b.pend, b.npend = m, b.npend+1
			if b.npend >= b.stride {
				b.flush()
			}
			return
		}
		b.flush()
	}
	b.pend, b.npend = p, 1
	if b.stride == 1 {
		b.flush()
	}
}

func (b *Bounded[P]) flush() {
	b.points = append(b.points, b.pend)
	var zero P
	b.pend, b.npend = zero, 0
	if len(b.points) >= b.max {
		b.halve()
	}
}

// halve merges the stored points in pairs and doubles the stride.
func (b *Bounded[P]) halve() {
	out := b.points[:0]
	for i := 0; i < len(b.points); {
		if i+1 < len(b.points) {
			if m, ok := b.merge(b.points[i], b.points[i+1]); ok {
				out = append(out, m)
				i += 2
				continue
			}
		}
		out = append(out, b.points[i])
		i++
	}
	var zero P
	for i := len(out); i < len(b.points); i++ {
		b.points[i] = zero // let go of what merged points referred to
	}
	b.points = out
	b.stride *= 2
}

// Points returns the series: the stored points and the one being filled.
// The slice is the series' own until the next Add.
func (b *Bounded[P]) Points() []P {
	if b.npend == 0 {
		return b.points
	}
	return append(b.points[:len(b.points):len(b.points)], b.pend)
}

// Stride is how many raw points each stored point now covers.
func (b *Bounded[P]) Stride() int { return b.stride }

// MergeLast merges p into the last point when the merge allows it, and
// appends it otherwise.
func (b *Bounded[P]) MergeLast(p P) {
	if b.npend > 0 {
		if m, ok := b.merge(b.pend, p); ok {
			b.pend = m
			return
		}
	} else if n := len(b.points); n > 0 {
		if m, ok := b.merge(b.points[n-1], p); ok {
			b.points[n-1] = m
			return
		}
	}
	b.Add(p)
}

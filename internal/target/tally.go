package target

import "time"

// QueryOptions are what Conn.Query is asked beyond counting.
type QueryOptions struct {
	// Each, when set, is given every returned row's values as text (nil
	// for NULL), valid only during the call; an error from it ends the
	// query with that error. The rows are still not kept.
	Each func(vals [][]byte) error
}

// Tally is what one statement returned, counted as its rows streamed by.
type Tally struct {
	// Rows is the rows returned or, when Returned is false, the rows the
	// statement affected.
	Rows     int64
	Returned bool
	// Columns names the returned columns (nil when none were returned).
	Columns []string
	// Bytes is the size of the returned values as text, as the engine's
	// text protocol sends them (NULL counts nothing).
	Bytes int64
	// Sum is the sum, wrapping in 64 bits, of the first column's non-NULL
	// values over the rows returned, and SumValid says it was taken: the
	// first column is of an integer type (or an exact numeric one whose
	// every value was whole). It lets a caller check an answer's content
	// without the rows being kept.
	Sum      int64
	SumValid bool
}

// AddInt adds v, a value of the first column, to the sum.
func (t *Tally) AddInt(v int64) { t.Sum += v }

// AddText adds the first column's value written as text to the sum; a
// value that is not a whole number in 64 bits makes the sum invalid.
// NULL (nil) adds nothing.
func (t *Tally) AddText(b []byte) {
	if b == nil || !t.SumValid {
		return
	}
	v, ok := ParseInt(b)
	if !ok {
		t.SumValid = false
		return
	}
	t.Sum += v
}

// ParseInt reads a base-10 integer in 64 bits from b, without allocating;
// an exact numeric's whole value written with a zero fraction ("12.00")
// counts.
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := false
	switch b[0] {
	case '-':
		neg, b = true, b[1:]
	case '+':
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var u uint64
	i := 0
	for ; i < len(b) && b[i] != '.'; i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > 1<<63 {
			return 0, false
		}
	}
	if i == 0 {
		return 0, false
	}
	if i < len(b) { // a fraction: only zeros keep it whole
		for _, c := range b[i+1:] {
			if c != '0' {
				return 0, false
			}
		}
	}
	if neg {
		return -int64(u), true // -(1<<63) wraps to itself, as it should
	}
	if u == 1<<63 {
		return 0, false
	}
	return int64(u), true
}

// TimeoutMillis is d in whole milliseconds for an engine's timeout
// setting, rounded up so that a limit under a millisecond does not
// become 0, which the engines read as no limit.
func TimeoutMillis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

package mysql

import (
	"database/sql/driver"
	"fmt"
	"strconv"
	"time"
)

// textReader reads rows from the driver and renders their values as the
// server's text protocol prints them, whichever protocol carried them.
type textReader struct {
	dest []driver.Value
	form []int // per column: a FLOAT's or DOUBLE's declared decimals, asYear or free
}

const (
	free   = -1 // as appendText writes it
	asYear = -2 // four digits, 0 as 0000
)

// start readies r for rows' current result set and returns the reused
// destination for its rows.
func (r *textReader) start(rows driver.Rows) []driver.Value {
	n := len(rows.Columns())
	if cap(r.form) < n {
		r.form = make([]int, n)
	}
	r.dest, r.form = sized(&r.dest, n), r.form[:n]
	ps, _ := rows.(driver.RowsColumnTypePrecisionScale)
	tn, _ := rows.(driver.RowsColumnTypeDatabaseTypeName)
	for i := range r.form {
		r.form[i] = free
		if tn != nil && tn.ColumnTypeDatabaseTypeName(i) == "YEAR" {
			r.form[i] = asYear
			continue
		}
		// Of the types the driver hands as numbers, it states decimals
		// for FLOAT and DOUBLE alone; an unfixed count is huge.
		if ps != nil {
			if _, d, ok := ps.ColumnTypePrecisionScale(i); ok && d >= 0 && d <= 30 {
				r.form[i] = int(d)
			}
		}
	}
	return r.dest
}

// appendValue appends the text of v, a value of column i.
func (r *textReader) appendValue(b []byte, i int, v driver.Value) []byte {
	switch f := r.form[i]; {
	case f == asYear:
		if y, ok := v.(int64); ok {
			return fmt.Appendf(b, "%04d", y)
		}
	case f >= 0:
		switch x := v.(type) {
		case float32:
			return strconv.AppendFloat(b, float64(x), 'f', f, 32)
		case float64:
			return strconv.AppendFloat(b, x, 'f', f, 64)
		}
	}
	return appendText(b, v)
}

// appendText appends the text the server's text protocol sends for the
// driver value v, whichever protocol carried it: the driver hands integers
// and floating-point numbers as Go numbers, dates, times and decimals as
// the server's own text (the targets never ask it to parse times). NULL
// (nil) appends nothing.
func appendText(b []byte, v driver.Value) []byte {
	switch x := v.(type) {
	case nil:
		return b
	case []byte:
		return append(b, x...)
	case string:
		return append(b, x...)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case float32:
		return appendFloat(b, float64(x), 6)
	case float64:
		return appendFloat(b, x, -1)
	case bool:
		if x {
			return append(b, '1')
		}
		return append(b, '0')
	case time.Time:
		return x.AppendFormat(b, "2006-01-02 15:04:05.999999")
	}
	return fmt.Append(b, v)
}

// decimalLen is the length of strconv.AppendInt(nil, x, 10): x's digits
// and its sign.
func decimalLen(x int64) int {
	n, u := 1, uint64(x)
	if x < 0 {
		n, u = 2, -u
	}
	for ; u >= 10; u /= 10 {
		n++
	}
	return n
}

// appendFloat writes v as the server does in a text result: FLOAT with 6
// significant digits, DOUBLE (digits < 0) with as many as it takes to
// read back the same value, in plain notation from 1e-15 to below 1e15
// and as 1.5e15 or 1.5e-16 outside (measured on MariaDB 10.11 for every
// power of ten a FLOAT holds).
func appendFloat(b []byte, v float64, digits int) []byte {
	if v == 0 {
		return append(b, '0')
	}
	var buf [32]byte
	prec := -1
	if digits > 0 {
		prec = digits - 1
	}
	e := strconv.AppendFloat(buf[:0], v, 'e', prec, 64) // -d.ddde-XX
	if e[0] == '-' {
		b = append(b, '-')
		e = e[1:]
	}
	at := 0
	for e[at] != 'e' {
		at++
	}
	exp, _ := strconv.Atoi(string(e[at+1:]))
	var mant [24]byte
	m := append(mant[:0], e[0])
	if at > 1 {
		m = append(m, e[2:at]...)
	}
	for len(m) > 1 && m[len(m)-1] == '0' {
		m = m[:len(m)-1]
	}
	switch {
	case exp < -15 || exp >= 15:
		b = append(b, m[0])
		if len(m) > 1 {
			b = append(append(b, '.'), m[1:]...)
		}
		return strconv.AppendInt(append(b, 'e'), int64(exp), 10)
	case exp < 0:
		b = append(b, '0', '.')
		for range -exp - 1 {
			b = append(b, '0')
		}
		return append(b, m...)
	case len(m) <= exp+1:
		b = append(b, m...)
		for range exp + 1 - len(m) {
			b = append(b, '0')
		}
		return b
	}
	return append(append(append(b, m[:exp+1]...), '.'), m[exp+1:]...)
}

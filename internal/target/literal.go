package target

import (
	"fmt"
	"strconv"
)

// Template is SQL text split at its placeholders, for engines and modes
// that send arguments inline as literals (pgbench -M simple, sysbench
// --db-ps-mode=disable).
type Template struct {
	SQL   string
	parts []string // the text between placeholders
	args  []int    // the argument index of each placeholder
}

// ParseTemplate splits sql at "$n" or "?" placeholders, skipping quoted
// strings and identifiers. A "?" takes the next argument in order.
func ParseTemplate(sql string) (*Template, error) {
	t := &Template{SQL: sql}
	start, next := 0, 0
	var quote byte
	for i := 0; i < len(sql); i++ {
		ch := sql[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"' || ch == '`':
			quote = ch
		case ch == '?':
			t.parts = append(t.parts, sql[start:i])
			t.args = append(t.args, next)
			next++
			start = i + 1
		case ch == '$' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9':
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(sql[i+1 : j])
			if err != nil || n < 1 {
				return nil, fmt.Errorf("statement %q: bad placeholder %q", sql, sql[i:j])
			}
			t.parts = append(t.parts, sql[start:i])
			t.args = append(t.args, n-1)
			start = j
			i = j - 1
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("statement %q: unterminated quote", sql)
	}
	t.parts = append(t.parts, sql[start:])
	return t, nil
}

// NumArgs is the number of arguments the template needs.
func (t *Template) NumArgs() int {
	n := 0
	for _, a := range t.args {
		if a+1 > n {
			n = a + 1
		}
	}
	return n
}

// Render appends the statement with args inlined to b. backslash says
// whether backslashes must be escaped (MySQL without NO_BACKSLASH_ESCAPES).
func (t *Template) Render(b []byte, args []Value, backslash bool) ([]byte, error) {
	for i, p := range t.parts {
		b = append(b, p...)
		if i == len(t.args) {
			break
		}
		n := t.args[i]
		if n >= len(args) {
			return b, fmt.Errorf("statement %q: placeholder %d has no argument", t.SQL, n+1)
		}
		b = AppendLiteral(b, args[n], backslash)
	}
	return b, nil
}

// AppendLiteral appends v as an SQL literal.
func AppendLiteral(b []byte, v Value, backslash bool) []byte {
	if v.IsNull {
		return append(b, "NULL"...)
	}
	if !v.IsStr {
		return strconv.AppendInt(b, v.Int, 10)
	}
	b = append(b, '\'')
	for _, ch := range v.Str {
		switch {
		case ch == '\'':
			b = append(b, '\'', '\'')
		case backslash && ch == '\\':
			b = append(b, '\\', '\\')
		case backslash && ch == 0:
			b = append(b, '\\', '0')
		default:
			b = append(b, ch)
		}
	}
	return append(b, '\'')
}

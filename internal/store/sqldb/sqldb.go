// Package sqldb is what dbmark's own databases share over database/sql:
// the results store (internal/store) and the results site's store
// (internal/site/sitestore), each on SQLite or PostgreSQL. Their queries
// are written once with ? placeholders, and their goose migrations run
// and are logged the same way.
package sqldb

import (
	"strconv"
	"strings"
)

// Rebind turns the ? placeholders of q into PostgreSQL's $1, $2, ... in
// order. Queries given to it hold no literal '?' (in a string or a
// comment), which it would take for a placeholder.
func Rebind(q string) string {
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

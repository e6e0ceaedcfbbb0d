package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestErrorPosition: the LINE and caret lines as psql (libpq) prints them
// for the same statements and positions, cut to about 60 columns.
func TestErrorPosition(t *testing.T) {
	for _, c := range []struct {
		query string
		pos   int
		want  string
	}{
		{"select 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26 +;", 103,
			"LINE 1: ...2, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26 +;\n" +
				"                                                                      ^\n"},
		{"select nosuch, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27;", 8,
			"LINE 1: select nosuch, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14...\n" +
				"               ^\n"},
		{"select 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, nosuch, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32;", 71,
			"LINE 1: ..., 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, nosuch, 19...\n" +
				"                                                             ^\n"},
		{"select 1,\n\tnosuch;", 12, "LINE 2:  nosuch;\n         ^\n"},
	} {
		if got := errorPosition(c.query, c.pos); got != c.want {
			t.Errorf("position %d of %q:\n%s\nwant\n%s", c.pos, c.query, got, c.want)
		}
	}
}

// TestLibpqMessage: a server's error in libpq's form: two spaces after
// the severity, the position, then DETAIL, HINT, QUERY and CONTEXT in
// libpq's order.
func TestLibpqMessage(t *testing.T) {
	err := serverErr(&pgconn.PgError{Severity: "ERROR", SeverityUnlocalized: "ERROR", Message: "boom", Detail: "the detail",
		Hint: "a hint", Where: "PL/pgSQL function f() line 1 at RAISE", Position: 8})
	want := "ERROR:  boom\nLINE 1: select x\n               ^\nDETAIL:  the detail\nHINT:  a hint\nCONTEXT:  PL/pgSQL function f() line 1 at RAISE\n"
	if got := LibpqMessage(err, "select x"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	se, ok := err.(interface{ Detail() string })
	if !ok || se.Detail() != "DETAIL:  the detail\nHINT:  a hint\nCONTEXT:  PL/pgSQL function f() line 1 at RAISE" {
		t.Errorf("Detail of %#v", err)
	}
}

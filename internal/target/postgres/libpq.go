package postgres

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// serverError is an error the server sent, as pgconn reads it, with what
// pgconn's one line leaves out: DETAIL, HINT, the internal QUERY and
// CONTEXT, which Detail gives as libpq prints them, and the whole message
// in libpq's form (Libpq).
type serverError struct{ *pgconn.PgError }

func (e *serverError) Unwrap() error { return e.PgError }

// Detail is the lines after the message, in libpq's words: "DETAIL:  ...",
// "HINT:  ...", "QUERY:  ...", "CONTEXT:  ...". Empty when the server sent
// none.
func (e *serverError) Detail() string {
	var b strings.Builder
	field := func(label, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s:  %s\n", label, v)
		}
	}
	field("DETAIL", e.PgError.Detail)
	field("HINT", e.Hint)
	field("QUERY", e.InternalQuery)
	field("CONTEXT", e.Where)
	return strings.TrimSuffix(b.String(), "\n")
}

// Libpq is the error as libpq's PQerrorMessage prints it at its default
// verbosity: "ERROR:  message", the query's line with a caret under the
// position when query is the statement that failed, then Detail's lines;
// it ends in a newline.
func (e *serverError) Libpq(query string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:  %s\n", e.severity(), e.Message)
	if e.Position > 0 && query != "" {
		b.WriteString(errorPosition(query, int(e.Position)))
	}
	if d := e.Detail(); d != "" {
		b.WriteString(d + "\n")
	}
	return b.String()
}

func (e *serverError) severity() string {
	if e.SeverityUnlocalized != "" {
		return e.SeverityUnlocalized
	}
	return e.Severity
}

// NoticeMessage is a server's notice as libpq's default notice processor
// prints it: "NOTICE:  message" and the DETAIL, HINT and QUERY lines; at
// libpq's default it shows CONTEXT for errors only. It ends in a newline.
func NoticeMessage(n *pgconn.Notice) string {
	pe := pgconn.PgError(*n)
	pe.Where = ""
	e := &serverError{&pe}
	var b strings.Builder
	fmt.Fprintf(&b, "%s:  %s\n", e.severity(), e.Message)
	if d := e.Detail(); d != "" {
		b.WriteString(d + "\n")
	}
	return b.String()
}

// serverErr wraps a server's error in serverError; others pass as they are.
func serverErr(err error) error {
	var pgErr *pgconn.PgError
	var se *serverError
	if err == nil || errors.As(err, &se) || !errors.As(err, &pgErr) {
		return err
	}
	if pgErr == err {
		return &serverError{pgErr}
	}
	return &wrapped{err: err, se: &serverError{pgErr}}
}

// wrapped keeps an error's text while its chain finds the serverError.
type wrapped struct {
	err error
	se  *serverError
}

func (w *wrapped) Error() string   { return w.err.Error() }
func (w *wrapped) Unwrap() []error { return []error{w.se, w.err} }

// Display limits of libpq's reportErrorPosition.
const (
	displaySize = 60
	minRightCut = 10
)

// errorPosition is libpq's reportErrorPosition: "LINE n: " and the line of
// query holding the 1-based character position, cut to about 60 columns
// around it with "...", then a caret under it. Tabs show as spaces; every
// character counts one column.
func errorPosition(query string, pos int) string {
	runes := []rune(strings.ReplaceAll(query, "\t", " "))
	loc := pos - 1
	if loc < 0 || loc > len(runes) {
		return ""
	}
	line, beg := 1, 0
	for i := 0; i < loc && i < len(runes); i++ {
		if runes[i] == '\n' || runes[i] == '\r' && (i+1 >= len(runes) || runes[i+1] != '\n') {
			line++
			beg = i + 1
		}
	}
	end := beg
	for end < len(runes) && runes[end] != '\n' && runes[end] != '\r' {
		end++
	}
	col := loc - beg // the caret's column in the line
	ibeg, iend := 0, end-beg
	begTrunc, endTrunc := false, false
	if iend > displaySize {
		if col+minRightCut < displaySize {
			iend, endTrunc = displaySize, true
		} else {
			for col+minRightCut < iend {
				iend--
				endTrunc = true
			}
			for iend-ibeg > displaySize {
				ibeg++
				begTrunc = true
			}
		}
	}
	prefix := "LINE " + strconv.Itoa(line) + ": "
	if begTrunc {
		prefix += "..."
	}
	text := string(runes[beg+ibeg : beg+iend])
	if endTrunc {
		text += "..."
	}
	return prefix + text + "\n" + strings.Repeat(" ", len(prefix)+col-ibeg) + "^\n"
}

// LibpqMessage is err as libpq and so pgbench print it: a server's error
// with its fields and, given the statement that failed, its position; a
// failed connection as "connection to server at ... failed: ...". It is
// "" for an error of neither kind.
func LibpqMessage(err error, query string) string {
	var ce *connError
	if errors.As(err, &ce) {
		return ce.libpq()
	}
	var se *serverError
	if errors.As(err, &se) {
		return se.Libpq(query)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return (&serverError{pgErr}).Libpq(query)
	}
	return ""
}

// connError is a failed connection: dbmark's line saying what to do, and
// what pgconn said, for libpq's form.
type connError struct {
	msg string
	cfg *pgconn.Config
	err error
}

func (e *connError) Error() string { return e.msg }
func (e *connError) Unwrap() error { return e.err }

// libpq is libpq's message of a failed connection.
func (e *connError) libpq() string {
	var where string
	if strings.HasPrefix(e.cfg.Host, "/") {
		where = fmt.Sprintf("on socket \"%s/.s.PGSQL.%d\"", e.cfg.Host, e.cfg.Port)
	} else {
		where = fmt.Sprintf("at \"%s\", port %d", e.cfg.Host, e.cfg.Port)
	}
	head := "connection to server " + where + " failed: "
	var pgErr *pgconn.PgError
	if errors.As(e.err, &pgErr) {
		return head + (&serverError{pgErr}).Libpq("")
	}
	switch {
	case errors.Is(e.err, syscall.ENOENT):
		return head + "No such file or directory\n\tIs the server running locally and accepting connections on that socket?\n"
	case errors.Is(e.err, syscall.ECONNREFUSED) && strings.HasPrefix(e.cfg.Host, "/"):
		return head + "Connection refused\n\tIs the server running locally and accepting connections on that socket?\n"
	case errors.Is(e.err, syscall.ECONNREFUSED):
		return head + "Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?\n"
	}
	var netErr net.Error
	if errors.As(e.err, &netErr) && netErr.Timeout() {
		return head + "timeout expired\n"
	}
	return head + e.msg + "\n"
}

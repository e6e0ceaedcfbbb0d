package query

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse splits a query file into its statements. A statement ends at a
// semicolon that ends a line (blanks, or a -- comment, may follow it on
// that line) outside strings, quoted names, comments and dollar quotes,
// or at the end of the file. A comment line (-- or #) just above a
// statement, with no blank line between, labels it: the first word of
// the first such line of the comments above it, without a trailing
// colon. Statements without a label are q1, q2, ... by their place in
// the file. The statement's text is kept without its semicolon and
// without the comment lines above it. A file with no statement gives
// none and no error (nor does a statement of comments alone); a string, quoted name, comment or dollar quote left
// open at the end of the file, and a label used twice, are errors of one
// line naming the line.
func Parse(src string) ([]Query, error) {
	p := parser{src: src, line: 1}
	return p.parse()
}

type parser struct {
	src string
	// off and line: a cursor that lineAt moves forward only.
	off, line int
}

// lineAt is the 1-based line of byte offset off, which never decreases
// from one call to the next.
func (p *parser) lineAt(off int) int {
	p.line += strings.Count(p.src[p.off:off], "\n")
	p.off = off
	return p.line
}

func (p *parser) parse() ([]Query, error) {
	var qs []Query
	firstLine := map[string]int{}
	label := ""      // the label of the comment block above, "" for none
	inBlock := false // the lines just above are a comment block
	src := p.src
	for i := 0; i < len(src); {
		end := strings.IndexByte(src[i:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += i
		}
		text := strings.TrimSpace(src[i:end])
		switch {
		case text == "":
			label, inBlock = "", false
			i = end + 1
			continue
		case strings.HasPrefix(text, "--") || strings.HasPrefix(text, "#"):
			if !inBlock || label == "" {
				label = labelOf(text)
			}
			inBlock = true
			i = end + 1
			continue
		}
		// A statement starts at this line's first non-blank character.
		start := i + strings.Index(src[i:end], text[:1])
		stop, next, err := p.statement(start)
		if err != nil {
			return nil, err
		}
		sql := strings.TrimSpace(src[start:stop])
		if onlyComments(sql) {
			label, inBlock = "", false
			i = next
			continue
		}
		line := p.lineAt(start)
		q := Query{Label: label, SQL: sql, Line: line}
		if q.Label == "" {
			q.Label = "q" + strconv.Itoa(len(qs)+1)
		}
		if at, dup := firstLine[q.Label]; dup {
			return nil, fmt.Errorf("line %d: the label %s is already that of the statement at line %d (labels must differ)", line, q.Label, at)
		}
		firstLine[q.Label] = line
		qs = append(qs, q)
		label, inBlock = "", false
		i = next
	}
	return qs, nil
}

// labelOf is the label a comment line gives: its first word, without a
// trailing colon ("" when the comment is empty).
func labelOf(comment string) string {
	c := strings.TrimLeft(comment, "-#")
	f := strings.Fields(c)
	if len(f) == 0 {
		return ""
	}
	return strings.TrimRight(f[0], ":")
}

// statement scans the statement starting at start and returns where its
// text ends (at its semicolon, or the end of the file) and where the
// next line begins.
func (p *parser) statement(start int) (stop, next int, err error) {
	src := p.src
	lineStart := true // only blanks since the last newline
	for i := start; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == ';':
			if after, ok := endsLine(src, i+1); ok {
				return i, after, nil
			}
			i++
		case c == '\'':
			esc := i > start && (src[i-1] == 'E' || src[i-1] == 'e') && (i-1 == start || !identChar(src[i-2]))
			if i, err = p.closeQuote(i, '\'', esc, "string"); err != nil {
				return 0, 0, err
			}
		case c == '"':
			if i, err = p.closeQuote(i, '"', false, "quoted name"); err != nil {
				return 0, 0, err
			}
		case c == '`':
			if i, err = p.closeQuote(i, '`', false, "quoted name"); err != nil {
				return 0, 0, err
			}
		case c == '-' && strings.HasPrefix(src[i:], "--"), c == '#' && lineStart:
			i = lineEnd(src, i)
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			if i, err = p.closeComment(i); err != nil {
				return 0, 0, err
			}
		case c == '$' && (i == start || !identChar(src[i-1])):
			if tag, ok := dollarTag(src[i:]); ok {
				end := strings.Index(src[i+len(tag):], tag)
				if end < 0 {
					return 0, 0, fmt.Errorf("line %d: the dollar quote %s opened here is not closed", p.lineAt(i), tag)
				}
				i += 2*len(tag) + end
			} else {
				i++
			}
		default:
			i++
		}
		lineStart = false
	}
	return len(src), len(src), nil
}

// endsLine says whether only blanks, or blanks and a -- comment, follow
// off up to the end of its line, and where the next line begins.
func endsLine(src string, off int) (int, bool) {
	for i := off; i < len(src); i++ {
		switch src[i] {
		case ' ', '\t', '\r':
		case '\n':
			return i + 1, true
		case '-':
			if strings.HasPrefix(src[i:], "--") {
				return min(lineEnd(src, i)+1, len(src)), true
			}
			return 0, false
		default:
			return 0, false
		}
	}
	return len(src), true
}

// lineEnd is the offset of the newline ending off's line, or the end.
func lineEnd(src string, off int) int {
	if n := strings.IndexByte(src[off:], '\n'); n >= 0 {
		return off + n
	}
	return len(src)
}

// closeQuote returns the offset after the quote q that closes the one
// opened at open: a doubled quote stands for itself, and with esc (a
// PostgreSQL E” string) a backslash escapes the next character.
func (p *parser) closeQuote(open int, q byte, esc bool, what string) (int, error) {
	src := p.src
	for i := open + 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			if esc {
				i++
			}
		case q:
			if i+1 < len(src) && src[i+1] == q {
				i++
				continue
			}
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("line %d: the %s opened here is not closed", p.lineAt(open), what)
}

// closeComment returns the offset after the */ that closes the block
// comment opened at open; block comments nest, as in PostgreSQL.
func (p *parser) closeComment(open int) (int, error) {
	src := p.src
	depth := 0
	for i := open; i+1 < len(src); i++ {
		switch {
		case src[i] == '/' && src[i+1] == '*':
			depth++
			i++
		case src[i] == '*' && src[i+1] == '/':
			depth--
			i++
			if depth == 0 {
				return i + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("line %d: the comment opened here with /* is not closed", p.lineAt(open))
}

// dollarTag returns the tag ($$ or $name$) that s starts with, if any: a
// name starts with a letter or an underscore, so $1 is a parameter.
func dollarTag(s string) (string, bool) {
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$':
			return s[:i+1], true
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
		case c >= '0' && c <= '9' && i > 1:
		default:
			return "", false
		}
	}
	return "", false
}

func identChar(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// onlyComments says whether sql, a statement's whole text, is comments
// and blanks alone: no statement at all.
func onlyComments(sql string) bool {
	p := parser{src: sql, line: 1}
	for i := 0; i < len(sql); {
		switch c := sql[i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case strings.HasPrefix(sql[i:], "--") || c == '#':
			i = lineEnd(sql, i)
		case strings.HasPrefix(sql[i:], "/*"):
			end, err := p.closeComment(i)
			if err != nil {
				return false
			}
			i = end
		default:
			return false
		}
	}
	return true
}

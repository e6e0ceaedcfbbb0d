package script_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/workload/tpcb/script"
)

func singleLine(t *testing.T, what string, err error) {
	t.Helper()
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Fatalf("%s: the error spans lines: %q", what, err)
	}
}

// FuzzParse parses any text as a pgbench script (it is never run): no
// panic, a one-line error, and commands whose lines and labels are sane.
func FuzzParse(f *testing.F) {
	for _, name := range script.BuiltinNames() {
		_, _, text, err := script.BuiltinText(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(text)
	}
	for _, s := range []string{
		"\\set a random(1, 10)\nSELECT :a;\n",
		"\\if :a > 1\nSELECT 1;\n\\elif :a < 0\nSELECT 2;\n\\else\nSELECT 3;\n\\endif\n",
		"SELECT 1 \\; SELECT 2;\n", "SELECT 'a\\:b' :: text;\n", "SELECT 1 \\gset p_\n", "SELECT 1 \\aset\n",
		"\\sleep :ms ms\n", "\\sleep 10 us\n", "\\setshell x echo 1\n", "\\shell true\n", "\\startpipeline\nSELECT 1;\n\\endpipeline\n",
		"\\set x (1 +\n", "\\if 1\n", "\\endif\n", "\\nosuch\n", "-- only a comment\n", "", "\\set\n", "\\set 9x 1\n",
		"\\set a case when true then 1 end\n", "SELECT 1;\n\\gset\n", "\\set a 1 \\\n + 2\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := script.Parse("fuzz.sql", src)
		if err != nil {
			singleLine(t, "Parse", err)
			var se *script.SyntaxError
			if errors.As(err, &se) && (se.Line < 0 || se.Col < 0) {
				t.Fatalf("syntax error at line %d column %d", se.Line, se.Col)
			}
			return
		}
		lines := strings.Count(src, "\n") + 1
		prev := 0
		for i, c := range s.Commands {
			if c.Line < 1 || c.Line > lines || c.Line < prev {
				t.Fatalf("command %d at line %d (the previous at %d, the text has %d lines)", i, c.Line, prev, lines)
			}
			prev = c.Line
			// An SQL command's label is its first line; a meta-command's is
			// its text as pgbench shows it, continuation lines included.
			if c.Kind == script.SQL && (len(c.Label) > 127 || strings.ContainsAny(c.Label, "\n\r")) {
				t.Fatalf("command %d's label %q: want one line of at most 127 bytes", i, c.Label)
			}
			if strings.HasSuffix(c.Label, "\n") {
				t.Fatalf("command %d's label %q ends with a newline", i, c.Label)
			}
			if c.Kind == script.Meta && (len(c.Args) == 0 || c.Args[0] == "") {
				t.Fatalf("meta-command %d has no name: %q", i, c.Args)
			}
		}
	})
}

// evalSet parses "\set v EXPR" and runs it on a fresh client with no
// connection; it returns v, or the error.
func evalSet(t *testing.T, expr string) (string, error, bool) {
	s, err := script.Parse("e.sql", "\\set v "+expr+"\n")
	if err != nil {
		singleLine(t, "Parse", err)
		return "", err, false
	}
	if len(s.Commands) != 1 || s.Commands[0].Meta != script.MetaSet {
		t.Fatalf("\\set v %s parsed as %d commands", expr, len(s.Commands))
	}
	sh := &script.Shared{Scale: 3, RandomSeed: 42, Clients: 1, Debug: io.Discard, Vars: map[string]string{"x": "7", "d": "2.5", "s": "text"}}
	c, err := script.NewClient(sh, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background(), s, nil); err != nil {
		singleLine(t, "Run", err)
		return "", err, true
	}
	v, ok := c.Var("v")
	if !ok {
		t.Fatalf("\\set v %s ran and left no v", expr)
	}
	return v, nil, true
}

// FuzzEval evaluates any expression with \set: no panic, one-line
// errors, the same value from two clients with the same seed, and the
// same value in parentheses.
func FuzzEval(f *testing.F) {
	for _, s := range []string{
		"1 + 2 * 3 - 4 / 3", "-7 % 3", "9223372036854775807 + 1", "-9223372036854775808 / -1", "1 / 0", "1.0 / 0",
		"1 << 63", "-1 >> 70", "~5 # 3", "case when :x > 2 then :d else 0 end", "null is null", "not true or false",
		"abs(-9223372036854775807)", "pow(-8, 1.0/3)", "sqrt(-1)", "ln(0)", "exp(1000)", "int(1e30)", "least(3, 1.5, null)",
		"random(1, :scale * 100000)", "random(-9223372036854775808, 9223372036854775807)", "random_gaussian(1, 10, 2.5)",
		"random_exponential(1, 10, 0)", "random_zipfian(1, 1000, 1.07)", "hash(12345, 987654321)", "hash_fnv1a(:x)",
		"permute(42, 1000000, 12345)", "permute(1, 0)", ":s + 1", ":nosuch", "debug(:d * 2)", "pi() * 2", "1e308 * 10",
		"(((1)))", "1 2", "", "case when true then 1", "greatest(1)", "abs()", "random(1)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if strings.ContainsAny(expr, "\n\r\\") {
			t.Skip() // one \set line, and nothing but it
		}
		v1, err1, parsed := evalSet(t, expr)
		if !parsed {
			return
		}
		v2, err2, _ := evalSet(t, expr)
		if v1 != v2 || (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
			t.Fatalf("%s: %q, %v then %q, %v: want the same from the same seed", expr, v1, err1, v2, err2)
		}
		if strings.Contains(expr, "--") || strings.Contains(expr, "/*") || strings.Contains(expr, "*/") {
			return // a comment would swallow the closing parenthesis
		}
		v3, err3, parsed := evalSet(t, "("+expr+")")
		if !parsed {
			t.Fatalf("%s parses but (%s) does not: %v", expr, expr, err3)
		}
		if v1 != v3 || (err1 == nil) != (err3 == nil) {
			t.Fatalf("%s = %q, %v but (%s) = %q, %v", expr, v1, err1, expr, v3, err3)
		}
	})
}

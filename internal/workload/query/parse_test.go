package query

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	type q struct{ label, sql string }
	for _, c := range []struct {
		name string
		src  string
		want []q
	}{
		{"empty file", "", nil},
		{"blank lines", "\n  \n\t\n", nil},
		{"only comments", "-- one\n# two\n/* not a\nstatement; */\n-- three;\n", nil},
		{"a comment alone is skipped", "/* x */;\nselect 1;\n", []q{{"q1", "select 1"}}},
		{"only line comments", "-- one\n# two\n\n-- three\n", nil},
		{"unlabelled", "select 1;\nselect 2;\n", []q{{"q1", "select 1"}, {"q2", "select 2"}}},
		{"labels", "-- Q1: pricing summary\nselect 1;\n\n# q_two\nselect 2;\nselect 3;\n", []q{{"Q1", "select 1"}, {"q_two", "select 2"}, {"q3", "select 3"}}},
		{"first comment line of the block", "-- first\n-- second\nselect 1;\n", []q{{"first", "select 1"}}},
		{"a blank line cuts the label off", "-- far\n\nselect 1;\n", []q{{"q1", "select 1"}}},
		{"empty comment then label", "--\n-- named\nselect 1;\n", []q{{"named", "select 1"}}},
		{"multi-line statement", "select a,\n  b\nfrom t\nwhere x = 1;\n", []q{{"q1", "select a,\n  b\nfrom t\nwhere x = 1"}}},
		{"no final semicolon", "select 1;\nselect 2\n", []q{{"q1", "select 1"}, {"q2", "select 2"}}},
		{"semicolon not at the end of a line", "select 1; select 2;\n", []q{{"q1", "select 1; select 2"}}},
		{"trailing blanks and comment", "select 1;  \t\nselect 2; -- done\nselect 3;\r\n", []q{{"q1", "select 1"}, {"q2", "select 2"}, {"q3", "select 3"}}},
		{"semicolon in a string", "select 'a;\nb;';\nselect 2;\n", []q{{"q1", "select 'a;\nb;'"}, {"q2", "select 2"}}},
		{"doubled quote", "select 'it''s;\n';\n", []q{{"q1", "select 'it''s;\n'"}}},
		{"E string backslash", "select E'\\';\n';\n", []q{{"q1", "select E'\\';\n'"}}},
		{"plain string backslash", "select 'C:\\';\nselect 2;\n", []q{{"q1", "select 'C:\\'"}, {"q2", "select 2"}}},
		{"quoted names", "select \"a;\n\", `b;\n`;\n", []q{{"q1", "select \"a;\n\", `b;\n`"}}},
		{"dollar quote", "create function f() returns int as $$\nselect 1;\n$$ language sql;\nselect 2;\n", []q{{"q1", "create function f() returns int as $$\nselect 1;\n$$ language sql"}, {"q2", "select 2"}}},
		{"tagged dollar quote", "do $body$\nbegin\n  perform 1;\nend\n$body$;\n", []q{{"q1", "do $body$\nbegin\n  perform 1;\nend\n$body$"}}},
		{"parameter is no dollar quote", "select $1, a$b$c from t;\nselect 2;\n", []q{{"q1", "select $1, a$b$c from t"}, {"q2", "select 2"}}},
		{"line comment inside", "select 1 -- not the end;\n+ 1;\n", []q{{"q1", "select 1 -- not the end;\n+ 1"}}},
		{"hash line inside", "select 1\n# a note;\n+ 1;\n", []q{{"q1", "select 1\n# a note;\n+ 1"}}},
		{"hash mid-line is an operator", "select 5 # 3;\n", []q{{"q1", "select 5 # 3"}}},
		{"block comment inside", "select /* ;\n /* nested; */ ;\n */ 1;\n", []q{{"q1", "select /* ;\n /* nested; */ ;\n */ 1"}}},
		{"indented", "   select 1;\n", []q{{"q1", "select 1"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d statements %+v, want %d", len(got), got, len(c.want))
			}
			for i, w := range c.want {
				if got[i].Label != w.label || got[i].SQL != w.sql {
					t.Errorf("statement %d: %q %q, want %q %q", i+1, got[i].Label, got[i].SQL, w.label, w.sql)
				}
			}
		})
	}
}

func TestParseLines(t *testing.T) {
	qs, err := Parse("-- a\nselect 1;\n\nselect\n2;\n")
	if err != nil {
		t.Fatal(err)
	}
	if qs[0].Line != 2 || qs[1].Line != 4 {
		t.Errorf("lines %d and %d, want 2 and 4", qs[0].Line, qs[1].Line)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"select 1;\nselect 'open;\n", "line 2: the string opened here is not closed"},
		{"select \"x;\n", "line 1: the quoted name opened here is not closed"},
		{"select 1;\n\nselect /* x;\n", "line 3: the comment opened here with /* is not closed"},
		{"do $f$ begin; end;\n", "line 1: the dollar quote $f$ opened here is not closed"},
		{"-- a\nselect 1;\n-- a\nselect 2;\n", "line 4: the label a is already that of the statement at line 2"},
	} {
		_, err := Parse(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q): %v, want %q", c.src, err, c.want)
		}
	}
}

// FuzzParse parses any text: no panic, one-line errors, and statements
// that are non-empty, labelled uniquely, and found again when their text
// is written back one to a line with their labels.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "select 1;\n", "-- a\nselect 'x;\n';\n# b\nselect $$;$$;\n", "select /* /* */ */ 1;", "select E'\\'';\n", "-- q1\nselect 1;\nselect 2;\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		qs, err := Parse(src)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("the error spans lines: %q", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, q := range qs {
			if strings.TrimSpace(q.SQL) == "" || q.Label == "" || seen[q.Label] {
				t.Fatalf("statement %+v: empty, unlabelled or labelled twice", q)
			}
			seen[q.Label] = true
			if q.Line < 1 || q.Line > strings.Count(src, "\n")+1 {
				t.Fatalf("statement %+v: line out of the file", q)
			}
		}
	})
}

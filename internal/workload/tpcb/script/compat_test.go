package script

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// These tests run pgbench 15 itself on the same scripts and compare what
// it prints (debug() lines, errors, syntax error positions) with this
// package's results. pgbench needs a server to connect to, though the
// scripts send it no SQL.

func pgbench(t *testing.T) (bin, url string) {
	t.Helper()
	url = os.Getenv("DBMARK_TEST_POSTGRES")
	if url == "" {
		t.Skip("DBMARK_TEST_POSTGRES is not set: no PostgreSQL server for pgbench (make test starts one)")
	}
	for _, p := range []string{"/usr/lib/postgresql/15/bin/pgbench", "pgbench"} {
		if b, err := exec.LookPath(p); err == nil {
			out, _ := exec.Command(b, "--version").Output()
			if bytes.Contains(out, []byte(" 15.")) {
				return b, url
			}
		}
	}
	t.Skip("pgbench 15 is not installed")
	return "", ""
}

// runPgbench runs pgbench on script text and returns its stderr.
func runPgbench(t *testing.T, name, text string, args ...string) string {
	t.Helper()
	_, url := pgbench(t)
	return runPgbenchAt(t, url, name, text, args...)
}

// runPgbenchAt runs pgbench on script text against the database at url
// and returns its stderr.
func runPgbenchAt(t *testing.T, url, name, text string, args ...string) string {
	t.Helper()
	bin, _ := pgbench(t)
	dir := t.TempDir()
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(append([]string{"-n"}, args...), "-f", name, url)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run() // errors are part of what is compared
	return stderr.String()
}

// debugLines keeps pgbench's debug() lines.
func debugLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "debug(") {
			out = append(out, l)
		}
	}
	return out
}

// runOurs runs script text once per client for txns transactions, clients
// one after the other, and returns the debug() lines and the first error.
func runOurs(t *testing.T, name, text string, seed uint64, clients, txns int) ([]string, error) {
	t.Helper()
	s, err := Parse(name, text)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	var dbg bytes.Buffer
	sh := &Shared{Scale: 1, RandomSeed: seed, Clients: clients, Debug: &dbg}
	for id := range clients {
		c, err := NewClient(sh, id, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for range txns {
			if err := c.Run(context.Background(), s, nil); err != nil {
				return debugLines(dbg.String()), err
			}
		}
	}
	return debugLines(dbg.String()), nil
}

// exprCases are expressions whose values pgbench prints with debug().
var exprCases = []string{
	// integers and doubles
	"1 + 2 * 3 - 4 / 3", "7 / 2", "-7 / 2", "7 / -2", "-7 % 3", "7 % -3", "-7 % -3", "mod(-7, 3)",
	"9223372036854775807", "-9223372036854775808", "-9223372036854775807 - 1", "5 / -1", "-9223372036854775807 % -1",
	"1.5 + 2", "7.0 / 2", "1 / 3.0", "2.0 * 3", "1e300 * 10", "-1e300 * 1e10", "0.1 + 0.2", "1e15", "1e16", "123456789012345678.0",
	"1.0e-5", "0.0001", "100000000000000.0", "3 % 2.5", "-0.0", ".5", "5.", "1.5e3",
	// comparison, boolean, bitwise
	"1 < 2", "2 <= 1", "3 > 2", "3 >= 4", "1 = 1.0", "1 <> 2", "1 != 1", "true and false", "true or false", "not true",
	"1 < 2 and 2 < 3", "not 1 = 2", "5 & 3", "5 | 3", "5 # 3", "~5", "1 << 10", "-16 >> 2", "1 << 63", "1 << 64", "1 << 65", "-1 >> 70",
	"1 + 2 << 3", "~1 + 1", "- - 3", "+4", "-(2 + 3) * 2", "2 * -3", "true and null", "false and null", "null or true",
	"true or null", "null and false",
	// CASE and NULL
	"case when 1 > 2 then 1 when 2 > 1 then 2 else 3 end", "case when false then 1 end", "case when 0 then 1 else 5 end",
	"case when 1.5 then 1 else 0 end",
	"null", "null + 1", "null is null", "1 is null", "1 isnull", "1 notnull", "null is not null", "true is true", "false is not true",
	"1 is true", "null = null", "abs(null)", "least(1, null, 3)", "debug(null) is null",
	// functions
	"abs(-5)", "abs(-5.5)", "abs(-9223372036854775807)", "pow(2, 10)", "power(2.5, -1)", "pow(-8, 1.0/3)", "sqrt(2)", "sqrt(-1)",
	"ln(10)", "ln(0)", "exp(1)", "exp(1000)", "least(3, 1, 2)", "least(3, 1.5, 2)", "greatest(1, 5, 3)", "greatest(1, 2.5)",
	"int(2.5)", "int(3.5)", "int(-2.5)", "int(7.9)", "double(3)", "double(3) / 2", "pi()", "pi() * 2", "PI()", "Abs(-1)",
	"hash(0)", "hash(1)", "hash(-1)", "hash(12345, 0)", "hash(12345, 987654321)", "hash_murmur2(42)", "hash_murmur2(42, -7)",
	"hash_fnv1a(42)", "hash_fnv1a(42, 0)", "hash_fnv1a(-9223372036854775808, 5)", "hash_fnv1a(1.6)",
	"permute(0, 10)", "permute(1, 10)", "permute(9, 10)", "permute(12, 10)", "permute(-3, 10)", "permute(5, 1)",
	"permute(0, 100, 1)", "permute(42, 1000000, 12345)", "permute(7, 2, 0)", "permute(3, 3, 99)",
	"permute(123456789, 9223372036854775807, 42)", "permute(5, 1000, -1)",
	":scale", ":client_id", ":random_seed", ":default_seed", "random(5, 5)", "- 9223372036854775808", "-(9223372036854775807)",
}

func exprScript(exprs []string) string {
	var b strings.Builder
	for i, e := range exprs {
		fmt.Fprintf(&b, "\\set v%d debug(%s)\n", i, e)
	}
	return b.String()
}

func TestExpressionsMatchPgbench(t *testing.T) {
	text := exprScript(exprCases)
	want := debugLines(runPgbench(t, "expr.sql", text, "-t", "1", "--random-seed=4242"))
	got, err := runOurs(t, "expr.sql", text, 4242, 1, 1)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(want) < len(exprCases) {
		t.Fatalf("pgbench printed %d debug lines for %d expressions:\n%s", len(want), len(exprCases), strings.Join(want, "\n"))
	}
	w, g := byCommand(want), byCommand(got)
	for i, e := range exprCases {
		if w[i+1] != g[i+1] {
			t.Errorf("%s:\n  pgbench: %s\n  dbmark:  %s", e, w[i+1], g[i+1])
		}
	}
}

// byCommand joins debug lines by the command that printed them.
func byCommand(lines []string) map[int]string {
	out := map[int]string{}
	for _, l := range lines {
		var n int
		if _, err := fmt.Sscanf(l, "debug(script=0,command=%d)", &n); err == nil {
			out[n] += l[strings.Index(l, ":")+1:]
		}
	}
	return out
}

// errorCases are expressions pgbench rejects at run time, with the
// message it logs.
var errorCases = []struct{ expr, msg string }{
	{"9223372036854775807 + 1", "bigint add out of range"},
	{"-9223372036854775807 - 2", "bigint sub out of range"},
	{"4611686018427387904 * 2", "bigint mul out of range"},
	{"-9223372036854775808 / -1", "bigint div out of range"},
	{"1 / 0", "division by zero"},
	{"1 % 0", "division by zero"},
	{"1.0 / 0", ""}, // a double: inf, no error
	{":nosuch + 1", `undefined variable "nosuch"`},
	{"int(1e30)", "double to int overflow for"},
	{"random(5, 1)", "empty range given to random"},
	{"random(-9223372036854775808, 9223372036854775807)", "random range is too large"},
	{"random_gaussian(1, 10, 1.5)", "gaussian parameter must be at least 2.000000 (not 1.500000)"},
	{"random_exponential(1, 10, 0)", "exponential parameter must be greater than zero (not 0.000000)"},
	{"random_zipfian(1, 10, 1.0)", "zipfian parameter must be in range [1.001, 1000] (not 1.000000)"},
	{"permute(1, 0)", "permute size parameter must be greater than zero"},
	{"not 1", "cannot coerce int to boolean"},
	{"1 and true", "cannot coerce int to boolean"},
	{"true + 1", "cannot coerce boolean to int"},
	{"sqrt(true)", "cannot coerce boolean to double"},
}

func TestRuntimeErrorsMatchPgbench(t *testing.T) {
	for _, tc := range errorCases {
		text := fmt.Sprintf("\\set x 1\n\\set y debug(%s)\n", tc.expr)
		out := runPgbench(t, "err.sql", text, "-t", "1")
		_, err := runOurs(t, "err.sql", text, 1, 1, 1)
		if tc.msg == "" {
			if err != nil || strings.Contains(out, "aborted") {
				t.Errorf("%s: pgbench %q, dbmark %v; want no error from either", tc.expr, out, err)
			}
			continue
		}
		if !strings.Contains(out, "error: "+tc.msg) {
			t.Errorf("%s: pgbench said %q; the test expects %q", tc.expr, out, tc.msg)
		}
		var re *RuntimeError
		if !errors.As(err, &re) || !strings.Contains(re.Msg, tc.msg) {
			t.Errorf("%s: dbmark error %v; want a RuntimeError with %q", tc.expr, err, tc.msg)
			continue
		}
		if re.Line != 2 || re.Client != 0 || re.Script != "err.sql" {
			t.Errorf("%s: error names script %q line %d client %d; want err.sql line 2 client 0", tc.expr, re.Script, re.Line, re.Client)
		}
	}
}

// TestRandomSequencesMatchPgbench compares the draws of several clients
// over several transactions for every random function and seeds.
func TestRandomSequencesMatchPgbench(t *testing.T) {
	text := `\set c debug(:client_id)
\set a debug(random(1, 1000000))
\set b debug(random(-5000, 5000))
\set e debug(random_exponential(1, 1000, 2.5))
\set g debug(random_gaussian(1, 1000, 2.5))
\set z debug(random_zipfian(1, 1000, 1.07))
\set z2 debug(random_zipfian(1, 100000, 2.5))
\set p debug(permute(random(0, 99), 100))
\set h debug(hash(:client_id))
`
	for _, seed := range []uint64{0, 1, 987654321, 18446744073709551615} {
		out := runPgbench(t, "rand.sql", text, "-t", "4", "-c", "3", "--random-seed", fmt.Sprint(seed))
		want := byClient(t, debugLines(out))
		gotLines, err := runOurs(t, "rand.sql", text, seed, 3, 4)
		if err != nil {
			t.Fatal(err)
		}
		got := byClient(t, gotLines)
		for id := range 3 {
			if strings.Join(got[id], "\n") != strings.Join(want[id], "\n") {
				t.Errorf("seed %d client %d:\npgbench:\n%s\ndbmark:\n%s", seed, id, strings.Join(want[id], "\n"), strings.Join(got[id], "\n"))
			}
		}
	}
}

// byClient groups debug lines by the client id each transaction prints first.
func byClient(t *testing.T, lines []string) map[int][]string {
	t.Helper()
	out := map[int][]string{}
	id := -1
	re := regexp.MustCompile(`command=1\): int (\d+)$`)
	for _, l := range lines {
		if m := re.FindStringSubmatch(l); m != nil {
			fmt.Sscan(m[1], &id)
			continue
		}
		out[id] = append(out[id], l)
	}
	if len(out) == 0 {
		t.Fatal("no debug output")
	}
	return out
}

// syntaxCases are scripts pgbench refuses to parse.
var syntaxCases = []string{
	"\\set x 1 +\n",
	"SELECT 1;\n\\set x 1 + foo(2)\n",
	"\\set x (1 + 2\n",
	"  \\set x 1 @ 2\n",
	"\\set x 99999999999999999999\n",
	"\\set x random(1)\n",
	"\\set x least()\n",
	"\\set x hash(1, 2, 3)\n",
	"\\set x 1 < 2 < 3\n",
	"\\set x case when 1 then 2\n",
	"\\set x 1 2\n",
	"\\set x 1.5e400\n",
	"\\set x 9223372036854775808\n",
	"\\set\n",
	"-- comment\n\n\\sleep 1 xs\n",
	"\\sleep\n",
	"\\sleep 1 ms extra\n",
	"\\sleep abc\n",
	"\\sleep 10 minutes\n",
	"select 1;\n\\foo 1 xs\n",
	"\\gset\n",
	"\\set x 1\n\\gset\n",
	"select 1 \\gset\n\\aset\n",
	"select 1;\n\\gset a b\n",
	"\\shell\n",
	"\\setshell x\n",
	"\\else\n",
	"\\if 1\n\\else\n\\elif 2\n\\endif\n",
	"\\if 1\n\\else\n\\else\n\\endif\n",
	"\\endif\n",
	"\\if true\nselect 1;\n",
	"\\elif 1\n",
	"\\endpipeline x\n",
	"\\set x 1 \\\n + * 2\n",
	"\\if 1 +\n\\endif\n",
	"\\set x case 1 when 1 then 2 end\n",
	"\\set x 1 = 2 = 3\n",
	"\\set x not\n",
	"\\set x :\n",
	"\\set x 9223372036854775808 + 1\n",
}

var pgbenchSyntax = regexp.MustCompile(`^pgbench: error: ([^:]+):(\d+): (.*)$`)
var pgbenchCondition = regexp.MustCompile(`^pgbench: error: condition error in script "([^"]+)" command (\d+): (.*)$`)

func TestSyntaxErrorsMatchPgbench(t *testing.T) {
	for _, text := range syntaxCases {
		out := runPgbench(t, "bad.sql", text, "-t", "1")
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		_, err := Parse("bad.sql", text)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: dbmark error %v; want a SyntaxError (pgbench: %s)", text, err, out)
			continue
		}
		if m := pgbenchCondition.FindStringSubmatch(lines[0]); m != nil {
			if se.Msg != m[3] {
				t.Errorf("%q: dbmark %q; pgbench %q", text, se.Msg, lines[0])
			}
			continue
		}
		m := pgbenchSyntax.FindStringSubmatch(lines[0])
		if m == nil {
			t.Errorf("%q: pgbench did not report a syntax error: %s", text, out)
			continue
		}
		if fmt.Sprintf("%s:%d: %s", se.File, se.Line, se.Msg) != fmt.Sprintf("%s:%s: %s", m[1], m[2], m[3]) {
			t.Errorf("%q:\n  pgbench: %s:%s: %s\n  dbmark:  %s", text, m[1], m[2], m[3], se.Error())
		}
		wantDetail := strings.Join(lines[1:], "\n")
		if se.Detail() != wantDetail {
			t.Errorf("%q: detail\n  pgbench: %q\n  dbmark:  %q", text, wantDetail, se.Detail())
		}
		if len(lines) == 3 {
			col := strings.Index(lines[2], "^") + 1
			if se.Col != col {
				t.Errorf("%q: column %d, pgbench %d", text, se.Col, col)
			}
			if want := fmt.Sprintf("%s:%s:%d: ", m[1], m[2], col); !strings.HasPrefix(se.Error(), want) {
				t.Errorf("%q: Error() = %q, want prefix %q", text, se.Error(), want)
			}
		}
	}
}

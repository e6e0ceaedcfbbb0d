package script_test

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/workload/tpcb/script"
)

func TestParseSplitsCommandsAsPgbench(t *testing.T) {
	s, err := script.Parse("t.sql", `-- a comment line
SELECT 1; SELECT 2;
SELECT 'a;b', "x;y", $$c;d$$, (1;2)
  , :v::int
;
BEGIN \; SELECT 3;
\set x 1 + \
  2
SELECT 4 \gset q_
/* c */ SELECT 5
`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Commands {
		got = append(got, strings.TrimSpace(c.Text)+"@"+strconv.Itoa(c.Line))
	}
	want := []string{
		"SELECT 1;@2", "SELECT 2;@2",
		"SELECT 'a;b', \"x;y\", $$c;d$$, (1;2)\n  , :v::int\n;@3",
		"BEGIN ; SELECT 3;@6",
		"\\set x 1 + \\\n  2@7",
		"SELECT 4@9",
		"/* c */ SELECT 5@10",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("commands:\n%q\nwant\n%q", got, want)
	}
	if c := s.Commands[5]; c.Result != script.GSet || c.Prefix != "q_" {
		t.Errorf("\\gset not attached: %+v", c)
	}
	if s.Commands[2].Label != `SELECT 'a;b', "x;y", $$c;d$$, (1;2)` {
		t.Errorf("label %q", s.Commands[2].Label)
	}
}

func TestBuiltins(t *testing.T) {
	if got := script.BuiltinNames(); !slices.Equal(got, []string{"tpcb-like", "simple-update", "select-only"}) {
		t.Fatalf("BuiltinNames() = %q", got)
	}
	for prefix, name := range map[string]string{"tpcb": "<builtin: TPC-B (sort of)>", "si": "<builtin: simple update>", "select-only": "<builtin: select only>"} {
		s, err := script.Builtin(prefix)
		if err != nil || s.Name != name {
			t.Errorf("Builtin(%q) = %v, %v; want %s", prefix, s, err, name)
		}
	}
	for _, bad := range []string{"s", "nosuch"} {
		if _, err := script.Builtin(bad); err == nil {
			t.Errorf("Builtin(%q) accepted", bad)
		}
	}
}

// counting returns a script that counts its runs in :n, then runs more,
// and a client for it with n at 0.
func counting(t *testing.T, more string) (*script.Script, *script.Client) {
	t.Helper()
	s, err := script.Parse("r.sql", "\\set n :n + 1\n"+more)
	if err != nil {
		t.Fatal(err)
	}
	c, err := script.NewClient(&script.Shared{RandomSeed: 3, Clients: 1, Vars: map[string]string{"n": "0"}}, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// TestRestoreRepeatsTheTransaction checks that a retried run draws the
// same random values and sees the variables as they were.
func TestRestoreRepeatsTheTransaction(t *testing.T) {
	s, c := counting(t, "\\set a random(1, 1000000000)\n")
	ctx := context.Background()
	if err := c.Run(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	a1, _ := c.Var("a")
	c.Restore()
	if err := c.Run(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	a2, _ := c.Var("a")
	n, _ := c.Var("n")
	if a1 != a2 || n != "1" {
		t.Fatalf("after Restore: a %s then %s, n %s; want the same a and n 1", a1, a2, n)
	}
	if err := c.Run(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	if a3, _ := c.Var("a"); a3 == a2 {
		t.Fatalf("the next run drew the same value %s", a3)
	}
}

// TestTriedOnceKeepsNothing checks that a client told no transaction is
// tried again goes on from where its last run left it: Restore, which
// the runner then never calls, puts nothing back.
func TestTriedOnceKeepsNothing(t *testing.T) {
	s, c := counting(t, "")
	c.TriedOnce()
	ctx := context.Background()
	for range 3 {
		if err := c.Run(ctx, s, nil); err != nil {
			t.Fatal(err)
		}
	}
	c.Restore()
	if n, _ := c.Var("n"); n != "3" {
		t.Fatalf("n is %s after three runs and a Restore; want 3", n)
	}
}

func TestSleepAndShell(t *testing.T) {
	s, err := script.Parse("sh.sql", `\set ms 30
\sleep :ms ms
\sleep 20000us
\setshell five echo :ms ::x | wc -w
\set five :five + 3
\shell echo hello :five
`)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c, err := script.NewClient(&script.Shared{Clients: 1, Stdout: &out}, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := c.Run(context.Background(), s, nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("script took %v; its sleeps add up to 50ms", d)
	}
	if v, _ := c.Var("five"); v != "5" {
		t.Errorf("five = %q, want 5 (2 words + 3)", v)
	}
	if out.String() != "hello 5\n" {
		t.Errorf("shell printed %q", out.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	long, _ := script.Parse("long.sql", "\\sleep 10\n")
	if err := c.Run(ctx, long, nil); err != context.Canceled {
		t.Errorf("sleep with a cancelled context = %v", err)
	}
}

func TestRuntimeErrorNamesScriptLineAndClient(t *testing.T) {
	s, _ := script.Parse("e.sql", "\\set a 1\n\n\\set b :a / 0\n")
	c, _ := script.NewClient(&script.Shared{Clients: 3}, 2, nil, nil)
	err := c.Run(context.Background(), s, nil)
	if err == nil || err.Error() != "client 2: script e.sql line 3: set: division by zero" {
		t.Fatalf("error = %v", err)
	}
}

func TestSyntaxErrorDetail(t *testing.T) {
	_, err := script.Parse("d.sql", "SELECT 1;\n\\set x 1 + foo(2)\n")
	se, ok := err.(*script.SyntaxError)
	if !ok {
		t.Fatalf("error %v", err)
	}
	if se.Error() != `d.sql:2:14: unexpected function name (foo) in command "set"` {
		t.Errorf("Error() = %q", se.Error())
	}
	if se.Detail() != "\\set x 1 + foo(2)\n             ^ error found here" {
		t.Errorf("Detail() = %q", se.Detail())
	}
}

// TestSetAllocatesNothing guards the hot path: a run of select-only's
// meta-command allocates nothing per transaction.
func TestSetAllocatesNothing(t *testing.T) {
	s, _ := script.Parse("a.sql", "\\set aid random(1, 100000 * :scale)\n\\set x hash(:aid) % 10 + permute(:aid, 1000)\n")
	c, _ := script.NewClient(&script.Shared{Scale: 10, Clients: 1}, 0, nil, nil)
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() {
		if err := c.Run(ctx, s, nil); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

// The reads that must find a row: the builtins' read of the account they
// drew, and the same in a custom script only when it draws :aid as they do
// and sets it nowhere else.
func TestMustFind(t *testing.T) {
	marked := func(s *script.Script) []int {
		var out []int
		for i, c := range s.Commands {
			if c.MustFind {
				out = append(out, i)
			}
		}
		return out
	}
	for _, name := range script.BuiltinNames() {
		s, err := script.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		if m := marked(s); len(m) != 1 || !strings.HasPrefix(s.Commands[m[0]].Text, "SELECT abalance") {
			t.Errorf("%s: commands %v must find a row, want its SELECT abalance", name, m)
		}
	}
	for _, tc := range []struct {
		src  string
		want int
	}{
		{"\\set aid random(1, 100000 * :scale)\nselect  abalance FROM pgbench_accounts\n WHERE aid = :aid;\n", 1},
		{"\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid + 1;\n", 1},
		{"\\set aid random(1, 1000000)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n", 0},
		{"\\set aid random(1, 100000 * :scale)\n\\set aid :aid + 5\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n", 0},
		{"\\set aid random(1, 100000 * :scale)\nSELECT 1 AS aid \\gset\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n", 0},
		{"SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n", 0},
	} {
		s, err := script.Parse("custom.sql", tc.src)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(marked(s)); got != tc.want {
			t.Errorf("%q: %d reads must find a row, want %d", tc.src, got, tc.want)
		}
	}
}

package script

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// TestEvalIntAsEval runs \set lines that evalInt or evalDraw takes on,
// twice over: as Run runs them, and with eval alone. Values, errors and the random
// state they leave must be the same, including where either gives up (a
// text, double or missing variable, overflow, an empty range) after
// drawing.
func TestEvalIntAsEval(t *testing.T) {
	exprs := []string{
		"random(1, 100000 * :scale)",
		":scale * 3 - 4 + random(-5, 5)",
		"random(1, 10) + :txt",
		"random(1, 10) * :dbl",
		"random(1, 10) + :missing",
		"random(1, 10) + 9223372036854775807",
		"random(-9223372036854775807, 10) - random(1, 9223372036854775807)",
		"random(3, 1)",
		"random(-9223372036854775807 - 1, 9223372036854775807)",
		"random(1, 2) * 4611686018427387904 * random(2, 3)",
		"random(-5000, 5000)",
		"random(:scale * 2, 100 * :scale)",
		"random(:scale, :scale)",
		"random(1, :txt)",
		"random(:dbl, 10)",
		"random(1, 10 * :missing)",
		"random(1, 9223372036854775807 * :scale)",
		"random(-9223372036854775807 - 1, 9223372036854775807)",
		"random(:scale, 1)",
	}
	sh := &Shared{Scale: 10, Clients: 1, Vars: map[string]string{"txt": "7", "dbl": "2.5"}}
	ctx := context.Background()
	for _, e := range exprs {
		fast, err := Parse("s.sql", "\\set r "+e+"\n")
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if !fast.Commands[0].intExpr {
			t.Fatalf("%s: not taken by evalInt", e)
		}
		slow, _ := Parse("s.sql", "\\set r "+e+"\n")
		slow.Commands[0].intExpr, slow.Commands[0].draw = false, nil
		a, _ := NewClient(sh, 0, nil, nil)
		b, _ := NewClient(sh, 0, nil, nil)
		for i := range 3 {
			ea, eb := a.Run(ctx, fast, nil), b.Run(ctx, slow, nil)
			va, _ := a.Var("r")
			vb, _ := b.Var("r")
			if fmt.Sprint(ea) != fmt.Sprint(eb) || va != vb || a.rnd != b.rnd {
				t.Errorf("%s, run %d: evalInt gave %q, %v, state %v; eval %q, %v, state %v", e, i, va, ea, a.rnd, vb, eb, b.rnd)
			}
		}
	}
	for e, want := range map[string]bool{
		"random(1, 100000 * :scale)": true, "random(-5000, 5000)": true, "random(:scale * 2, :scale)": true,
		"random(1, 10) + 1": false, "random(1, 2 * 3)": false, "random(1, :scale + 1)": false, "random(1, :a * :b)": false, "random(- - 5, 5)": false, "random(-:scale, 5)": false,
	} {
		s, err := Parse("d.sql", "\\set r "+e+"\n")
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if got := s.Commands[0].draw != nil; got != want {
			t.Errorf("%s: taken by evalDraw = %v; want %v", e, got, want)
		}
	}
	ifs, err := Parse("if.sql", "\\if random(1, 2)\nSELECT 1;\n\\elif random(0, :scale)\nSELECT 2;\n\\endif\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ifs.Commands {
		if c.draw != nil {
			t.Errorf("line %d, %s: a condition taken by evalDraw, which sets a variable", c.Line, c.Label)
		}
	}
	for _, e := range []string{"random(1, 10) / 2", "1.5 + random(1, 2)", "random_exponential(1, 10, 2)", "abs(:scale)"} {
		s, err := Parse("n.sql", "\\set r "+e+"\n")
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if s.Commands[0].intExpr {
			t.Errorf("%s: taken by evalInt, which does not evaluate it", e)
		}
	}
}

// TestProductBounds checks the bounds a term works out against mulInt's
// overflow test, for constants and values at and around the edges.
func TestProductBounds(t *testing.T) {
	edges := []int64{math.MinInt64, math.MinInt64 + 1, -4611686018427387904, -4611686018427387905, -3074457345618258603,
		-100000, -3, -2, -1, 0, 1, 2, 3, 100000, 3074457345618258602, 3074457345618258603, 4611686018427387903,
		4611686018427387904, math.MaxInt64 - 1, math.MaxInt64}
	for _, k := range edges {
		tm := product(k, 0)
		for _, v := range edges {
			for _, d := range []int64{-1, 0, 1} {
				x := v + d // wraps at the ends: more values near them
				_, want := mulInt(k, x)
				if got := x >= tm.vmin && x <= tm.vmax; got != want {
					t.Errorf("%d * %d: within the term's bounds = %v; mulInt says no overflow = %v", k, x, got, want)
				}
			}
		}
	}
}

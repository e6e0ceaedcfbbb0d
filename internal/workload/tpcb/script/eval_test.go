package script

import (
	"context"
	"fmt"
	"testing"
)

// TestEvalIntAsEval runs \set lines that evalInt takes on, twice over:
// as Run runs them, and with eval alone. Values, errors and the random
// state they leave must be the same, including where evalInt gives up (a
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
		slow.Commands[0].intExpr = false
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

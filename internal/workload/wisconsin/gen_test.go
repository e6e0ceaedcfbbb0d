package wisconsin_test

import (
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/workload/wisconsin"
)

// unique1 is a permutation of 0..n-1, the same for the same seed and
// stream, and another for another seed or stream.
func TestPermutation(t *testing.T) {
	for _, n := range []int64{100, 1000, 10_000, 123_400} {
		for _, seed := range []uint64{0, 1, 42, 1 << 62} {
			got := wisconsin.Permutation(n, seed, 2)
			seen := make([]bool, n)
			for i, v := range got {
				if v < 0 || v >= n || seen[v] {
					t.Fatalf("n=%d seed=%d: value %d at %d is out of range or repeated", n, seed, v, i)
				}
				seen[v] = true
			}
			if again := wisconsin.Permutation(n, seed, 2); !equal(got, again) {
				t.Fatalf("n=%d seed=%d: a second generation differs", n, seed)
			}
			if other := wisconsin.Permutation(n, seed, 3); equal(got, other) {
				t.Fatalf("n=%d seed=%d: two relations have the same order", n, seed)
			}
			if other := wisconsin.Permutation(n, seed+1, 2); equal(got, other) {
				t.Fatalf("n=%d seed=%d: the next seed gives the same order", n, seed)
			}
			inOrder := 0
			for i, v := range got {
				if int64(i) == v {
					inOrder++
				}
			}
			if inOrder > int(n/20) {
				t.Errorf("n=%d seed=%d: %d values at their own position: not a random order", n, seed, inOrder)
			}
		}
	}
}

func equal(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// The strings are DeWitt's: 52 characters, 7 significant letters for the
// unique ones, 4 for string4, 'x' after.
func TestStrings(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want string
	}{{0, "AAAAAAA"}, {1, "AAAAAAB"}, {25, "AAAAAAZ"}, {26, "AAAAABA"}, {10_000, "AAAAOUQ"}} {
		got := wisconsin.StringU(c.v)
		if len(got) != 52 || got[:7] != c.want || strings.Trim(got[7:], "x") != "" {
			t.Errorf("stringu(%d) = %q, want %s and 45 x", c.v, got, c.want)
		}
	}
	for i, want := range []string{"AAAA", "HHHH", "OOOO", "VVVV", "AAAA"} {
		got := wisconsin.String4(int64(i))
		if len(got) != 52 || got[:4] != want || strings.Trim(got[4:], "x") != "" {
			t.Errorf("string4(%d) = %q, want %s and 48 x", i, got, want)
		}
	}
}

package sweep

import (
	"slices"
	"strings"
	"testing"
)

// FuzzValues expands any axis: no panic, a one-line error, a range never
// longer than maxValues, a single value kept as given, and what a list or
// range expands to read back: each value is a single value, and the
// values joined by commas expand to themselves.
func FuzzValues(f *testing.F) {
	for _, s := range []string{
		"1,8,32,128", "seqwr,rndrd", "1:10:1", "256M:6G:256M", "10s:60s:10s", "0:1:0.1", "1:1000000:1",
		"10:1:1", "1:10:0", "1:10:x", "host:5432:1", "a,,b", "1,1", " , ", "", "1e308:1.7e308:1e307",
		"-5:5:2.5", "0:1G:256M", "+Inf:+Inf:1", "-Inf:+Inf:1", "1:2:+Inf", "0.1:0.3:0.1", "1m:1h:10m",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vs, err := Values(s)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("Values(%q): the error spans lines: %q", s, err)
			}
			if !IsMulti(s) {
				t.Fatalf("Values(%q) failed (%v) but IsMulti says it is one value", s, err)
			}
			return
		}
		if len(vs) == 0 || len(vs) > maxValues && !strings.Contains(s, ",") {
			t.Fatalf("Values(%q) gave %d values", s, len(vs))
		}
		if !IsMulti(s) {
			if len(vs) != 1 || vs[0] != s {
				t.Fatalf("Values(%q) = %q: a single value must come back as given", s, vs)
			}
			return
		}
		for _, v := range vs {
			if v == "" || strings.Contains(v, ",") {
				t.Fatalf("Values(%q) gave the value %q", s, v)
			}
			if one, err := Values(v); err != nil || len(one) != 1 || one[0] != v {
				t.Fatalf("Values(%q) gave %q, which expands to %q, %v", s, v, one, err)
			}
		}
		if len(vs) > 1 {
			back, err := Values(strings.Join(vs, ","))
			if err != nil || !slices.Equal(back, vs) {
				t.Fatalf("Values(%q) = %q; joined they expand to %q, %v", s, vs, back, err)
			}
		}
		if nums, ok := Numeric(vs); ok && len(nums) != len(vs) {
			t.Fatalf("Numeric(%q) gave %d numbers", vs, len(nums))
		}
	})
}

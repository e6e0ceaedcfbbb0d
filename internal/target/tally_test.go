package target

import (
	"math"
	"testing"
	"time"
)

func TestParseInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"42", 42, true}, {"-7", -7, true}, {"+7", 7, true},
		{"12.00", 12, true}, {"12.", 12, true}, {"12.5", 0, false},
		{"9223372036854775807", math.MaxInt64, true}, {"9223372036854775808", 0, false},
		{"-9223372036854775808", math.MinInt64, true}, {"-9223372036854775809", 0, false},
		{"99999999999999999999", 0, false}, {"", 0, false}, {"-", 0, false}, {".5", 0, false},
		{"1e3", 0, false}, {"abc", 0, false}, {" 1", 0, false},
	} {
		got, ok := ParseInt([]byte(c.in))
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestTallySumWrapsAndText(t *testing.T) {
	tl := Tally{SumValid: true}
	tl.AddInt(math.MaxInt64)
	tl.AddText([]byte("1"))
	tl.AddText(nil)
	if !tl.SumValid || tl.Sum != math.MinInt64 {
		t.Errorf("sum %d valid %v: want the wrapped %d", tl.Sum, tl.SumValid, int64(math.MinInt64))
	}
	tl.AddText([]byte("1.5"))
	if tl.SumValid {
		t.Error("a fraction left the sum valid")
	}
}

func TestTimeoutMillis(t *testing.T) {
	for d, want := range map[time.Duration]int64{0: 0, -time.Second: 0, time.Microsecond: 1, time.Millisecond: 1, 1500 * time.Microsecond: 2, 2 * time.Second: 2000} {
		if got := TimeoutMillis(d); got != want {
			t.Errorf("TimeoutMillis(%v) = %d, want %d", d, got, want)
		}
	}
}

package randgen

import (
	"strings"
	"testing"
)

func TestFillTemplate(t *testing.T) {
	tests := []struct {
		name     string
		prefix   string
		template string
	}{
		{"empty", "", ""},
		{"literal only", "", "abc-XYZ 0"},
		{"digits", "", "###########"},
		{"letters", "", "@@@@@@@@@@"},
		{"mixed", "", "##-@@ #@"},
		{"sysbench c column", "", "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########"},
		{"appends after prefix", "key:", "@@@-###"},
		{"utf-8 copied", "", "é#ü@"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := New(4, 2)
			got := FillTemplate([]byte(tt.prefix), tt.template, src)
			if !strings.HasPrefix(string(got), tt.prefix) {
				t.Fatalf("prefix %q lost: %q", tt.prefix, got)
			}
			out := got[len(tt.prefix):]
			if len(out) != len(tt.template) {
				t.Fatalf("len %d, want %d: %q", len(out), len(tt.template), out)
			}
			for i := range len(out) {
				c, want := out[i], tt.template[i]
				switch want {
				case '#':
					if c < '0' || c > '9' {
						t.Fatalf("byte %d = %q, want a digit (output %q)", i, c, out)
					}
				case '@':
					if c < 'a' || c > 'z' {
						t.Fatalf("byte %d = %q, want a lowercase letter (output %q)", i, c, out)
					}
				default:
					if c != want {
						t.Fatalf("byte %d = %q, want literal %q", i, c, want)
					}
				}
			}
		})
	}
}

func TestFillTemplateCoversAlphabet(t *testing.T) {
	src := New(1, 0)
	var seen [256]int
	buf := make([]byte, 0, 64)
	for range 2000 {
		buf = FillTemplate(buf[:0], "#@", src)
		seen[buf[0]]++
		seen[buf[1]]++
	}
	for c := '0'; c <= '9'; c++ {
		if seen[c] < 120 { // expected 200
			t.Errorf("digit %q drawn %d times in 2000", c, seen[c])
		}
	}
	for c := 'a'; c <= 'z'; c++ {
		if seen[c] < 40 { // expected about 77
			t.Errorf("letter %q drawn %d times in 2000", c, seen[c])
		}
	}
}

func TestFillTemplateReusesBuffer(t *testing.T) {
	src := New(1, 0)
	buf := make([]byte, 0, 32)
	got := FillTemplate(buf, "###-@@@", src)
	if &got[0] != &buf[:1][0] {
		t.Fatal("FillTemplate reallocated a buffer with enough capacity")
	}
}

package htmlreport

import "testing"

func TestQuartiles(t *testing.T) {
	cases := []struct {
		in   []float64
		want box
	}{
		{[]float64{7}, box{7, 7, 7, 7, 7}},
		{[]float64{4, 1, 3, 2}, box{1, 1.75, 2.5, 3.25, 4}},
		{[]float64{10, 20, 30, 40, 50}, box{10, 20, 30, 40, 50}},
		{[]float64{5, 1, 9}, box{1, 3, 5, 7, 9}},
	}
	for _, c := range cases {
		got, ok := quartiles(c.in)
		if !ok || got != c.want {
			t.Errorf("quartiles(%v) = %+v, want %+v", c.in, got, c.want)
		}
	}
	if _, ok := quartiles(nil); ok {
		t.Error("quartiles(nil) reported a box")
	}
	in := []float64{3, 1, 2}
	quartiles(in)
	if in[0] != 3 {
		t.Error("quartiles sorted its input in place")
	}
}

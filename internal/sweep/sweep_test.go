package sweep

import (
	"slices"
	"strings"
	"testing"
)

func TestValues(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"1,8,32,128", []string{"1", "8", "32", "128"}},
		{"seqwr, rndrd", []string{"seqwr", "rndrd"}},
		{"100:1000:100", []string{"100", "200", "300", "400", "500", "600", "700", "800", "900", "1000"}},
		{"1:10:4", []string{"1", "5", "9"}},
		{"0.1:0.3:0.1", []string{"0.1", "0.2", "0.3"}},
		{"256M:1G:256M", []string{"256M", "512M", "768M", "1G"}},
		{"512M:2G:512M", []string{"512M", "1G", "1536M", "2G"}},
		{"10s:30s:10s", []string{"10s", "20s", "30s"}},
		{"8", []string{"8"}},
		{"postgres://h:5432/db", []string{"postgres://h:5432/db"}},
	} {
		got, err := Values(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Values(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if IsMulti(c.in) != (len(c.want) > 1) {
			t.Errorf("IsMulti(%q) = %v", c.in, IsMulti(c.in))
		}
	}
}

func TestValuesBadInput(t *testing.T) {
	for in, want := range map[string]string{
		",":           "no values",
		"1,,2":        "empty value",
		"1,2,1":       "twice",
		"10:1:1":      "FROM is greater than TO",
		"1:10:0":      "STEP must be positive",
		"1:10:-1":     "STEP must be positive",
		"1:10s:1":     "must all be numbers",
		"1:1000000:1": "more than 1000",
		"1M:10M:0M":   "STEP must be positive",
		"16M:32M:0":   "STEP must be positive",
		"1s:1m:-10s":  "STEP must be positive",
	} {
		if !IsMulti(in) {
			t.Errorf("IsMulti(%q) = false: an option would parse it as one value", in)
		}
		_, err := Values(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Values(%q): %v; want an error saying %q", in, err, want)
		}
	}
}

func keys(cs []Cell) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Key()
	}
	return out
}

func TestCells(t *testing.T) {
	axes := []Axis{{"threads", []string{"1", "2"}}, {"mode", []string{"a", "b", "c"}}}
	cs, err := Cells(axes, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"threads=1 mode=a", "threads=1 mode=b", "threads=1 mode=c", "threads=2 mode=a", "threads=2 mode=b", "threads=2 mode=c"}
	if !slices.Equal(keys(cs), want) {
		t.Errorf("cells %q, want %q", keys(cs), want)
	}
	if m := cs[4].Map(); m["threads"] != "2" || m["mode"] != "b" || KeyOf(axes, m) != cs[4].Key() {
		t.Errorf("map %v of %s", m, cs[4].Key())
	}

	// Zipped: threads and rate together, crossed with mode.
	axes = []Axis{{"threads", []string{"1", "2"}}, {"mode", []string{"a", "b"}}, {"rate", []string{"10", "20"}}}
	cs, err = Cells(axes, [][]string{{"rate", "threads"}})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"threads=1 mode=a rate=10", "threads=1 mode=b rate=10", "threads=2 mode=a rate=20", "threads=2 mode=b rate=20"}
	if !slices.Equal(keys(cs), want) {
		t.Errorf("zipped cells %q, want %q", keys(cs), want)
	}
	if cs, err := Cells(nil, nil); err != nil || len(cs) != 1 || len(cs[0]) != 0 {
		t.Errorf("no axes: %v %v; want one empty cell", cs, err)
	}
}

func TestCellsBadInput(t *testing.T) {
	axes := []Axis{{"threads", []string{"1", "2", "4"}}, {"rate", []string{"10", "20"}}}
	for _, c := range []struct {
		axes []Axis
		zip  [][]string
		want string
	}{
		{axes, [][]string{{"threads", "rate"}}, "--threads has 3 values and --rate has 2"},
		{axes, [][]string{{"threads", "tables"}}, "--tables is not swept"},
		{axes, [][]string{{"threads"}}, "two or more"},
		{[]Axis{{"threads", nil}}, nil, "--threads has no values"},
	} {
		_, err := Cells(c.axes, c.zip)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Cells(%v, %v): %v; want %q", c.axes, c.zip, err, c.want)
		}
	}
}

func TestPolicy(t *testing.T) {
	fixed := Policy{Iterations: 3}
	if !fixed.More([]float64{1, 2}) || fixed.More([]float64{1, 2, 3}) {
		t.Error("fixed iterations: wrong count")
	}
	cv := Policy{Iterations: 2, UntilCV: 0.03, MaxIterations: 4}
	if err := cv.Validate(); err != nil {
		t.Fatal(err)
	}
	if !cv.More([]float64{100}) {
		t.Error("stopped under the minimum")
	}
	if cv.More([]float64{100, 101}) { // CV 0.7%
		t.Error("went on with a CV of 0.7% under 3%")
	}
	if !cv.More([]float64{100, 120}) { // CV 12%
		t.Error("stopped with a CV of 12%")
	}
	if cv.More([]float64{100, 120, 80, 130}) {
		t.Error("went past --max-iterations")
	}
	for _, p := range []Policy{{Iterations: 0}, {Iterations: 3, UntilCV: 0.03, MaxIterations: 2}, {Iterations: 1, UntilCV: 1.5, MaxIterations: 5}} {
		if p.Validate() == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

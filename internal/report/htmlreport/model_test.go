package htmlreport

import (
	"math"
	"slices"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbmark/dbmark/internal/result"
)

func TestPercentilePoints(t *testing.T) {
	h := hdr.New(1, 3_600_000_000_000, 3)
	for i := int64(1); i <= 10_000; i++ {
		if err := h.RecordValue(i * 1000); err != nil { // 1 µs to 10 ms
			t.Fatal(err)
		}
	}
	enc, err := result.EncodeHistogram("event", "latency", h)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := percentilePoints(enc)
	if err != nil {
		t.Fatal(err)
	}
	// 20 points a decade of 1/(1-q) up to the count (4 decades), then the maximum.
	if len(pts) != 81 {
		t.Fatalf("%d points, want 81", len(pts))
	}
	for i := 1; i < len(pts); i++ {
		if pts[i][0] <= pts[i-1][0] || pts[i][1] < pts[i-1][1] {
			t.Fatalf("not increasing at %d: %v then %v", i, pts[i-1], pts[i])
		}
	}
	// x = 10 is the 90th percentile: 9 ms of a uniform 0-10 ms.
	if x, y := pts[20][0], pts[20][1]; math.Abs(x-10) > 1e-9 || math.Abs(y-9) > 0.01 {
		t.Fatalf("point 20 = (%g, %g), want (10, 9)", x, y)
	}
	if last := pts[len(pts)-1]; last[0] != 10_000 || math.Abs(last[1]-10) > 0.01 {
		t.Fatalf("last point %v, want the maximum at x = count", last)
	}
}

// Sweep axes are ordered by what their values mean: sizes, durations and
// numbers by their magnitude; other values as given.
func TestSweepAxisOrder(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"1280M", "1536M", "256M", "2G", "512M"}, []string{"256M", "512M", "1280M", "1536M", "2G"}},
		{[]string{"1m", "10s", "90s"}, []string{"10s", "1m", "90s"}},
		{[]string{"16", "2", "8"}, []string{"2", "8", "16"}},
		{[]string{"seqwr", "seqrd", "rndrd"}, []string{"seqwr", "seqrd", "rndrd"}},
	} {
		got := slices.Clone(c.in)
		sortValues(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%v sorted to %v, want %v", c.in, got, c.want)
		}
	}
}

// The percentile curve read in one pass is the one read a point at a time.
func TestPercentilePointsInOnePass(t *testing.T) {
	h := hdr.New(1, 3_600_000_000_000, 3)
	for i := range 200_000 {
		h.RecordValue(int64(1000 + (i*7919)%5_000_000 + (i%1000)*(i%1000)*50))
	}
	enc, err := result.EncodeHistogram("event", "latency", h)
	if err != nil {
		t.Fatal(err)
	}
	got, err := percentilePoints(enc)
	if err != nil {
		t.Fatal(err)
	}
	var want [][2]float64
	for k := 0; ; k++ {
		x := math.Pow(10, float64(k)/20)
		if x >= float64(h.TotalCount()) {
			break
		}
		if v := float64(h.ValueAtQuantile((1-1/x)*100)) / 1e6; v > 0 {
			want = append(want, [2]float64{x, v})
		}
	}
	want = append(want, [2]float64{float64(h.TotalCount()), float64(h.Max()) / 1e6})
	if !slices.Equal(got, want) || len(got) < 100 {
		t.Errorf("%d points, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
}

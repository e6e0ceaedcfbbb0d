package runner

import (
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
)

// Workers are locked to their threads only when their connections wait in
// them, and not when there are many more connections than cores.
func TestLocksThreads(t *testing.T) {
	few, many := 8, fewPerCPU*runtime.NumCPU()+1
	for _, c := range []struct {
		holds   bool
		threads int
		want    bool
	}{
		{true, few, true},
		{true, many, false},
		{false, few, false},
	} {
		if got := locksThreads(c.holds, c.threads); got != c.want {
			t.Errorf("holding %v, %d threads: locked %v, want %v", c.holds, c.threads, got, c.want)
		}
	}
}

// A run on many more processors than cores collects garbage sooner, and
// puts the collector's target back after it; a GOGC the user set is kept.
func TestCollectSooner(t *testing.T) {
	t.Setenv("GOGC", "") // as if the user had not set it
	gogc := GCPercent
	before := gogc()
	few, many := runtime.NumCPU()+2, fewPerCPU*runtime.NumCPU()+3
	restore := collectSooner(few)
	if got := gogc(); got != before {
		t.Errorf("%d processors: GOGC %d, want %d as it was", few, got, before)
	}
	restore()
	restore = collectSooner(many)
	if got := gogc(); got != manyProcsGCPercent {
		t.Errorf("%d processors: GOGC %d, want %d", many, got, manyProcsGCPercent)
	}
	restore()
	if got := gogc(); got != before {
		t.Errorf("after the run GOGC is %d, want %d back", got, before)
	}
	t.Setenv("GOGC", "100")
	restore = collectSooner(many)
	if got := gogc(); got != before {
		t.Errorf("GOGC set by the user: the run changed the target to %d", got)
	}
	restore()
}

// GCPercent reads the collector's target (GOGC); the runner's tests check
// that a run sets it and puts it back.
func GCPercent() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// Loops take the allowed CPUs in turn from the one the run started on,
// wrapping round when there are more loops than CPUs.
func TestSpreadFrom(t *testing.T) {
	for _, c := range []struct {
		allowed []int
		here, n int
		want    []int
	}{
		{[]int{0, 1}, 0, 2, []int{0, 1}},
		{[]int{0, 1}, 1, 2, []int{1, 0}},
		{[]int{0, 1, 2, 3}, 2, 3, []int{2, 3, 0}},
		{[]int{0, 1, 2, 3}, 3, 5, []int{3, 0, 1, 2, 3}},
		{[]int{4, 6, 9}, 6, 2, []int{6, 9}},
		{[]int{4, 6, 9}, 5, 2, []int{4, 6}}, // here not allowed: from the first
		{[]int{4, 6, 9}, -1, 1, []int{4}},
	} {
		if got := spreadFrom(c.allowed, c.here, c.n); !slices.Equal(got, c.want) {
			t.Errorf("spreadFrom(%v, %d, %d) = %v, want %v", c.allowed, c.here, c.n, got, c.want)
		}
	}
}

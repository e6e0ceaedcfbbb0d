package runner

import (
	"runtime"
	"testing"
)

// Workers are locked to their threads only when their connections wait in
// them, and not when there are many more connections than cores.
func TestLocksThreads(t *testing.T) {
	few, many := 8, lockedPerCPU*runtime.NumCPU()+1
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

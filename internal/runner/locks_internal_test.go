package runner

import (
	"runtime"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
)

type holding struct{ target.Target }

func (holding) HoldsProcessor() bool { return true }

// Workers are locked to their threads only when their connections wait in
// them, and not when there are many more connections than cores.
func TestLocksThreads(t *testing.T) {
	few, many := 8, lockedPerCPU*runtime.NumCPU()+1
	for _, c := range []struct {
		tg      target.Target
		threads int
		want    bool
	}{
		{holding{}, few, true},
		{holding{}, many, false},
		{nil, few, false},
	} {
		if got := locksThreads(c.tg, c.threads); got != c.want {
			t.Errorf("holding %v, %d threads: locked %v, want %v", c.tg != nil, c.threads, got, c.want)
		}
	}
}

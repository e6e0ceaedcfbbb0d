package target

import (
	"strings"
	"sync"
	"testing"
)

// TestActivityShowsTheLastStatement: Current is the text last Set, for
// statements of one length that differ late and for a text built anew
// equal to the last, while another goroutine reads it (run with -race).
func TestActivityShowsTheLastStatement(t *testing.T) {
	var a Activity
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = a.Current()
			}
		}
	})
	one, two := "SELECT c FROM sbtest1 WHERE id=?", "SELECT c FROM sbtest2 WHERE id=?"
	for i := range 1000 {
		want := one
		if i%3 == 1 {
			want = two
		} else if i%3 == 2 {
			want = strings.Clone(one)
		}
		a.Set(want)
		if got := a.Current(); got != want {
			close(stop)
			t.Fatalf("Set %q: Current = %q", want, got)
		}
	}
	close(stop)
	wg.Wait()
}

package target

import (
	"strings"
	"sync"
	"testing"
)

// TestActivityShowsTheLastStatement: Current is the text last Set or
// SetStmt, for statements of one length that differ late, for a text
// built anew equal to the last, and for a prepared statement's text after
// another's or after a Set, while another goroutine reads it (run with
// -race).
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
	prepared := []string{"SELECT c FROM sbtest3 WHERE id=?", "SELECT c FROM sbtest4 WHERE id=?"}
	for i := range 1200 {
		var want string
		switch i % 6 {
		case 0, 3:
			want = one
			a.Set(want)
		case 1:
			want = two
			a.Set(want)
		case 2:
			want = strings.Clone(one)
			a.Set(want)
		case 4, 5:
			// A prepared statement after a Set, then another.
			p := &prepared[(i/6)%2]
			if i%6 == 5 {
				p = &prepared[1-(i/6)%2]
			}
			want = *p
			a.SetStmt(p)
		}
		if got := a.Current(); got != want {
			close(stop)
			t.Fatalf("step %d: Current = %q, want %q", i, got, want)
		}
	}
	close(stop)
	wg.Wait()
}

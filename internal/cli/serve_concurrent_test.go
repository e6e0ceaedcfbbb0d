package cli_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// A result page is served to many readers at once: the reproduction
// script it shows reads this dbmark's workloads, which once walked the
// command tree's shared flag sets from every request and killed the
// server ("concurrent map read and map write") under load.
func TestResultPagesServedConcurrently(t *testing.T) {
	home(t)
	ctx := context.Background()
	site, _ := serve(t)
	for _, w := range []string{"oltp_point_select", "oltp_read_only"} {
		if o := dbmark(t, ctx, "run", w, "--events", "50", "--time", "0", "--table-size", "100"); o.code != 0 {
			t.Fatalf("run %s: exit %d: %s", w, o.code, o.stderr)
		}
	}
	var links []string
	for _, id := range []string{"1", "2"} {
		o := dbmark(t, ctx, "submit", id, "--server", site)
		if o.code != 0 {
			t.Fatalf("submit: exit %d: %s", o.code, o.stderr)
		}
		links = append(links, strings.TrimSpace(o.stdout))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				res, err := http.Get(links[(g+i)%len(links)])
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					errs <- &statusError{res.Status}
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

type statusError struct{ status string }

func (e *statusError) Error() string { return "result page: " + e.status }

package site

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// DefaultQueueWait is how long a request waits for a slot before it is
// told the site is busy.
const DefaultQueueWait = 500 * time.Millisecond

// admission bounds the requests the server works on at once. Past the
// machine's capacity, more requests at once only take more memory and make
// every answer slower; with a bound, the requests taken in are answered in
// bounded time and memory, and the others are told at once to come back.
type admission struct {
	slots chan struct{}
	wait  time.Duration
}

func newAdmission(n int, wait time.Duration) *admission {
	return &admission{slots: make(chan struct{}, n), wait: wait}
}

// acquire takes a slot, waiting at most a.wait and not past ctx; a caller
// that gets one calls release when done.
func (a *admission) acquire(ctx context.Context) bool {
	select {
	case a.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(a.wait)
	defer t.Stop()
	select {
	case a.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (a *admission) release() { <-a.slots }

// admitted runs next in a slot, or answers that the site is busy.
// Moderation, the static files and the OpenAPI document are not wrapped:
// they are cheap, and an operator must reach the site under load.
func (s *Server) admitted(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.adm.acquire(r.Context()) {
			s.busy(w, r)
			return
		}
		defer s.adm.release()
		next(w, r)
	}
}

// busy answers 503 with Retry-After, in JSON under /api/ and as a page
// elsewhere.
func (s *Server) busy(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", "1")
	if strings.HasPrefix(r.URL.Path, "/api/") {
		s.apiError(w, r, &Error{Status: http.StatusServiceUnavailable, Msg: "the site is busy: try again after Retry-After seconds"})
		return
	}
	s.pageError(w, r, http.StatusServiceUnavailable, "Busy", "The site is busy. Try again in a moment.")
}

package report

import (
	"fmt"
	"io"
	"time"

	"github.com/dbmark/dbmark/internal/result"
)

// hosts writes where a run's window was set (run --start-at, with its
// clock's offset) and, for a merged result, the hosts it was merged from.
func hosts(w io.Writer, r *result.Result) {
	if r.ClientID != "" || r.StartAt != nil {
		fmt.Fprint(w, "client:")
		if r.ClientID != "" {
			fmt.Fprintf(w, " %s", r.ClientID)
		}
		if st := r.StartAt; st != nil {
			fmt.Fprintf(w, "  measured from %s%s", st.At.UTC().Format(time.RFC3339Nano), startNote(st))
		}
		fmt.Fprintln(w)
	}
	if len(r.Clients) == 0 {
		return
	}
	fmt.Fprintf(w, "merged from %d hosts (dbmark merge):\n", len(r.Clients))
	for _, c := range r.Clients {
		fmt.Fprintf(w, "    %-16s %d thread(s), %.2f %s, %d events from %s over %.2fs, %s", c.ID, c.Threads, c.Headline, c.HeadlineUnit,
			c.Events, c.WindowStart.UTC().Format(time.RFC3339Nano), c.DurationS, c.Status)
		if c.StartAt != nil {
			fmt.Fprint(w, startNote(c.StartAt))
		}
		fmt.Fprintln(w)
	}
}

// startNote is how late a --start-at window began and the clock's offset.
func startNote(st *result.StartAt) string {
	s := ""
	if st.LateS > 0 {
		s += fmt.Sprintf(", %.3fs late", st.LateS)
	}
	if o := st.ClockOffsetMS; o != nil {
		s += fmt.Sprintf(", clock %+.3f ms ± %.3f off the server's", *o, st.ClockUncertaintyMS)
	}
	return s
}

package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/target"
)

// startFlags are run's options for runs on several hosts that measure the
// same window (docs/scale-out.md): --start-at and --client-id.
type startFlags struct {
	startAt  string
	clientID string
	at       time.Time // --start-at resolved, zero when not given
	offset   *target.ClockOffset
}

func (s *startFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&s.startAt, "start-at", "", "connect, prepare and warm up, then start measuring at this wall-clock time (RFC 3339, or +30s from now), so several hosts measure the same window")
	fs.StringVar(&s.clientID, "client-id", "", "this host's name in the result, and in a merge of several hosts' results (dbmark merge)")
}

// resolve reads --start-at against now: a time ahead, given as RFC 3339 or
// as +DURATION.
func (s *startFlags) resolve(now time.Time, sweep bool) error {
	if strings.ContainsAny(s.clientID, "/\n") {
		return fmt.Errorf("--client-id %q: a name without '/' or line breaks", s.clientID)
	}
	if s.startAt == "" {
		return nil
	}
	if sweep {
		return fmt.Errorf("--start-at %s: a sweep runs one cell after another; start a single run at a time", s.startAt)
	}
	if d, ok := strings.CutPrefix(s.startAt, "+"); ok {
		dur, err := time.ParseDuration(d)
		if err != nil || dur <= 0 {
			return fmt.Errorf("--start-at %s: not a duration ahead (+30s, +2m)", s.startAt)
		}
		s.at = now.Add(dur)
		return nil
	}
	at, err := time.Parse(time.RFC3339Nano, s.startAt)
	if err != nil {
		return fmt.Errorf("--start-at %s: not an RFC 3339 time (2026-01-02T15:04:05Z) or +DURATION (+30s)", s.startAt)
	}
	if !at.After(now) {
		return fmt.Errorf("--start-at %s is %s in the past: give a time ahead, or +30s", s.startAt, now.Sub(at).Round(time.Millisecond))
	}
	s.at = at
	return nil
}

// offsetWarnFraction is the share of the warm-up a host's clock may be
// off the server's before the run warns: hosts' windows are aligned by
// their own clocks, and the warm-up is the slack they have.
const offsetWarnFraction = 0.1

// offsetWarnFloor is the offset that warns when no --warm-up is given.
const offsetWarnFloor = 100 * time.Millisecond

// ready measures the clock offset against the server, where it has a
// clock, sets the runner's start and says when measuring starts. A
// failure to read the server's clock is not fatal: the run goes on,
// recording none.
func (s *startFlags) ready(ctx context.Context, tg target.Target, cfg *runner.Config, warmup time.Duration, out, log io.Writer) {
	if s.at.IsZero() {
		return
	}
	cfg.StartAt = s.at
	off, ok, err := target.MeasureClockOffset(ctx, tg, 5)
	switch {
	case err != nil:
		fmt.Fprintf(log, "warning: %v (the run goes on without it)\n", err)
	case ok:
		s.offset = &off
	}
	fmt.Fprintf(out, "Measuring from %s (in %s)\n", s.at.UTC().Format(time.RFC3339Nano), time.Until(s.at).Round(time.Millisecond))
}

// record adds the host's name, its start and its clock's offset to res.
func (s *startFlags) record(res *result.Result, warmup time.Duration) {
	res.ClientID = s.clientID
	if s.at.IsZero() {
		return
	}
	st := &result.StartAt{At: s.at.UTC()}
	// The warm-up the runner gave: until the instant, not --warmup.
	res.Run.WarmupS = max(s.at.Sub(res.StartedAt), 0).Seconds()
	if late := res.StartedAt.Sub(s.at); late > 0 {
		st.LateS = late.Seconds()
		res.Summary.Warnings = append(res.Summary.Warnings, fmt.Sprintf(
			"the clients were ready %s after --start-at: this host's measured window began late, and a merge with other hosts covers less of it", late.Round(time.Millisecond)))
	} else if got := -late; warmup > 0 && got < warmup {
		res.Summary.Warnings = append(res.Summary.Warnings, fmt.Sprintf(
			"the clients were ready %s before --start-at, less than the --warmup of %s: the warm-up was that much shorter", got.Round(time.Millisecond), warmup))
	}
	if o := s.offset; o != nil {
		ms := float64(o.Offset) / 1e6
		st.ClockOffsetMS = &ms
		st.ClockUncertaintyMS = float64(o.Uncertainty) / 1e6
		limit := offsetWarnFloor
		if warmup > 0 {
			limit = time.Duration(offsetWarnFraction * float64(warmup))
		}
		if o.Offset.Abs() > limit {
			res.Summary.Warnings = append(res.Summary.Warnings, fmt.Sprintf(
				"this host's clock is %s off the server's (more than %s): hosts started with --start-at measure windows that far apart; synchronize the clocks (NTP, chrony)",
				o.Offset.Round(time.Microsecond), limit))
		}
	}
	res.StartAt = st
}

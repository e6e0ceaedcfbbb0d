package target

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// ServerClock is an optional Target capability: a server with a clock of
// its own (not an embedded engine) names the SQL text whose one value is
// its wall clock now, in Unix seconds with a fraction.
type ServerClock interface {
	ClockQuery() string
}

// ClockOffset is this host's clock minus the server's, measured on a
// connection of its own over rounds round trips: the one with the
// shortest trip is kept, the server's reading taken as made at its
// middle, so the offset is known within Uncertainty (half that trip).
type ClockOffset struct {
	Offset      time.Duration
	Uncertainty time.Duration
}

// MeasureClockOffset measures tg's clock offset; ok is false when tg has
// no server clock.
func MeasureClockOffset(ctx context.Context, tg Target, rounds int) (ClockOffset, bool, error) {
	sc, ok := tg.(ServerClock)
	if !ok {
		return ClockOffset{}, false, nil
	}
	conn, err := tg.Connect(ctx)
	if err != nil {
		return ClockOffset{}, true, fmt.Errorf("clock offset: %w", err)
	}
	defer conn.Close()
	best := ClockOffset{Uncertainty: -1}
	for range max(rounds, 1) {
		t0 := time.Now()
		v, found, err := conn.QueryRow(ctx, sc.ClockQuery())
		t1 := time.Now()
		if err != nil {
			return ClockOffset{}, true, fmt.Errorf("clock offset: reading the server's clock: %w", err)
		}
		secs, perr := strconv.ParseFloat(v, 64)
		if !found || perr != nil {
			return ClockOffset{}, true, fmt.Errorf("clock offset: the server's clock read %q, not Unix seconds", v)
		}
		trip := t1.Sub(t0)
		if best.Uncertainty >= 0 && trip/2 >= best.Uncertainty {
			continue
		}
		server := time.Unix(0, int64(secs*1e9))
		best = ClockOffset{Offset: t0.Add(trip / 2).Sub(server), Uncertainty: trip / 2}
	}
	return best, true, nil
}

package target

import (
	"context"
	"errors"

	"github.com/dbmark/dbmark/internal/result"
)

// Facter is an optional Target capability: which settings differ from the
// engine's defaults, the sizes that matter, and the size of the data.
type Facter interface {
	Facts(ctx context.Context) (*result.EngineFacts, error)
}

// CounterSource is an optional Target capability: the engine's status
// counters, read during a run by a sampler on a connection of its own.
type CounterSource interface {
	OpenCounters(ctx context.Context) (CounterReader, error)
}

// ErrCountersBusy is a CounterReader's answer when the counters could not
// all be read without waiting on the clients: no sample this time, and the
// next one covers both intervals.
var ErrCountersBusy = errors.New("the counters could not all be read without waiting on a client")

// CounterReader reads the engine's counters. It is used by one goroutine.
type CounterReader interface {
	ReadCounters(ctx context.Context) ([]Counter, error)
	Close() error
}

// Counter is one engine counter at one moment. A cumulative counter (the
// default) becomes a rate over each sampling interval; a gauge is kept as
// read.
type Counter struct {
	Name  string // short, engine-neutral where one exists: "dirty_pages", "rows_read"
	Unit  string // of the gauge, or of what the rate counts ("pages", "bytes")
	Value float64
	Gauge bool
}

// Package sqlclient opens a run's clients on a database target for the
// SQL workloads: each client is a connection of its own with a worker on
// it. It owns what the runner must not know: connecting, the ROLLBACK that
// ends a failed try, and what the engine's errors mean.
package sqlclient

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/dbmark/dbmark/internal/errclass"
	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// Clients opens clients on a target, or spread over several servers of one
// engine (a cluster's SQL nodes), each with a worker from NewWorker.
type Clients struct {
	tgs       []target.Target
	newWorker func(ctx context.Context, s workload.Seat) (workload.Worker, error)
}

var _ workload.Clients = (*Clients)(nil)

// New returns the clients of load on tg and, when more are given, spread
// over tg and them round-robin: client i connects to server i mod the
// number of servers (workload.ServerOf), its reconnects too, so each
// server's figures are its own clients'. load must have a NewWorker. When
// the connections to any of the servers hold their threads while they wait
// (target.ThreadHolder), New marks load SyscallBound, for as long as some
// hold them (Load.Held).
func New(tg target.Target, load *workload.Load, more ...target.Target) (*Clients, error) {
	if load.NewWorker == nil {
		return nil, fmt.Errorf("the load has no worker to run on a database connection")
	}
	tgs := append([]target.Target{tg}, more...)
	var held []target.ThreadHolder
	for _, t := range tgs {
		if h, ok := t.(target.ThreadHolder); ok && h.HoldsThreads() {
			held = append(held, h)
		}
	}
	if len(held) > 0 {
		load.SyscallBound = true // each connection keeps its thread while it waits
		load.Held = func() bool {
			for _, h := range held {
				if h.HoldsThreads() {
					return true
				}
			}
			return false
		}
	}
	return &Clients{tgs: tgs, newWorker: load.NewWorker}, nil
}

// Open connects client id and sets up its worker on the connection.
func (c *Clients) Open(ctx context.Context, id int, h *metrics.Handle, clock *workload.Clock) (workload.Worker, workload.Session, error) {
	start := time.Now()
	conn, err := c.tgs[workload.ServerOf(id, len(c.tgs))].Connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	w, err := c.newWorker(ctx, workload.Seat{ID: id, Conn: conn, H: h, Clock: clock, Dialed: time.Since(start)})
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return w, session{conn}, nil
}

// Classify is the engine's own classification (the servers are all of
// one engine).
func (c *Clients) Classify(err error) errclass.Info { return c.tgs[0].Classify(err) }

// session is a client's connection as the runner sees it.
type session struct{ conn target.Conn }

var _ workload.Session = session{}

// Reset rolls back what a failed try left open. With nothing to roll back
// the engines return an error or a warning, neither of which matters; an
// engine that knows no transaction is open is sent nothing (as pgbench
// does, whose user would see PostgreSQL's warning).
func (s session) Reset(ctx context.Context) {
	if i, ok := s.conn.(target.Idler); ok && i.Idle() {
		return
	}
	_ = s.conn.Exec(ctx, "ROLLBACK")
}

// Waiting is the statement the connection runs, where the engine says.
func (s session) Waiting() string {
	if r, ok := s.conn.(target.Reporter); ok {
		return r.Current()
	}
	return ""
}

func (s session) Close() error { return s.conn.Close() }

// For returns the clients of load: its own where it opens them itself
// (file I/O), else clients on the connections of tg and more (New).
func For(tg target.Target, load *workload.Load, more ...target.Target) (workload.Clients, error) {
	if load.Clients != nil {
		return load.Clients, nil
	}
	return New(tg, load, more...)
}

// Run drives load on tg (runner.Run with the clients For gives).
func Run(ctx context.Context, cfg runner.Config, tg target.Target, load *workload.Load, sink runner.Sink, log *slog.Logger) *runner.Outcome {
	src, err := For(tg, load)
	if err != nil {
		now := time.Now()
		return &runner.Outcome{Status: result.StatusFailed, Err: err, StartedAt: now, EndedAt: now}
	}
	return runner.Run(ctx, cfg, src, load, sink, log)
}

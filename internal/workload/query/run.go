package query

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// The operations recorded: each run of a query is an event, and making
// the next run cold (dropping caches, restarting the server) is a step
// of its own, timed apart.
const (
	opQuery metrics.Op = iota
	opCold
)

// run is one suite's shared state. Each stream (worker id) reads and
// writes only its own entries of pos, coldAt and spent, and only its own
// runs; Finish reads them all after the runner has joined every worker.
type run struct {
	opt     Options
	tg      target.Target
	cold    coldSteps
	qs      []Query
	plans   []string
	orders  [][]int // per stream: the queries' order
	pos     []int   // per stream: the next run, query (in order) times iterations plus iteration
	coldAt  []int   // per stream: pos+1 of the run last made cold
	spent   []time.Duration
	runs    [][]result.QueryRun // per query: stream*iterations+iteration-1
	starts  [][]time.Time       // the runs' start, parallel to runs
	dropped bool                // the OS page cache was dropped for cold runs
}

// Load readies the suite of qs (those --only keeps) on env's target: it
// opens the streams' connections once, so a count the server refuses is
// refused before the run, and explains each query with --explain.
func (s *Suite) Load(ctx context.Context, env workload.Env, qs []Query) (*workload.Load, error) {
	qs, err := s.only(qs)
	if err != nil {
		return nil, err
	}
	if len(qs) == 0 {
		return nil, errors.New("the suite has no query to run")
	}
	o := s.opt
	r := &run{opt: o, tg: env.Target, cold: s.cold, qs: qs, orders: make([][]int, o.Streams), pos: make([]int, o.Streams),
		coldAt: make([]int, o.Streams), spent: make([]time.Duration, o.Streams),
		runs: make([][]result.QueryRun, len(qs)), starts: make([][]time.Time, len(qs))}
	for i := range qs {
		r.runs[i] = make([]result.QueryRun, o.Streams*o.Iterations)
		r.starts[i] = make([]time.Time, o.Streams*o.Iterations)
		for j := range r.runs[i] {
			r.runs[i][j] = result.QueryRun{Stream: j / o.Iterations, Iteration: j%o.Iterations + 1, Kind: result.QueryNotRun}
		}
	}
	for st := range r.orders {
		r.orders[st] = make([]int, len(qs))
		for i := range qs {
			r.orders[st][i] = i
		}
		if o.Streams > 1 {
			// TPC-H's throughput test: every stream its own order.
			rng := rand.New(rand.NewPCG(env.Seed, uint64(st)))
			rng.Shuffle(len(qs), func(i, j int) { r.orders[st][i], r.orders[st][j] = r.orders[st][j], r.orders[st][i] })
		}
	}
	if err := r.openStreams(ctx); err != nil {
		return nil, err
	}
	return &workload.Load{
		Ops:       []metrics.OpSpec{{Name: "query", Kind: metrics.Event}, {Name: "make_cold", Kind: metrics.Meta}},
		LatencyOf: []metrics.Op{opQuery},
		NewWorker: r.newWorker,
		Finish:    r.finish,
	}, nil
}

// openStreams opens as many connections as there are streams, at once,
// and closes them: a server whose connection limit is lower refuses here
// in one line, before anything is measured. With --explain the first
// connection explains the queries.
func (r *run) openStreams(ctx context.Context) error {
	conns := make([]target.Conn, 0, r.opt.Streams)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < r.opt.Streams; i++ {
		c, err := r.tg.Connect(ctx)
		if err != nil {
			if i == 0 {
				return err
			}
			return fmt.Errorf("--streams %d: the server refused connection %d: %w", r.opt.Streams, i+1, err)
		}
		conns = append(conns, c)
	}
	if r.opt.Explain {
		r.plans = make([]string, len(r.qs))
		for i, q := range r.qs {
			r.plans[i] = explain(ctx, conns[0], r.tg.Dialect(), q.SQL)
		}
	}
	return nil
}

// planBytes bounds a plan kept in the result.
const planBytes = 64 << 10

// explain returns the engine's plan for sql as text, one row a line
// (columns separated by tabs, under a header when there are several), or
// why there is none.
func explain(ctx context.Context, c target.Conn, d target.Dialect, sql string) string {
	var b strings.Builder
	tl, err := c.Query(ctx, d.Explain(sql), target.QueryOptions{Each: func(vals [][]byte) error {
		if b.Len() > planBytes {
			return nil
		}
		for i, v := range vals {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.Write(v)
		}
		b.WriteByte('\n')
		return nil
	}})
	if err != nil {
		return "no plan: " + oneLine(err.Error())
	}
	plan := b.String()
	if len(tl.Columns) > 1 {
		plan = strings.Join(tl.Columns, "\t") + "\n" + plan
	}
	return strings.TrimRight(plan, "\n")
}

// oneLine joins a message's lines.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// worker is one stream: it runs the suite's queries in its order, each
// --iterations times in a row.
type worker struct {
	r     *run
	id    int
	conn  target.Conn
	own   target.Conn // the connection made after a restart, the worker's to close
	h     *metrics.Handle
	clock *workload.Clock
}

func (r *run) newWorker(ctx context.Context, s workload.Seat) (workload.Worker, error) {
	w := &worker{r: r, id: s.ID, conn: s.Conn, h: s.H, clock: s.Clock}
	if err := w.setTimeout(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *worker) setTimeout(ctx context.Context) error {
	if d := w.r.opt.QueryTimeout; d > 0 {
		if err := w.conn.SetQueryTimeout(ctx, d); err != nil {
			return fmt.Errorf("--query-timeout %v: %w", d, err)
		}
	}
	return nil
}

// Event runs the stream's next run of a query, or first makes it cold.
func (w *worker) Event(ctx context.Context, _ bool) (metrics.Op, error) {
	r, id := w.r, w.id
	p := r.pos[id]
	iters := r.opt.Iterations
	if p >= len(r.qs)*iters {
		return opQuery, workload.ErrWorkerDone
	}
	if r.opt.Cold && p%iters == 0 && r.coldAt[id] != p+1 {
		r.coldAt[id] = p + 1
		return opCold, w.makeCold(ctx)
	}
	qi, it := r.orders[id][p/iters], p%iters
	q := &r.qs[qi]
	slot := id*iters + it
	start := w.clock.Read()
	tl, err := w.conn.Query(ctx, q.SQL, target.QueryOptions{})
	end := w.clock.Read()
	w.clock.Now = end
	if err != nil && ctx.Err() != nil {
		return opQuery, err // the run is ending: this run stays not run
	}
	r.pos[id]++
	r.starts[qi][slot] = w.clock.Time(start)
	run := &r.runs[qi][slot]
	took := end - start
	*run = result.QueryRun{Stream: id, Iteration: it + 1, S: took.Seconds(), Rows: tl.Rows, Bytes: tl.Bytes}
	switch {
	case err != nil:
		info := r.tg.Classify(err)
		run.Kind, run.Error = result.QueryError, oneLine(err.Error())
		if d := r.opt.QueryTimeout; d > 0 && took >= d {
			run.Kind = result.QueryTimeout
		}
		w.h.Error(run.Kind, info.Code)
		if info.Class == target.Reconnect {
			return opQuery, err // the runner connects again; the stream goes on with its next run
		}
		if ts, ok := w.conn.(target.TxStater); ok && ts.InTransaction() {
			_ = w.conn.Exec(ctx, "ROLLBACK") // a failed statement in a transaction the file opened
		}
	case q.Check != nil:
		if cerr := q.Check(answerOf(tl)); cerr != nil {
			run.Kind, run.Error = result.QueryWrongAnswer, oneLine(cerr.Error())
			w.h.Error(run.Kind, "check")
		}
	}
	return opQuery, nil
}

// makeCold empties the caches before a query's first iteration: the OS
// page cache where it can, and the server's by restarting it, after which
// the stream connects again once it answers.
func (w *worker) makeCold(ctx context.Context) error {
	r := w.r
	start := time.Now()
	if r.pos[w.id] > 0 {
		// Within the suite's span (first start to last end): left out of
		// its time. The step before the stream's first run precedes the
		// span and is not in it to take out.
		defer func() { r.spent[w.id] += time.Since(start) }()
	}
	if len(r.opt.RestartCmd) == 1 {
		if err := r.cold.restart(ctx, r.opt.RestartCmd[0], r.tg); err != nil {
			return err
		}
		c, err := r.tg.Connect(ctx)
		if err != nil {
			return fmt.Errorf("connect after --restart-cmd: %w", err)
		}
		if w.own != nil {
			w.own.Close()
		}
		w.own, w.conn = c, c
		if err := w.setTimeout(ctx); err != nil {
			return err
		}
	}
	dropped, err := r.cold.dropCache()
	if err != nil {
		return err
	}
	r.dropped = r.dropped || dropped
	return nil
}

func (w *worker) Close() error {
	if w.own != nil {
		return w.own.Close()
	}
	return nil
}

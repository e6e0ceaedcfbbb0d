package iibench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dbmark/dbmark/internal/errclass"
	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/randgen"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// The operations: one event per insert transaction and per query, so each
// role has its own rate and histogram, and one operation per statement.
const (
	opInsertTrx metrics.Op = iota
	opQuery
	opInsert
	opDelete
	opBegin
	opCommit
	opQueryPK // then one per secondary index, in index order
)

func opSpecs(idx []index) []metrics.OpSpec {
	ops := []metrics.OpSpec{
		{Name: "insert_trx", Kind: metrics.Event},
		{Name: "query", Kind: metrics.Event},
		{Name: "insert", Kind: metrics.Write},
		{Name: "delete", Kind: metrics.Write},
		{Name: "begin", Kind: metrics.Other},
		{Name: "commit", Kind: metrics.Other},
		{Name: "query_pk", Kind: metrics.Read},
	}
	for _, ix := range idx {
		ops = append(ops, metrics.OpSpec{Name: "query_" + ix.name, Kind: metrics.Read})
	}
	return ops
}

// slot is one inserter's counters, read by the ticker. Padding keeps each
// on its own cache line, so inserters never share one.
type slot struct {
	inserted atomic.Int64
	deleted  atomic.Int64
	_        [48]byte
}

// shared is the state common to the workers.
type shared struct {
	o        *Options
	env      workload.Env
	d        target.Dialect
	idx      []index // the secondary indexes the queries use
	rowsTrx  int     // rows per transaction
	trx      bool    // BEGIN/COMMIT around each transaction's statements
	begin    string
	head     string // INSERT INTO t (...) VALUES
	queryLim string // " LIMIT n"

	slots  []slot
	quota  []int64 // rows per inserter; 0: no limit
	active atomic.Int64
	limit  bool // --max-rows is in force

	resumed   bool
	startMax  int64 // highest transactionid when the run started
	startRows int64 // rows in the table then
	delNext   atomic.Int64

	dataBytes, indexBytes atomic.Int64
	stopSizer             context.CancelFunc
	sizerDone             chan struct{}

	acc rowsAcc
	// check counts the primary-key queries that must find a row (nil
	// under --delete-per-insert, whose deletes may reach any row).
	check *workload.ReadCheck
}

// totals sums the inserters' counters.
func (s *shared) totals() (ins, del int64) {
	for i := range s.slots {
		ins += s.slots[i].inserted.Load()
		del += s.slots[i].deleted.Load()
	}
	return ins, del
}

func (s *shared) tableRows() int64 {
	ins, del := s.totals()
	return s.startRows + ins - del
}

// insertsDone says every inserter has reached its share of --max-rows.
func (s *shared) insertsDone() bool { return s.limit && s.active.Load() == 0 }

// Load sets the table up and builds the workers.
func (w *Workload) Load(ctx context.Context, env workload.Env) (*workload.Load, error) {
	if err := w.Validate(env.Target); err != nil {
		return nil, err
	}
	o := &w.opt
	s := &shared{o: o, env: env, d: env.Target.Dialect(), idx: indexes(o.IndexStyle)[:o.SecondaryIndexes]}
	s.rowsTrx = o.RowsPerInsert
	if o.RowsPerCommit > 0 {
		s.rowsTrx = o.RowsPerCommit
	}
	s.trx = s.rowsTrx > o.RowsPerInsert || o.DeletePerInsert
	s.begin = env.Target.Dialect().Begin(true)
	s.head = "INSERT INTO " + o.Table + " (dateandtime, cashregisterid, customerid, productid, price, data) VALUES "
	s.queryLim = " LIMIT " + strconv.Itoa(o.RowsPerQuery)

	c, err := env.Target.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.setup(ctx, c); err != nil {
		c.Close()
		return nil, err
	}
	s.acc.init(s)
	if !o.DeletePerInsert && o.QueryThreads > 0 {
		s.check = workload.NewReadCheck(env.Threads, []string{"query_pk"},
			"rows were deleted under the run; run iibench again with --recreate", false)
	}

	// Share --max-rows exactly between the inserters, as the runner does
	// --events: no shared counter on the hot path.
	s.slots = make([]slot, o.Inserters)
	s.quota = make([]int64, o.Inserters)
	if o.MaxRows > 0 {
		left := int64(o.MaxRows) - s.startMax
		if left <= 0 {
			c.Close()
			return nil, fmt.Errorf("table %s already holds %d rows, --max-rows %d is reached (raise --max-rows, or --recreate)", o.Table, s.startMax, o.MaxRows)
		}
		n := int64(o.Inserters)
		for i := range s.quota {
			s.quota[i] = left / n
			if int64(i) < left%n {
				s.quota[i]++
			}
			if s.quota[i] > 0 {
				s.active.Add(1)
			}
		}
		s.limit = true
	}

	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stopSizer, s.sizerDone = cancel, make(chan struct{})
	go s.sizer(sctx, c)

	load := &workload.Load{
		Ops: opSpecs(s.idx),
		// The headline is rows inserted: the inserts' latency goes with it,
		// not the query threads' (far more, far shorter).
		LatencyOf: []metrics.Op{opInsertTrx},
		NewWorker: func(ctx context.Context, st workload.Seat) (workload.Worker, error) {
			if st.ID < o.Inserters {
				return s.newInserter(st.ID, st.Conn, st.H), nil
			}
			return s.newQuerier(st.ID, st.Conn, st.H), nil
		},
		Close: func(context.Context) error {
			s.stopSizer()
			<-s.sizerDone
			return nil
		},
		Tick: func(iv metrics.Interval, p *result.Interval) {
			s.acc.tick(iv, p)
			if s.check != nil {
				s.check.Tick(iv, p)
			}
		},
		Finish: s.finish,
	}
	if o.InsertRate > 0 && o.Inserters > 0 {
		perWorker := o.InsertRate / float64(s.rowsTrx) / float64(o.Inserters)
		load.WorkerRate = func(id int) float64 {
			if id < o.Inserters {
				return perWorker
			}
			return 0
		}
	}
	return load, nil
}

// setup creates the table, or checks the one to resume.
func (s *shared) setup(ctx context.Context, c target.Conn) error {
	o := s.o
	exists, err := tableExists(ctx, c, s.d, o.Table)
	if err != nil {
		return err
	}
	switch {
	case o.Resume && !exists:
		return fmt.Errorf("--resume: there is no table %s to continue (leave --resume out to create it)", o.Table)
	case o.Resume:
		s.resumed = true
		if s.startMax, err = target.QueryInt(ctx, c, "SELECT MAX(transactionid) FROM "+o.Table); err != nil {
			return fmt.Errorf("read the highest transactionid of %s: %w", o.Table, err)
		}
		minID, err := target.QueryInt(ctx, c, "SELECT MIN(transactionid) FROM "+o.Table)
		if err != nil {
			return fmt.Errorf("read the lowest transactionid of %s: %w", o.Table, err)
		}
		// Counting a billion rows takes minutes: the ids tell, exactly
		// so when they have no gaps.
		if s.startMax > 0 {
			s.startRows = s.startMax - minID + 1
		}
		s.delNext.Store(max(minID, 1))
		return nil
	case exists && !o.Recreate:
		return fmt.Errorf("table %s exists: add --resume to continue it, or --recreate to drop it and start afresh", o.Table)
	case exists:
		if err := c.Exec(ctx, "DROP TABLE "+o.Table); err != nil {
			return fmt.Errorf("drop table %s: %w", o.Table, err)
		}
	}
	s.delNext.Store(1)
	stmts, err := o.createTable(s.d, int64(o.MaxRows))
	if err != nil {
		return fmt.Errorf("create table %s: %w", o.Table, err)
	}
	for _, sql := range stmts {
		if err := c.Exec(ctx, sql); err != nil {
			return fmt.Errorf("create table %s: %w", o.Table, err)
		}
	}
	if !o.SecondaryAtEnd {
		for _, ix := range s.idx {
			if err := c.Exec(ctx, o.createIndex(ix)); err != nil {
				return fmt.Errorf("create index %s: %w", o.indexName(ix), err)
			}
		}
	}
	return nil
}

// sizer keeps the table's size current on its own connection, spacing its
// reads so they take at most a tenth of its time (SQLite's dbstat reads
// every page).
func (s *shared) sizer(ctx context.Context, c target.Conn) {
	defer close(s.sizerDone)
	defer c.Close()
	s.dataBytes.Store(-1)
	s.indexBytes.Store(-1)
	for {
		t0 := time.Now()
		d, i, err := s.d.TableBytes(ctx, c, s.o.Table)
		if err != nil && ctx.Err() == nil {
			s.env.Logger.Debug("reading the table's size", "err", err)
		}
		if err == nil || d >= 0 {
			s.dataBytes.Store(d)
			s.indexBytes.Store(i)
		}
		t := time.NewTimer(max(time.Second, 10*time.Since(t0)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// fullError turns a full disk into one clear line. It keeps the driver's
// message but not its code, so the runner ends the run instead of
// suggesting --ignore-errors.
func (s *shared) fullError(err error) error {
	if info := s.env.Target.Classify(err); errclass.Full(info.Code) {
		return fmt.Errorf("the disk or the table is full (%s: %v): free space or lower --max-rows; the rows inserted so far are kept", info.Code, err)
	}
	return err
}

// inserter appends rows.
type inserter struct {
	*shared
	id    int
	conn  target.Conn
	h     *metrics.Handle
	src   *randgen.Source
	saved randgen.Source
	slot  *slot
	quota int64
	del   target.Stmt
	args  []target.Value
	// delLo is the first id this transaction deletes, kept across retries.
	delLo   int64
	delLeft bool
	buf     []byte
	noise   []byte
	ts      []byte
	tsSec   int64
	last    time.Time
}

func (s *shared) newInserter(id int, conn target.Conn, h *metrics.Handle) *inserter {
	in := &inserter{shared: s, id: id, conn: conn, h: h, src: randgen.New(s.env.Seed, uint64(id)),
		slot: &s.slots[id], quota: s.quota[id], args: make([]target.Value, 2)}
	// Random padding is cut from a buffer drawn once, as iibench.py does,
	// so a row costs two draws however long its padding.
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	in.noise = make([]byte, 8192)
	for i := range in.noise {
		in.noise[i] = alnum[in.src.Uniform(0, int64(len(alnum)-1))]
	}
	return in
}

// Close releases the delete statement.
func (in *inserter) Close() error {
	if in.del != nil {
		return in.del.Close()
	}
	return nil
}

func (in *inserter) mark(op metrics.Op) {
	now := time.Now()
	in.h.Record(op, now.Sub(in.last))
	in.last = now
}

// Event inserts one transaction's rows (fewer at the end of the quota) and,
// with --delete-per-insert, deletes as many of the oldest.

var _ workload.Worker = (*inserter)(nil)

func (in *inserter) Event(ctx context.Context, retry bool) (metrics.Op, error) {
	done := in.slot.inserted.Load()
	n := int64(in.rowsTrx)
	if in.quota > 0 {
		if done >= in.quota {
			return 0, workload.ErrWorkerDone
		}
		n = min(n, in.quota-done)
	}
	if retry {
		*in.src = in.saved
	} else {
		in.saved = *in.src
	}
	in.last = time.Now()
	if in.trx {
		if err := in.conn.Exec(ctx, in.begin); err != nil {
			return 0, err
		}
		in.mark(opBegin)
	}
	for left := n; left > 0; {
		k := min(left, int64(in.o.RowsPerInsert))
		in.buf = in.rows(append(in.buf[:0], in.head...), int(k))
		if err := in.conn.Exec(ctx, string(in.buf)); err != nil {
			return 0, in.fullError(err)
		}
		in.mark(opInsert)
		left -= k
	}
	var deleted int64
	if in.o.DeletePerInsert {
		var err error
		if deleted, err = in.deleteOldest(ctx, n); err != nil {
			return 0, in.fullError(err)
		}
	}
	if in.trx {
		if err := in.conn.Exec(ctx, "COMMIT"); err != nil {
			return 0, in.fullError(err)
		}
		in.mark(opCommit)
	}
	in.delLeft = false
	in.slot.deleted.Add(deleted)
	if in.slot.inserted.Add(n) == in.quota {
		in.active.Add(-1)
	}
	return opInsertTrx, nil
}

// deleteOldest deletes the next n ids from the shared cursor: each
// transaction claims its own range, so inserters never delete the same rows.
func (in *inserter) deleteOldest(ctx context.Context, n int64) (int64, error) {
	if in.del == nil {
		st, err := in.conn.Prepare(ctx, "DELETE FROM "+in.o.Table+" WHERE transactionid >= "+
			in.env.Target.Dialect().Placeholder(1)+" AND transactionid < "+in.env.Target.Dialect().Placeholder(2))
		if err != nil {
			return 0, fmt.Errorf("prepare the delete: %w", err)
		}
		in.del = st
	}
	if !in.delLeft { // a retry deletes the range it claimed before
		in.delLo = in.delNext.Add(n) - n
		in.delLeft = true
	}
	in.args[0].SetInt(in.delLo)
	in.args[1].SetInt(in.delLo + n)
	got, err := in.del.Run(ctx, in.args)
	if err != nil {
		return 0, err
	}
	// Rows of the range that another inserter has inserted and not yet
	// committed are invisible to this delete (PostgreSQL's read
	// committed); they commit within moments, so the delete is tried
	// again for a bounded while, and each transaction deletes as many rows
	// as it inserts.
	for tries := 0; got < n && tries < 100; tries++ {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		more, err := in.del.Run(ctx, in.args)
		if err != nil {
			return 0, err
		}
		got += more
	}
	in.mark(opDelete)
	return got, nil
}

// rows appends k rows of values to b: iibench's ranges, the current time,
// and padding that is --data-random-pct random.
func (in *inserter) rows(b []byte, k int) []byte {
	o := in.o
	if now := time.Now().Unix(); now != in.tsSec {
		in.tsSec = now
		in.ts = time.Unix(now, 0).AppendFormat(in.ts[:0], "2006-01-02 15:04:05")
	}
	for r := 0; r < k; r++ {
		if r > 0 {
			b = append(b, ',')
		}
		cash := in.src.Uniform(0, int64(o.CashRegisters-1))
		prod := in.src.Uniform(0, int64(o.Products-1))
		cust := in.src.Uniform(0, int64(o.Customers-1))
		b = append(b, "('"...)
		b = append(b, in.ts...)
		b = append(b, "',"...)
		b = strconv.AppendInt(b, cash, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, cust, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, prod, 10)
		b = append(b, ',')
		b = appendPrice(b, o, in.src, cust)
		b = append(b, ",'"...)
		n := int(in.src.Uniform(int64(o.DataLengthMin), int64(o.DataLengthMax)))
		rnd := n * o.DataRandomPct / 100
		for i := 0; i < n-rnd; i++ {
			b = append(b, 'a')
		}
		if rnd > 0 {
			off := in.src.Uniform(0, int64(len(in.noise)-rnd))
			b = append(b, in.noise[off:off+int64(rnd)]...)
		}
		b = append(b, "')"...)
	}
	return b
}

// appendPrice draws a price: classic iiBench ties it to the customer,
// ((rand * max_price) + customerid) / 100 with two decimals; the newer
// benchmark draws an integer below max_price.
func appendPrice(b []byte, o *Options, src *randgen.Source, cust int64) []byte {
	if o.IndexStyle == StyleNew {
		return strconv.AppendInt(b, src.Uniform(0, int64(o.MaxPrice-1)), 10)
	}
	return strconv.AppendFloat(b, (src.Float64()*float64(o.MaxPrice)+float64(cust))/100, 'f', 2, 64)
}

// querier runs the four query shapes in turn.
type querier struct {
	*shared
	conn target.Conn
	h    *metrics.Handle
	src  *randgen.Source
	next int
	buf  []byte
	last time.Time
	// started says the table held --query-after-rows rows once.
	started bool
	found   workload.Finder
}

func (s *shared) newQuerier(id int, conn target.Conn, h *metrics.Handle) *querier {
	q := &querier{shared: s, conn: conn, h: h, src: randgen.New(s.env.Seed, uint64(id))}
	if s.check != nil {
		q.found = s.check.Client(id)
	}
	return q
}

// waitForRows waits, uncounted, until the table holds --query-after-rows
// rows (or the inserts are over), a little at a time: each wait is an
// event the querier records itself, as nothing.
func (q *querier) waitForRows(ctx context.Context) bool {
	if q.started || q.tableRows() >= int64(q.o.QueryAfterRows) || q.insertsDone() {
		q.started = true
		return false
	}
	select {
	case <-workload.Stop(ctx).Done():
	case <-time.After(10 * time.Millisecond):
	}
	return true
}

func (q *querier) Close() error { return nil }

// Event runs the next query shape: a primary-key range, then a range scan
// of each secondary index.

var _ workload.Worker = (*querier)(nil)

func (q *querier) Event(ctx context.Context, _ bool) (metrics.Op, error) {
	if q.insertsDone() {
		return 0, workload.ErrWorkerDone
	}
	if q.waitForRows(ctx) {
		return metrics.SelfRecorded, nil
	}
	shape := q.next % (1 + len(q.idx))
	q.next++
	q.last = time.Now()
	o := q.o
	b := q.buf[:0]
	// mustFind: the primary-key query starts at or below the highest id
	// committed (every committed row has an id above startMax), and no
	// delete runs, so a row lies at or above its start.
	mustFind := false
	if shape == 0 {
		hi := q.startMax + q.slotsInserted()
		lo := max(q.delNext.Load(), 1)
		mustFind = q.check != nil && hi >= lo
		b = append(b, "SELECT transactionid FROM "+o.Table+" WHERE transactionid >= "...)
		b = strconv.AppendInt(b, q.src.Uniform(lo, max(lo, hi)), 10)
		b = append(b, " ORDER BY transactionid"...)
	} else {
		ix := q.idx[shape-1]
		cols := strings.Join(ix.cols, ", ")
		b = append(b, "SELECT "+cols+" FROM "+o.Table...)
		if hint := q.d.IndexHint(o.indexName(ix)); hint != "" {
			b = append(b, " "+hint...)
		}
		b = append(b, " WHERE "+ix.cols[0]+" "+ix.op+" "...)
		b = q.firstValue(b, ix.cols[0])
		b = append(b, " ORDER BY "+cols...)
	}
	b = append(b, q.queryLim...)
	q.buf = b
	n, err := q.conn.ExecRows(ctx, string(b))
	if err != nil {
		return 0, err
	}
	if mustFind {
		q.found.Found(0, n > 0)
	}
	q.h.Record(opQueryPK+metrics.Op(shape), time.Since(q.last))
	return opQuery, nil
}

func (q *querier) slotsInserted() int64 {
	ins, _ := q.totals()
	return ins
}

// firstValue draws the start of a range scan from the column's own range.
func (q *querier) firstValue(b []byte, col string) []byte {
	o := q.o
	switch col {
	case "price":
		return appendPrice(b, o, q.src, q.src.Uniform(0, int64(o.Customers-1)))
	case "productid":
		return strconv.AppendInt(b, q.src.Uniform(0, int64(o.Products-1)), 10)
	default: // cashregisterid
		return strconv.AppendInt(b, q.src.Uniform(0, int64(o.CashRegisters-1)), 10)
	}
}

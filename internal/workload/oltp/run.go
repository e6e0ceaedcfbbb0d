package oltp

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/randgen"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// stmt kinds, one operation each.
type kind int

const (
	kPointSelect kind = iota
	kSimpleRange
	kSumRange
	kOrderRange
	kDistinctRange
	kIndexUpdate
	kNonIndexUpdate
	kDelete
	kInsert
	kBegin
	kCommit
	kRandomPoints
	kRandomRanges
	kBulkInsert
	numKinds
)

var kindSpecs = [numKinds]metrics.OpSpec{
	kPointSelect:    {Name: "point_select", Kind: metrics.Read},
	kSimpleRange:    {Name: "simple_range", Kind: metrics.Read},
	kSumRange:       {Name: "sum_range", Kind: metrics.Read},
	kOrderRange:     {Name: "order_range", Kind: metrics.Read},
	kDistinctRange:  {Name: "distinct_range", Kind: metrics.Read},
	kIndexUpdate:    {Name: "index_update", Kind: metrics.Write},
	kNonIndexUpdate: {Name: "non_index_update", Kind: metrics.Write},
	kDelete:         {Name: "delete", Kind: metrics.Write},
	kInsert:         {Name: "insert", Kind: metrics.Write},
	kBegin:          {Name: "begin", Kind: metrics.Other},
	kCommit:         {Name: "commit", Kind: metrics.Other},
	kRandomPoints:   {Name: "random_points", Kind: metrics.Read},
	kRandomRanges:   {Name: "random_ranges", Kind: metrics.Read},
	kBulkInsert:     {Name: "bulk_insert", Kind: metrics.Write},
}

// noRowSpec is how a write that changed no row is counted: as "other",
// the way sysbench's drivers count it (a statement is a write only if it
// affected a row), with its own latency histogram.
func noRowSpec(k kind) metrics.OpSpec {
	return metrics.OpSpec{Name: kindSpecs[k].Name + "_no_row", Kind: metrics.Other}
}

// sqlOf is the statement of a per-table kind, with ? placeholders.
var sqlOf = map[kind]string{
	kPointSelect:    "SELECT c FROM %s WHERE id=?",
	kSimpleRange:    "SELECT c FROM %s WHERE id BETWEEN ? AND ?",
	kSumRange:       "SELECT SUM(k) FROM %s WHERE id BETWEEN ? AND ?",
	kOrderRange:     "SELECT c FROM %s WHERE id BETWEEN ? AND ? ORDER BY c",
	kDistinctRange:  "SELECT DISTINCT c FROM %s WHERE id BETWEEN ? AND ? ORDER BY c",
	kIndexUpdate:    "UPDATE %s SET k=k+1 WHERE id=?",
	kNonIndexUpdate: "UPDATE %s SET c=? WHERE id=?",
	kDelete:         "DELETE FROM %s WHERE id=?",
	kInsert:         "INSERT INTO %s (id, k, c, pad) VALUES (?, ?, ?, ?)",
}

// plan is what one event does, derived once from the test and its options.
type plan struct {
	trx      bool
	write    bool
	ranges   bool          // some range selects per event
	counts   [numKinds]int // statements of each kind per event
	prepared []kind        // per-table statements to prepare
}

func (w *Workload) plan() plan {
	o := &w.opt
	var p plan
	reads := func() {
		p.counts[kPointSelect] = o.PointSelects
		if o.RangeSelects {
			p.counts[kSimpleRange] = o.SimpleRanges
			p.counts[kSumRange] = o.SumRanges
			p.counts[kOrderRange] = o.OrderRanges
			p.counts[kDistinctRange] = o.DistinctRanges
		}
	}
	writes := func() {
		p.counts[kIndexUpdate] = o.IndexUpdates
		p.counts[kNonIndexUpdate] = o.NonIndexUpdates
		p.counts[kDelete] = o.DeleteInserts
		p.counts[kInsert] = o.DeleteInserts
		p.write = true
	}
	switch w.name {
	case "oltp_read_only":
		p.trx = !o.SkipTrx
		reads()
	case "oltp_read_write":
		p.trx = !o.SkipTrx
		reads()
		writes()
	case "oltp_write_only":
		p.trx = !o.SkipTrx
		writes()
	case "oltp_point_select":
		p.counts[kPointSelect] = o.PointSelects
	case "oltp_update_index":
		p.counts[kIndexUpdate] = o.IndexUpdates
	case "oltp_update_non_index":
		p.counts[kNonIndexUpdate] = o.NonIndexUpdates
	case "oltp_delete":
		p.counts[kDelete] = 1
	case "oltp_insert":
		p.counts[kInsert] = 1 // sent as text, like sysbench's con:query
	case "select_random_points":
		p.counts[kRandomPoints] = 1
	case "select_random_ranges":
		p.counts[kRandomRanges] = 1
	case "bulk_insert":
		p.counts[kBulkInsert] = 1
	}
	if p.trx {
		p.counts[kBegin], p.counts[kCommit] = 1, 1
	}
	for k := kPointSelect; k <= kInsert; k++ {
		if p.counts[k] > 0 && w.name != "oltp_insert" {
			p.prepared = append(p.prepared, k)
		}
	}
	for k := kSimpleRange; k <= kDistinctRange; k++ {
		p.ranges = p.ranges || p.counts[k] > 0
	}
	return p
}

// Load builds the workers' load.
func (w *Workload) Load(ctx context.Context, env workload.Env) (*workload.Load, error) {
	if err := w.Validate(env.Target); err != nil {
		return nil, err
	}
	p := w.plan()
	ops := []metrics.OpSpec{{Name: w.name, Kind: metrics.Event}}
	var opOf, noRowOf [numKinds]metrics.Op
	for k := kind(0); k < numKinds; k++ {
		if p.counts[k] > 0 {
			opOf[k] = metrics.Op(len(ops))
			ops = append(ops, kindSpecs[k])
		}
	}
	for k := kind(0); k < numKinds; k++ {
		if p.counts[k] > 0 && kindSpecs[k].Kind == metrics.Write {
			noRowOf[k] = metrics.Op(len(ops))
			ops = append(ops, noRowSpec(k))
		}
	}
	ids, err := randgen.NewGenerator(w.opt.Rand, 1, w.opt.TableSize)
	if err != nil {
		return nil, err
	}
	sh := &shared{w: w, plan: p, opOf: opOf, noRowOf: noRowOf, ids: ids, env: env, begin: env.Target.Dialect().Begin(p.write),
		nextID: env.Target.Dialect().NextID()}
	load := &workload.Load{
		Ops: ops,
		NewWorker: func(ctx context.Context, s workload.Seat) (workload.Worker, error) {
			return sh.newWorker(ctx, s.ID, s.Conn, s.H, s.Clock)
		},
	}
	sh.checkOf = w.checkedKinds(p)
	var checked []string
	for k, i := range sh.checkOf {
		if i >= 0 {
			checked = append(checked, kindSpecs[k].Name)
		}
	}
	if len(checked) > 0 {
		sh.check = workload.NewReadCheck(env.Threads, checked,
			"re-run dbmark cleanup and dbmark prepare "+w.name+" with this run's --tables and --table-size, or run with the --table-size the tables were prepared with",
			w.opt.AllowEmpty)
		load.Tick = sh.check.Tick
		load.Finish = func(_ context.Context, res *result.Result) { sh.check.Finish(res) }
	}
	return load, nil
}

// checkedKinds numbers the statements whose rows are counted against what
// a whole table returns (-1: not checked): a point select finds its row,
// and a simple or ORDER BY range returns a row for each id it spans up to
// --table-size. A SUM range returns one row whatever the table holds and a
// DISTINCT range one per distinct value, so neither tells; nor do the
// random points and ranges, which look up k, not the ids prepare loaded.
// With --skip-trx, a delete and its insert of the same id are two
// statements, between which another client's read finds nothing: reads
// are not checked then.
func (w *Workload) checkedKinds(p plan) [numKinds]int {
	var of [numKinds]int
	for k := range of {
		of[k] = -1
	}
	if p.counts[kDelete] > 0 && !p.trx {
		return of
	}
	n := 0
	for _, k := range []kind{kPointSelect, kSimpleRange, kOrderRange} {
		if p.counts[k] > 0 {
			of[k] = n
			n++
		}
	}
	return of
}

// shared is read-only state common to all workers.
type shared struct {
	w    *Workload
	plan plan
	opOf [numKinds]metrics.Op
	// noRowOf counts writes that changed no row, as sysbench does.
	noRowOf [numKinds]metrics.Op
	ids     *randgen.Generator
	env     workload.Env
	// check counts the reads that must find rows (nil: none do), each
	// kind by its checkOf index, -1 for those not checked.
	check   *workload.ReadCheck
	checkOf [numKinds]int
	begin   string
	nextID  string // what an INSERT gives an auto-increment id to have it assigned; "": leave it out
}

type worker struct {
	*shared
	id    int
	conn  target.Conn
	h     *metrics.Handle
	src   *randgen.Source
	saved randgen.Source // the source at the start of the event, to retry it identically
	stmts [][numKinds]target.Stmt
	one   target.Stmt // select_random_points / select_random_ranges
	args  []target.Value
	c     []byte
	pad   []byte
	text  []byte
	last  time.Duration // a reading of clock
	// clock is the runner's (the seat's), whose Now is the event's
	// start as the runner read it; the worker leaves there the end of
	// its last statement, which the runner takes as the event's end: two
	// clock reads an event fewer. Its Read costs less than time.Now.
	clock *workload.Clock
	found workload.Finder
	// select_random_*: this worker's slice of the key range.
	part *randgen.Generator
	// bulk_insert
	bulkNext int64
	bulkRows int
	bulkHead string
}

func (s *shared) newWorker(ctx context.Context, id int, conn target.Conn, h *metrics.Handle, clock *workload.Clock) (*worker, error) {
	o := &s.w.opt
	if clock == nil {
		c := workload.NewClock()
		clock = &c
	}
	wk := &worker{shared: s, id: id, conn: conn, h: h, src: randgen.New(s.env.Seed, uint64(id)+1<<32), args: make([]target.Value, 0, 64), clock: clock}
	if s.check != nil {
		wk.found = s.check.Client(id)
	}
	d := s.env.Target.Dialect()
	prep := func(sql string) (target.Stmt, error) {
		return conn.Prepare(ctx, placeholders(sql, d))
	}
	if len(s.plan.prepared) > 0 {
		wk.stmts = make([][numKinds]target.Stmt, o.Tables)
		for t := 0; t < o.Tables; t++ {
			for _, k := range s.plan.prepared {
				st, err := prep(fmt.Sprintf(sqlOf[k], tableName(t+1)))
				if err != nil {
					wk.Close()
					return nil, err
				}
				wk.stmts[t][k] = st
			}
		}
	}
	switch s.w.name {
	case "select_random_points", "select_random_ranges":
		var sql string
		if s.w.name == "select_random_points" {
			sql = "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (" + strings.TrimSuffix(strings.Repeat("?, ", o.RandomPoints), ", ") + ")"
		} else {
			sql = "SELECT count(k) FROM sbtest1 WHERE " + strings.TrimSuffix(strings.Repeat("k BETWEEN ? AND ? OR ", o.NumberOfRanges), " OR ")
		}
		st, err := prep(sql)
		if err != nil {
			return nil, err
		}
		wk.one = st
		// Like sysbench, each thread draws from its own slice of the table
		// so range queries of different threads do not overlap.
		rlen := o.TableSize / int64(s.env.Threads)
		rmin := rlen * int64(id%s.env.Threads)
		g, err := randgen.NewGenerator(o.Rand, rmin, rmin+rlen)
		if err != nil {
			st.Close()
			return nil, err
		}
		wk.part = g
	case "bulk_insert":
		wk.bulkHead = "INSERT INTO " + tableName(id+1) + " VALUES "
		if v, ok, err := conn.QueryRow(ctx, "SELECT MAX(id) FROM "+tableName(id+1)); err != nil {
			return nil, err
		} else if ok && v != "" {
			wk.bulkNext, _ = strconv.ParseInt(v, 10, 64) // go on after a reconnect
		}
	}
	return wk, nil
}

// placeholders rewrites ? markers into the target's own.
func placeholders(sql string, d target.Dialect) string {
	var b strings.Builder
	n := 0
	for _, r := range sql {
		if r == '?' {
			n++
			b.WriteString(d.Placeholder(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Close releases the worker's statements and flushes a pending bulk
// insert, counted as the write it is (as sysbench counts the INSERT its
// thread sends at the end): the runner closes its workers before the
// run's last tick, which takes it into the totals.
func (wk *worker) Close() error {
	if wk.bulkRows > 0 {
		wk.bulkRows = 0
		wk.last = wk.clock.Read()
		if err := wk.conn.Exec(context.Background(), string(wk.text)); err == nil {
			wk.mark(wk.opOf[kBulkInsert])
		}
	}
	for t := range wk.stmts {
		for _, st := range wk.stmts[t] {
			if st != nil {
				st.Close()
			}
		}
	}
	if wk.one != nil {
		wk.one.Close()
	}
	return nil
}

// mark records the statement that just ended, timed from the end of the previous one.
func (wk *worker) mark(op metrics.Op) {
	now := wk.clock.Read()
	wk.h.Record(op, now-wk.last)
	wk.last = now
	wk.clock.Now = now
}

func (wk *worker) run(ctx context.Context, t int, k kind) error {
	n, err := wk.stmts[t][k].Run(ctx, wk.args)
	if err != nil {
		return err
	}
	if n == 0 && kindSpecs[k].Kind == metrics.Write {
		wk.mark(wk.noRowOf[k])
		return nil
	}
	if c := wk.checkOf[k]; c >= 0 {
		wk.found.Found(c, n >= wk.rowsOf(k))
	}
	wk.mark(wk.opOf[k])
	return nil
}

// rowsOf is how many rows checked statement k returns from a whole table,
// given its arguments: one for a point select, and for a range each id
// from its start to its end or --table-size, whichever comes first.
func (wk *worker) rowsOf(k kind) int64 {
	if k == kPointSelect {
		return 1
	}
	return min(wk.args[1].Int, wk.w.opt.TableSize) - wk.args[0].Int + 1
}

func (wk *worker) exec(ctx context.Context, sql string, k kind) error {
	if err := wk.conn.Exec(ctx, sql); err != nil {
		return err
	}
	wk.mark(wk.opOf[k])
	return nil
}

func (wk *worker) table() int { return int(wk.src.Uniform(1, int64(wk.w.opt.Tables))) - 1 }

// intArgs makes the statement's arguments the integers ids, set in place.
func (wk *worker) intArgs(ids ...int64) {
	wk.args = wk.args[:len(ids)]
	for i, id := range ids {
		wk.args[i].SetInt(id)
	}
}

// Event runs one event: sysbench's statements in sysbench's order.

var _ workload.Worker = (*worker)(nil)

func (wk *worker) Event(ctx context.Context, retry bool) (metrics.Op, error) {
	if retry {
		*wk.src = wk.saved
	} else {
		wk.saved = *wk.src
	}
	// The first try starts when the runner read the clock for the event;
	// a retry starts now, after the rollback.
	if retry || wk.clock.Now == 0 {
		wk.last = wk.clock.Read()
	} else {
		wk.last = wk.clock.Now
	}
	p := &wk.plan
	o := &wk.w.opt
	switch wk.w.name {
	case "oltp_insert":
		return 0, wk.insertText(ctx)
	case "select_random_points", "select_random_ranges":
		return 0, wk.randomSelect(ctx)
	case "bulk_insert":
		return 0, wk.bulkInsert(ctx)
	}
	if p.trx {
		if err := wk.exec(ctx, wk.begin, kBegin); err != nil {
			return 0, err
		}
	}
	if n := p.counts[kPointSelect]; n > 0 {
		t := wk.table()
		for i := 0; i < n; i++ {
			wk.intArgs(wk.ids.Int(wk.src))
			if err := wk.run(ctx, t, kPointSelect); err != nil {
				return 0, err
			}
		}
	}
	for k := kSimpleRange; p.ranges && k <= kDistinctRange; k++ {
		n := p.counts[k]
		if n == 0 {
			continue
		}
		t := wk.table()
		for i := 0; i < n; i++ {
			id := wk.ids.Int(wk.src)
			wk.intArgs(id, id+o.RangeSize-1)
			if err := wk.run(ctx, t, k); err != nil {
				return 0, err
			}
		}
	}
	if n := p.counts[kIndexUpdate]; n > 0 {
		t := wk.table()
		for i := 0; i < n; i++ {
			wk.intArgs(wk.ids.Int(wk.src))
			if err := wk.run(ctx, t, kIndexUpdate); err != nil {
				return 0, err
			}
		}
	}
	if n := p.counts[kNonIndexUpdate]; n > 0 {
		t := wk.table()
		for i := 0; i < n; i++ {
			wk.c = randgen.FillTemplate(wk.c[:0], cTemplate, wk.src)
			wk.args = append(wk.args[:0], target.StrVal(wk.c), target.IntVal(wk.ids.Int(wk.src)))
			if err := wk.run(ctx, t, kNonIndexUpdate); err != nil {
				return 0, err
			}
		}
	}
	if n := p.counts[kDelete]; n > 0 {
		t := wk.table()
		for i := 0; i < n; i++ {
			id := wk.ids.Int(wk.src)
			wk.intArgs(id)
			if err := wk.run(ctx, t, kDelete); err != nil {
				return 0, err
			}
			if p.counts[kInsert] == 0 {
				continue // oltp_delete: the delete alone
			}
			k := wk.ids.Int(wk.src)
			wk.c = randgen.FillTemplate(wk.c[:0], cTemplate, wk.src)
			wk.pad = randgen.FillTemplate(wk.pad[:0], padTemplate, wk.src)
			wk.args = append(wk.args[:0], target.IntVal(id), target.IntVal(k), target.StrVal(wk.c), target.StrVal(wk.pad))
			if err := wk.run(ctx, t, kInsert); err != nil {
				return 0, err
			}
		}
	}
	if p.trx {
		if err := wk.exec(ctx, "COMMIT", kCommit); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// insertText is oltp_insert: one INSERT sent as text, letting the engine
// assign the id with --auto-inc (given as the dialect's NextID, or left
// out, as sysbench does), or a unique client id without it.
func (wk *worker) insertText(ctx context.Context) error {
	t := wk.src.Uniform(1, int64(wk.w.opt.Tables))
	k := wk.ids.Int(wk.src)
	wk.c = randgen.FillTemplate(wk.c[:0], cTemplate, wk.src)
	wk.pad = randgen.FillTemplate(wk.pad[:0], padTemplate, wk.src)
	b := append(wk.text[:0], "INSERT INTO sbtest"...)
	b = strconv.AppendInt(b, t, 10)
	switch {
	case wk.w.opt.AutoInc && wk.nextID != "":
		b = append(b, " (id, k, c, pad) VALUES ("+wk.nextID+", "...)
	case wk.w.opt.AutoInc:
		b = append(b, " (k, c, pad) VALUES ("...)
	default:
		b = append(b, " (id, k, c, pad) VALUES ("...)
		b = strconv.AppendInt(b, int64(randgen.Unique(wk.src))-2147483648, 10)
		b = append(b, ", "...)
	}
	b = strconv.AppendInt(b, k, 10)
	b = append(b, ", '"...)
	b = append(b, wk.c...)
	b = append(b, "', '"...)
	b = append(b, wk.pad...)
	b = append(b, "')"...)
	wk.text = b
	return wk.exec(ctx, string(b), kInsert)
}

func (wk *worker) randomSelect(ctx context.Context) error {
	o := &wk.w.opt
	wk.args = wk.args[:0]
	if wk.w.name == "select_random_points" {
		for i := 0; i < o.RandomPoints; i++ {
			wk.args = append(wk.args, target.IntVal(wk.part.Int(wk.src)))
		}
		if _, err := wk.one.Run(ctx, wk.args); err != nil {
			return err
		}
		wk.mark(wk.opOf[kRandomPoints])
		return nil
	}
	for i := 0; i < o.NumberOfRanges; i++ {
		v := wk.part.Int(wk.src)
		wk.args = append(wk.args, target.IntVal(v), target.IntVal(v+o.Delta))
	}
	if _, err := wk.one.Run(ctx, wk.args); err != nil {
		return err
	}
	wk.mark(wk.opOf[kRandomRanges])
	return nil
}

// bulkPacket bounds one multi-row INSERT, as sysbench's bulk insert buffer does.
const bulkPacket = 512 * 1024

// bulkInsert adds one row to the worker's pending multi-row INSERT and
// sends it when it is full. Each event is one row; each INSERT one write.
func (wk *worker) bulkInsert(ctx context.Context) error {
	if wk.bulkRows == 0 {
		wk.text = append(wk.text[:0], wk.bulkHead...)
	} else {
		wk.text = append(wk.text, ',')
	}
	wk.bulkNext++
	wk.text = append(wk.text, '(')
	wk.text = strconv.AppendInt(wk.text, wk.bulkNext, 10)
	wk.text = append(wk.text, ',')
	wk.text = strconv.AppendInt(wk.text, wk.bulkNext, 10)
	wk.text = append(wk.text, ')')
	wk.bulkRows++
	if len(wk.text) < bulkPacket-32 {
		return nil
	}
	wk.bulkRows = 0
	if err := wk.conn.Exec(ctx, string(wk.text)); err != nil {
		return err
	}
	wk.mark(wk.opOf[kBulkInsert])
	return nil
}

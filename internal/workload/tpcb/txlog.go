package tpcb

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/dbmark/dbmark/internal/workload"
)

// txLog is pgbench's -l: one file per pgbench thread (-j), named
// PREFIX.PID for the first and PREFIX.PID.N for thread N, each line one
// transaction or, with --aggregate-interval, one interval. Clients are
// spread over the threads in contiguous blocks, as pgbench spreads them.
type txLog struct {
	files    []*logFile
	thread   []int // client id -> file
	rate     bool
	retries  bool // --max-tries other than 1: the retries column
	interval time.Duration
	paths    []string
}

type logFile struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	buf []byte
	err error
	agg *aggregate
}

// aggregate is one --aggregate-interval line being gathered.
type aggregate struct {
	start                   time.Time
	cnt                     int64
	latSum, latSum2         float64
	latMin, latMax          float64
	lagSum, lagSum2         float64
	lagMin, lagMax          float64
	skipped, retried, tries int64
	serialization, deadlock int64
}

func newTxLog(o *Options, clients int, rate bool, maxTries int) (*txLog, error) {
	jobs := min(o.Jobs, clients)
	l := &txLog{thread: make([]int, clients), rate: rate, retries: maxTries != 1,
		interval: time.Duration(o.AggregateInterval) * time.Second}
	// The first clients%jobs threads take one client more.
	c := 0
	for t := 0; t < jobs; t++ {
		n := clients / jobs
		if t < clients%jobs {
			n++
		}
		for ; n > 0; n-- {
			l.thread[c] = t
			c++
		}
	}
	pid := os.Getpid()
	now := time.Now()
	for t := 0; t < jobs; t++ {
		path := fmt.Sprintf("%s.%d", o.LogPrefix, pid)
		if t > 0 {
			path += "." + strconv.Itoa(t)
		}
		f, err := os.Create(path)
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("-l: could not open the log file: %w", err)
		}
		lf := &logFile{f: f, w: bufio.NewWriterSize(f, 64<<10)}
		if l.interval > 0 {
			lf.agg = &aggregate{start: now}
		}
		l.files = append(l.files, lf)
		l.paths = append(l.paths, path)
	}
	return l, nil
}

// write logs one transaction in pgbench's format:
//
//	client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]
//
// where time is the latency in microseconds (from the scheduled start
// under --rate), or "skipped", or "failed" ("serialization" or
// "deadlock" with --failures-detailed).
func (l *txLog) write(client int, txNo int64, scriptNo int, e workload.EventInfo, kind string, detailed bool) {
	lf := l.files[l.thread[client]]
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if lf.err != nil {
		return
	}
	if lf.agg != nil {
		l.aggregate(lf, e, kind)
		return
	}
	b := lf.buf[:0]
	b = strconv.AppendInt(b, int64(client), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, txNo, 10)
	b = append(b, ' ')
	switch e.Status {
	case workload.EventSkipped:
		b = append(b, "skipped"...)
	case workload.EventFailed:
		if detailed && kind != "failed" {
			b = append(b, kind...)
		} else {
			b = append(b, "failed"...)
		}
	default:
		b = strconv.AppendInt(b, (e.End - e.Intended).Microseconds(), 10)
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(scriptNo), 10)
	b = append(b, ' ')
	us := e.Clock.Time(e.End).UnixMicro()
	b = strconv.AppendInt(b, us/1_000_000, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, us%1_000_000, 10)
	if l.rate {
		b = append(b, ' ')
		b = strconv.AppendInt(b, (e.Began - e.Intended).Microseconds(), 10)
	}
	if l.retries {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(max(e.Tries-1, 0)), 10)
	}
	b = append(b, '\n')
	lf.buf = b
	_, lf.err = lf.w.Write(b)
}

// aggregate adds a transaction to the current interval, first writing
// the intervals that ended before it (empty ones too, as pgbench does).
func (l *txLog) aggregate(lf *logFile, e workload.EventInfo, kind string) {
	a := lf.agg
	for end := e.Clock.Time(e.End); !end.Before(a.start.Add(l.interval)); {
		l.flushAgg(lf)
	}
	switch e.Status {
	case workload.EventSkipped:
		a.skipped++
		return
	case workload.EventFailed:
		switch kind {
		case "serialization":
			a.serialization++
		case "deadlock":
			a.deadlock++
		}
	default:
		a.cnt++
		lat := float64((e.End - e.Intended).Microseconds())
		addStat(&a.latSum, &a.latSum2, &a.latMin, &a.latMax, lat, a.cnt)
		if l.rate {
			addStat(&a.lagSum, &a.lagSum2, &a.lagMin, &a.lagMax, float64((e.Began - e.Intended).Microseconds()), a.cnt)
		}
	}
	if e.Tries > 1 {
		a.retried++
		a.tries += int64(e.Tries - 1)
	}
}

func addStat(sum, sum2, lo, hi *float64, v float64, n int64) {
	if n == 1 {
		*lo, *hi = v, v
	} else {
		*lo, *hi = min(*lo, v), max(*hi, v)
	}
	*sum += v
	*sum2 += v * v
}

// flushAgg writes the current interval in pgbench 15's aggregate format,
// every column always present:
//
//	interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency
//	sum_lag sum_lag_2 min_lag max_lag skipped retried retries serialization_failures deadlock_failures
func (l *txLog) flushAgg(lf *logFile) {
	a := lf.agg
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	_, err := fmt.Fprintf(lf.w, "%d %d %s %s %s %s %s %s %s %s %d %d %d %d %d\n",
		a.start.Unix(), a.cnt, f(a.latSum), f(a.latSum2), f(a.latMin), f(a.latMax),
		f(a.lagSum), f(a.lagSum2), f(a.lagMin), f(a.lagMax), a.skipped, a.retried, a.tries, a.serialization, a.deadlock)
	if err != nil && lf.err == nil {
		lf.err = err
	}
	*a = aggregate{start: a.start.Add(l.interval)}
}

// Close writes the last interval and flushes the files.
func (l *txLog) Close() error {
	var errs []error
	for _, lf := range l.files {
		lf.mu.Lock()
		if lf.agg != nil && lf.err == nil {
			l.flushAgg(lf)
		}
		if err := lf.w.Flush(); err != nil && lf.err == nil {
			lf.err = err
		}
		if err := lf.f.Close(); err != nil && lf.err == nil {
			lf.err = err
		}
		if lf.err != nil {
			errs = append(errs, fmt.Errorf("-l log %s: %w", lf.f.Name(), lf.err))
		}
		lf.mu.Unlock()
	}
	return errors.Join(errs...)
}

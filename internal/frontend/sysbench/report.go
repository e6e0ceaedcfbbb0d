package sysbench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/report"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
)

// QueueLength is the most events sysbench's --rate queue holds: an open
// loop that falls further behind than this ends sysbench's run.
const QueueLength = 131072

// RunHeader prints what sysbench prints before its threads start: the
// run's options and the test's mode.
func (c *Command) RunHeader() {
	l := c.Log
	l.Printf(Notice, "Running the test with following options:")
	l.Printf(Notice, "Number of threads: %d", c.Threads)
	if c.Rate > 0 {
		l.Printf(Notice, "Target transaction rate: %d/sec", c.Rate)
	}
	if c.ReportInterval > 0 {
		l.Printf(Notice, "Report intermediate results every %d second(s)", c.ReportInterval)
	}
	if len(c.Checkpoints) > 0 {
		s := make([]string, len(c.Checkpoints))
		for i, cp := range c.Checkpoints {
			s[i] = strconv.Itoa(cp)
		}
		l.Printf(Notice, "Report checkpoint(s) at %s seconds", strings.Join(s, ", "))
	}
	if c.Debug {
		l.Printf(Notice, "Debug mode enabled.\n")
	}
	if c.Validate {
		l.Printf(Notice, "Validation checks: on.\n")
	}
	if c.Seed != 0 {
		l.Printf(Notice, "Initializing random number generator from seed (%d).\n", c.Seed)
	} else {
		l.Printf(Notice, "Initializing random number generator from current time\n")
	}
	if c.ForcedShutdown > 0 {
		l.Printf(Notice, "Forcing shutdown in %d seconds", c.ForcedShutdown)
	}
	l.Printf(Notice, "")
	if c.Test == "fileio" {
		c.fileioMode()
	}
}

// Initializing is sysbench's line before its threads connect.
func (c *Command) Initializing() { c.Log.Printf(Notice, "Initializing worker threads...\n") }

// Started is sysbench's line once its threads are ready.
func (c *Command) Started() { c.Log.Printf(Notice, "Threads started!\n") }

// size is sysbench's form of a byte count: "%.5g" with the largest of K,
// M, G and T that keeps the value at 1024 or more, and "i".
func size(v float64) string {
	i := 0
	for ; i < 4 && v >= 1024; i++ {
		v /= 1024
	}
	s := strconv.FormatFloat(v, 'g', 5, 64)
	if i > 0 {
		s += string("KMGT"[i-1]) + "i"
	}
	return s
}

func (c *Command) fileNum() uint64 { return uint64(max(c.intOr("file-num", 128), 1)) }

func (c *Command) intOr(name string, def int) int {
	n, err := strconv.Atoi(c.opts.get(name, strconv.Itoa(def)))
	if err != nil {
		return def
	}
	return n
}

// FileSize is the size of each test file: the total over the files, as
// sysbench divides it.
func (c *Command) FileSize() uint64 { return sizeOf(c.opts.get("file-total-size", "2G")) / c.fileNum() }

// FileNum is --file-num.
func (c *Command) FileNum() int { return int(c.fileNum()) }

func (c *Command) extraFlags() string {
	flags := c.opts.get("file-extra-flags", "")
	has := func(f string) bool {
		for _, x := range strings.Split(flags, ",") {
			if x == f {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	if !has("sync") && !has("dsync") && !has("direct") {
		b.WriteString("(none)")
	}
	for _, f := range []struct{ name, shown string }{{"sync", "sync "}, {"dsync", "dsync "}, {"direct", "directio"}} {
		if has(f.name) {
			b.WriteString(f.shown)
		}
	}
	return b.String()
}

// fileioMode is fileio's part of the run header.
func (c *Command) fileioMode() {
	l := c.Log
	fs := c.FileSize()
	l.Printf(Notice, "Extra file open flags: %s", c.extraFlags())
	l.Printf(Notice, "%d files, %sB each", c.fileNum(), size(float64(fs)))
	l.Printf(Notice, "%sB total file size", size(float64(fs*c.fileNum())))
	l.Printf(Notice, "Block size %sB", size(float64(c.intOr("file-block-size", 16384))))
	mode := c.opts.get("file-test-mode", "")
	if strings.HasPrefix(mode, "rnd") {
		l.Printf(Notice, "Number of IO requests: %d", c.Events)
		ratio, _ := strconv.ParseFloat(c.opts.get("file-rw-ratio", "1.5"), 64)
		l.Printf(Notice, "Read/Write ratio for combined random IO test: %2.2f", ratio)
	}
	if n := c.intOr("file-fsync-freq", 100); n > 0 {
		l.Printf(Notice, "Periodic FSYNC enabled, calling fsync() each %d requests.", n)
	}
	if c.opts.flag("file-fsync-end", true) {
		l.Printf(Notice, "Calling fsync() at the end of test, Enabled.")
	}
	if c.opts.flag("file-fsync-all", false) {
		l.Printf(Notice, "Calling fsync() after each write operation.")
	}
	io := "synchronous"
	if c.opts.get("file-io-mode", "sync") == "async" {
		io = "asynchronous"
	}
	l.Printf(Notice, "Using %s I/O mode", io)
	if c.Validate {
		l.Printf(Notice, "Using checksums validation.")
	}
	l.Printf(Notice, "Doing %s test", map[string]string{
		"seqwr": "sequential write (creation)", "seqrewr": "sequential rewrite", "seqrd": "sequential read",
		"rndrd": "random read", "rndwr": "random write", "rndrw": "random r/w",
	}[mode])
}

// PrepareFiles is fileio's prepare header; each file's line and the
// closing line follow from FileLine and Written.
func (c *Command) PrepareFiles() {
	fs := c.FileSize()
	c.Log.Printf(Notice, "%d files, %dKb each, %dMb total", c.fileNum(), fs/1024, fs*c.fileNum()/(1024*1024))
	c.Log.Printf(Notice, "Creating files for the test...")
	c.Log.Printf(Notice, "Extra file open flags: %s", c.extraFlags())
}

// FileLine says what prepare does with test file i that is already have
// bytes long.
func (c *Command) FileLine(i int, have int64) {
	switch fs := int64(c.FileSize()); {
	case have >= fs:
		c.Log.Printf(Notice, "Reusing existing file test_file.%d", i)
	case have > 0:
		c.Log.Printf(Notice, "Extending existing file test_file.%d", i)
	default:
		c.Log.Printf(Notice, "Creating file test_file.%d", i)
	}
}

// Written closes fileio's prepare.
func (c *Command) Written(bytes int64, took time.Duration) {
	if bytes == 0 {
		c.Log.Printf(Notice, "No bytes written.")
		return
	}
	s := took.Seconds()
	c.Log.Printf(Notice, "%d bytes written in %.2f seconds (%.2f MiB/sec).", bytes, s, float64(bytes/(1<<20))/s)
}

// CheckFiles is the check sysbench makes of the test files before a run
// that reads them: each is there and of at least its size.
func (c *Command) CheckFiles(sizeOf func(name string) (int64, error)) error {
	if c.opts.get("file-test-mode", "") == "seqwr" {
		return nil // it creates them
	}
	want := int64(c.FileSize())
	for i := 0; i < c.FileNum(); i++ {
		name := "test_file." + strconv.Itoa(i)
		n, err := sizeOf(name)
		if err != nil {
			c.Log.Printf(Fatal, "Cannot open file '%s' errno = 2 (No such file or directory)", name)
			c.Log.Printf(Warning, "Did you forget to run the prepare step?")
			return &Exit{Code: 1}
		}
		if n < want {
			c.Log.Printf(Fatal, "Size of file '%s' is %sB, but at least %sB is expected.", name, size(float64(n)), size(float64(want)))
			c.Log.Printf(Warning, "Did you run 'prepare' with different --file-total-size or --file-num values?")
			return &Exit{Code: 1}
		}
	}
	return nil
}

// LiveLine is sysbench's --report-interval line for the interval p.
func (c *Command) LiveLine(p result.Interval, threads int) string {
	lat := 0.0
	for _, q := range p.Latency {
		if c.Percentile > 0 {
			lat = q.MS
		}
	}
	if c.Test == "fileio" {
		return fmt.Sprintf("[ %.0fs ] reads: %4.2f MiB/s writes: %4.2f MiB/s fsyncs: %4.2f/s latency (ms,%d%%): %4.3f",
			p.T, p.ReadMiBPerS, p.WriteMiBPerS, p.OtherPerS, c.Percentile, lat)
	}
	return fmt.Sprintf("[ %.0fs ] thds: %d tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%d%%): %4.2f err/s: %4.2f reconn/s: %4.2f",
		p.T, threads, p.EventsPerS, p.ReadsPerS+p.WritesPerS+p.OtherPerS, p.ReadsPerS, p.WritesPerS, p.OtherPerS,
		c.Percentile, lat, p.ErrorsPerS, p.ReconnPerS)
}

// QueueFull says whether an open loop fell further behind its rate than
// sysbench's event queue holds, which ends sysbench's run; it then
// prints sysbench's message.
func (c *Command) QueueFull(res *result.Result) bool {
	s := res.Summary
	if c.Rate <= 0 || float64(c.Rate)*s.DurationS-float64(s.Events) <= QueueLength {
		return false
	}
	c.Log.Printf(Fatal, "The event queue is full. This means the worker threads are unable to keep up with the specified event generation rate")
	return true
}

// figures are what one of sysbench's reports prints: of the run, or of
// the span since the last checkpoint.
type figures struct {
	events, reads, writes, other, errors, reconnects int64
	secs                                             float64 // the time the rates are over
	total                                            float64 // "total time": since the run's start
	latency                                          *result.Latency
	fairness                                         *result.Fairness
	unfinished                                       int // events a forced shutdown cut off
}

// OnSpan takes a span of the run (runner.Config.OnCheckpoint): a
// checkpoint's is printed as sysbench prints its checkpoint reports; the
// last, which the run's end closed, is kept for the final report, which
// then covers the time since the last checkpoint, as sysbench's does.
func (c *Command) OnSpan(s runner.Span) {
	f := figures{events: s.Events, reads: s.Reads, writes: s.Writes, other: s.Other, errors: s.Errors, reconnects: s.Reconnects,
		secs: s.Seconds, total: s.At.Seconds(), latency: s.Latency, fairness: s.Fairness, unfinished: s.Unfinished}
	if s.Final {
		c.last = &f
		return
	}
	c.Log.Printf(Notice, "[ %.0fs ] Checkpoint report:", s.At.Seconds())
	c.print(f)
}

// Spans says whether the run is to report its spans to OnSpan: with
// checkpoints, or a forced shutdown, whose report is the last span's.
func (c *Command) Spans() bool { return len(c.Checkpoints) > 0 || c.ForcedShutdown > 0 }

// Drain is how long the events under way at the time limit may finish
// under --forced-shutdown (0: no forced shutdown).
func (c *Command) Drain() time.Duration {
	if c.ForcedShutdown == 0 {
		return 0
	}
	// --forced-shutdown=0 cuts them off at the limit itself.
	return max(time.Duration(c.ForcedShutdown-c.Time)*time.Second, time.Millisecond)
}

// Forced says whether the run ended by sysbench's forced shutdown: events
// were still under way when the time it gives them ran out.
func (c *Command) Forced() bool {
	return c.ForcedShutdown > 0 && c.last != nil && c.last.unfinished > 0
}

// ForcedReport is what sysbench prints as its forced shutdown ends a run
// (then exiting with code 2): the fatal line and the report, with the
// events cut off.
func (c *Command) ForcedReport(res *result.Result) {
	c.Log.Printf(Fatal, "The --max-time limit has expired, forcing shutdown...")
	f := *c.last
	f.total = res.Summary.DurationS + res.Summary.DrainS
	c.print(f)
}

// Report prints sysbench's report of the run: the histogram with
// --histogram, the test's statistics and the general ones; after
// checkpoints, of the span since the last.
func (c *Command) Report(res *result.Result) {
	l := c.Log
	s := res.Summary
	if c.Histogram && l.Verbosity >= Notice {
		histogram(l.W, res)
	}
	// sysbench counts every event, those that ended after the time limit
	// too, and its time runs until the last of them ended.
	f := figures{events: s.Events + s.DrainEvents, secs: s.DurationS + s.DrainS, errors: s.ErrorsTotal, reconnects: s.Reconnects, fairness: s.Fairness}
	f.total = f.secs
	f.latency = s.Latency
	if s.Service != nil { // under --rate sysbench times an event from its actual start
		f.latency = s.Service
	}
	if c.Test == "fileio" {
		for _, o := range s.Ops {
			switch o.Kind {
			case metrics.Read.String():
				f.reads += o.Count
			case metrics.Write.String():
				f.writes += o.Count
			case metrics.Other.String():
				f.other += o.Count
			}
		}
	} else {
		f.reads, f.writes, f.other = s.Queries.Read, s.Queries.Write, s.Queries.Other
	}
	if len(c.Checkpoints) > 0 && c.last != nil {
		last := *c.last
		last.total = f.total
		f = last
	}
	c.print(f)
}

// print is one of sysbench's reports: the test's statistics and the
// general ones.
func (c *Command) print(f figures) {
	l := c.Log
	per := func(n float64) float64 {
		if f.secs <= 0 {
			return 0
		}
		return n / f.secs
	}
	if c.Test == "fileio" {
		bs := float64(c.intOr("file-block-size", 16384))
		l.Printf(Notice, "\nFile operations:\n"+
			"    reads/s:                      %4.2f\n"+
			"    writes/s:                     %4.2f\n"+
			"    fsyncs/s:                     %4.2f\n\n"+
			"Throughput:\n"+
			"    read, MiB/s:                  %4.2f\n"+
			"    written, MiB/s:               %4.2f",
			per(float64(f.reads)), per(float64(f.writes)), per(float64(f.other)),
			per(float64(f.reads)*bs/(1<<20)), per(float64(f.writes)*bs/(1<<20)))
	} else {
		total := f.reads + f.writes + f.other
		l.Printf(Notice, "SQL statistics:")
		l.Printf(Notice, "    queries performed:")
		l.Printf(Notice, "        read:                            %d", f.reads)
		l.Printf(Notice, "        write:                           %d", f.writes)
		l.Printf(Notice, "        other:                           %d", f.other)
		l.Printf(Notice, "        total:                           %d", total)
		l.Printf(Notice, "    transactions:                        %-6d (%.2f per sec.)", f.events, per(float64(f.events)))
		l.Printf(Notice, "    queries:                             %-6d (%.2f per sec.)", total, per(float64(total)))
		l.Printf(Notice, "    ignored errors:                      %-6d (%.2f per sec.)", f.errors, per(float64(f.errors)))
		l.Printf(Notice, "    reconnects:                          %-6d (%.2f per sec.)", f.reconnects, per(float64(f.reconnects)))
	}
	c.general(f)
}

// general is sysbench's "General statistics", "Latency (ms)" and
// "Threads fairness".
func (c *Command) general(g figures) {
	l := c.Log
	lat := g.latency
	if lat == nil {
		lat = &result.Latency{}
	}
	f := g.fairness
	if f == nil {
		f = &result.Fairness{}
	}
	if g.unfinished > 0 {
		l.Printf(Notice, "")
		l.Printf(Notice, "Number of unfinished transactions on forced shutdown: %d", g.unfinished)
	}
	l.Printf(Notice, "")
	l.Printf(Notice, "General statistics:")
	l.Printf(Notice, "    total time:                          %.4fs", g.total)
	l.Printf(Notice, "    total number of events:              %d", g.events)
	l.Printf(Notice, "")
	l.Printf(Notice, "Latency (ms):")
	l.Printf(Notice, "         min: %39.2f", lat.MinMS)
	l.Printf(Notice, "         avg: %39.2f", lat.MeanMS)
	l.Printf(Notice, "         max: %39.2f", lat.MaxMS)
	if c.Percentile > 0 {
		v, _ := lat.Get(float64(c.Percentile))
		l.Printf(Notice, "        %3dth percentile: %27.2f", c.Percentile, v)
	} else {
		l.Printf(Notice, "         percentile stats:               disabled")
	}
	l.Printf(Notice, "         sum: %39.2f", f.BusyS*1000)
	l.Printf(Notice, "")
	l.Printf(Notice, "Threads fairness:")
	l.Printf(Notice, "    events (avg/stddev):           %.4f/%3.2f", f.EventsMean, f.EventsStdDev)
	l.Printf(Notice, "    execution time (avg/stddev):   %.4f/%3.2f", f.BusyMeanS, f.BusyStdDevS)
	l.Printf(Notice, "")
}

// histogram prints the events' latency histogram as sysbench does.
func histogram(w io.Writer, res *result.Result) {
	event := ""
	for _, o := range res.Summary.Ops {
		if o.Kind == metrics.Event.String() {
			event = o.Name
		}
	}
	for _, hh := range res.Histograms {
		if hh.Op != event || hh.Kind != "latency" {
			continue
		}
		if h, err := hh.Decode(); err == nil {
			report.Histogram(w, h)
			return
		}
	}
	fmt.Fprintln(w, "Latency histogram (values are in milliseconds)")
	fmt.Fprintln(w, "       value  ------------- distribution ------------- count")
	fmt.Fprintln(w, " ")
}

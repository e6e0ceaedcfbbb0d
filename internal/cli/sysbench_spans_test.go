package cli_test

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/cli"
)

// signalWriter collects what is written and closes seen once it holds want.
type signalWriter struct {
	syncBuffer
	want string
	once sync.Once
	seen chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	if strings.Contains(w.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

// TestSysbenchCheckpointsAndForcedShutdown runs oltp_point_select through
// dbmark sysbench on MariaDB with --report-checkpoints, whose reports
// come at their times and count what happened since the one before, and
// with --forced-shutdown while another connection holds the table: the
// run ends at the time limit and the shutdown's delay, with sysbench's
// fatal line, its report of the unfinished event and its exit code 2.
func TestSysbenchCheckpointsAndForcedShutdown(t *testing.T) {
	u := serverURL(t, "DBMARK_TEST_MYSQL")
	home(t)
	ctx := context.Background()
	admin := connect(t, u.String())
	const db = "dbmark_spans"
	if err := admin.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db) })
	args := append(sysbenchOn(u, db), "oltp_point_select", "--tables=1", "--table-size=100", "--no-store")
	if o := dbmark(t, ctx, append(args, "prepare")...); o.code != 0 {
		t.Fatalf("prepare: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}

	o := dbmark(t, ctx, append(args, "--time=2", "--report-checkpoints=1", "run")...)
	if o.code != 0 {
		t.Fatalf("run: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if !strings.Contains(o.stdout, "Report checkpoint(s) at 1 seconds\n") || !strings.Contains(o.stdout, "\n\n[ 1s ] Checkpoint report:\nSQL statistics:\n") ||
		strings.Count(o.stdout, "SQL statistics:\n") != 2 {
		t.Fatalf("want a checkpoint report at 1 s and the final report:\n%s", o.stdout)
	}
	cp, final, _ := strings.Cut(strings.SplitN(o.stdout, "Checkpoint report:\n", 2)[1], "\n\nSQL statistics:\n")
	total := regexp.MustCompile(`total time:\s+([0-9.]+)s\n    total number of events:\s+(\d+)\n`)
	for _, c := range []struct {
		name, report string
		from, to     float64
	}{{"checkpoint", cp, 0.95, 2}, {"final", final, 1.95, 4.5}} { // a loaded machine's ticker may be late
		m := total.FindStringSubmatch(c.report)
		if m == nil {
			t.Fatalf("%s report without its totals:\n%s", c.name, c.report)
		}
		// The time is since the start; the events, since the checkpoint.
		if secs := atof(m[1]); secs < c.from || secs > c.to || atoi(m[2]) == 0 {
			t.Errorf("%s report: total time %ss, %s events; want %.1f-%.1f s and some events", c.name, m[1], m[2], c.from, c.to)
		}
		if !strings.Contains(c.report, "transactions:                        "+m[2]+" ") {
			t.Errorf("%s report: its transactions are not its %s events:\n%s", c.name, m[2], c.report)
		}
	}

	// The forced shutdown: the table is locked once the threads started.
	stdout := &signalWriter{want: "Threads started!\n", seen: make(chan struct{})}
	var stderr bytes.Buffer
	done := make(chan int)
	go func() { done <- cli.Main(ctx, append(args, "--time=1", "--forced-shutdown=1", "run"), stdout, &stderr) }()
	select {
	case <-stdout.seen:
	case code := <-done:
		t.Fatalf("run ended (exit %d) before its threads started:\n%s%s", code, stdout.String(), stderr.String())
	}
	holder := connect(t, strings.Replace(u.String(), u.Path, "/"+db, 1))
	if err := holder.Exec(ctx, "LOCK TABLES sbtest1 WRITE"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	code := <-done
	took := time.Since(began)
	if err := holder.Exec(ctx, "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	if code != 2 || !strings.Contains(out, "Forcing shutdown in 2 seconds\n") ||
		!strings.Contains(out, "\nFATAL: The --max-time limit has expired, forcing shutdown...\nSQL statistics:\n") ||
		!strings.Contains(out, "\n\nNumber of unfinished transactions on forced shutdown: 1\n\nGeneral statistics:\n") {
		t.Fatalf("forced shutdown: exit %d, want 2 and sysbench's lines:\n%s%s", code, out, stderr.String())
	}
	if took > 4*time.Second {
		t.Errorf("the forced shutdown came %v after the lock; want it at 2 s after the start", took)
	}
	if o := dbmark(t, ctx, append(args, "cleanup")...); o.code != 0 {
		t.Fatalf("cleanup: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
}

func atof(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

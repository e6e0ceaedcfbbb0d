package htmlreport_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/result"
)

// sample makes real results on the embedded SQLite: a sweep of
// oltp_point_select (threads 1,2 x rand-type uniform,special, two iterations
// each, linked by one SweepRef as a sweep links its runs), two
// oltp_read_write runs to overlay, and two insert benchmark runs (series
// keyed by rows). Every run samples the OS counters. measure is each run's
// measured time.
func sample(t *testing.T, measure time.Duration) []htmlreport.Run {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("DBMARK_HOME", dir)
	t.Setenv("DBMARK_TARGET", "")
	t.Setenv("DBMARK_STORE", "")
	warm := measure / 3
	var runs []htmlreport.Run
	run := func(workload string, args ...string) *result.Result {
		t.Helper()
		doc := filepath.Join(dir, fmt.Sprintf("run%d.json", len(runs)+1))
		args = append([]string{"run", workload, "--time", measure.String(), "--warmup", warm.String(),
			"--report-interval", (measure / 16).String(), "--no-store", "--json", doc}, args...)
		var out, errb bytes.Buffer
		if code := cli.Main(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("dbmark %v: exit %d: %s", args, code, errb.String())
		}
		r := readDoc(t, doc)
		runs = append(runs, htmlreport.Run{ID: int64(len(runs) + 1), Result: r})
		return r
	}
	sweep := "5f0c2d9e-sweep-test"
	for _, threads := range []int{1, 2} {
		for _, rt := range []string{"uniform", "special"} {
			for it := 1; it <= 2; it++ {
				r := run("oltp_point_select", "--threads", strconv.Itoa(threads), "--rand-type", rt)
				r.Sweep = &result.SweepRef{ID: sweep, Cell: map[string]string{"threads": strconv.Itoa(threads), "rand-type": rt}, Iteration: it}
			}
		}
	}
	for _, threads := range []string{"1", "2"} {
		run("oltp_read_write", "--threads", threads)
	}
	for _, inserters := range []string{"1", "2"} {
		run("iibench", "--recreate", "--inserters", inserters, "--report-rows", "2000")
	}
	return runs
}

var shared struct {
	sync.Mutex
	runs []htmlreport.Run
}

// sharedSample is sample with a short measured time, made once for the
// tests of this package that only read it.
func sharedSample(t *testing.T) []htmlreport.Run {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.runs == nil {
		shared.runs = sample(t, 1600*time.Millisecond)
	}
	return shared.runs
}

// readDoc reads the result document a run wrote with --json.
func readDoc(t *testing.T, path string) *result.Result {
	t.Helper()
	r, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// library is the embedded chart library. Without it (a build before `make
// assets`) the rendering tests cannot run; CI always has it.
func library(t *testing.T) []byte {
	t.Helper()
	lib, err := htmlreport.ChartLibrary()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return lib
}

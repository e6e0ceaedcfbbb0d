package compat

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/result"
)

// sysbench fileio and dbmark fileio, given the same options on a small file
// set, do the same mix of requests: the same number of events, and the same
// shares of reads, writes and fsyncs among the operations. (sysbench prints
// rates, not counts, over a time that on runs this short differs from the
// span its counters cover, so shares are compared, not counts.)
func TestFileioMixMatchesSysbench(t *testing.T) {
	sb, err := exec.LookPath("sysbench")
	if err != nil {
		t.Skipf("sysbench not found (%v): install the sysbench package to run the compatibility tests", err)
	}
	t.Setenv("DBMARK_HOME", t.TempDir())
	for _, c := range []struct {
		name string
		opts []string
	}{
		{"rndrw", []string{"--file-test-mode=rndrw", "--file-rw-ratio=1.5", "--file-fsync-freq=10"}},
		{"rndrw-ratio3-fdatasync", []string{"--file-test-mode=rndrw", "--file-rw-ratio=3", "--file-fsync-freq=7", "--file-fsync-mode=fdatasync"}},
		{"rndwr-fsync-all", []string{"--file-test-mode=rndwr", "--file-fsync-all=on"}},
		{"seqrewr", []string{"--file-test-mode=seqrewr", "--file-fsync-freq=50"}},
		{"seqrd", []string{"--file-test-mode=seqrd"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			common := append([]string{"--file-num=3", "--file-total-size=12M", "--file-block-size=16384"}, c.opts...)
			dir := t.TempDir()
			cmd := exec.Command(sb, append(append([]string{"fileio"}, common...), "prepare")...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("sysbench prepare: %v\n%s", err, out)
			}
			cmd = exec.Command(sb, append(append([]string{"fileio", "--threads=1", "--events=1500", "--time=0"}, common...), "run")...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("sysbench run: %v\n%s", err, out)
			}
			want := sysbenchMix(t, out)

			ddir := t.TempDir()
			dopts := append([]string{"--dir", ddir}, common...)
			var o, e bytes.Buffer
			if code := cli.Main(context.Background(), append([]string{"prepare", "fileio"}, dopts...), &o, &e); code != 0 {
				t.Fatalf("dbmark prepare: %s", e.String())
			}
			js := filepath.Join(t.TempDir(), "r.json")
			if code := cli.Main(context.Background(), append([]string{"run", "fileio", "--threads=1", "--events=1500", "--time=0", "--no-store", "--json", js}, dopts...), &o, &e); code != 0 {
				t.Fatalf("dbmark run: %s", e.String())
			}
			r := readJSON(t, js)
			got := mix{events: float64(r.Summary.Events)}
			for _, op := range r.Summary.Ops {
				switch op.Name {
				case "read":
					got.reads = float64(op.Count)
				case "write":
					got.writes = float64(op.Count)
				case "fsync":
					got.fsyncs = float64(op.Count)
				}
			}
			t.Logf("sysbench %+v, dbmark %+v (shares of reads, writes, fsyncs)", want.shares(), got.shares())
			if got.events != want.events {
				t.Fatalf("events: dbmark %v, sysbench %v", got.events, want.events)
			}
			g, w := got.shares(), want.shares()
			for i, name := range []string{"reads", "writes", "fsyncs"} {
				// sysbench prints rates to two decimals over its own
				// elapsed time: allow 1% (and 0.002 for tiny shares).
				if d := g[i] - w[i]; d > 0.01*w[i]+0.002 || -d > 0.01*w[i]+0.002 {
					t.Errorf("share of %s: dbmark %.4f, sysbench %.4f", name, g[i], w[i])
				}
			}
		})
	}
}

type mix struct{ events, reads, writes, fsyncs float64 }

// shares are the fractions of reads, writes and fsyncs among the operations.
func (m mix) shares() [3]float64 {
	n := m.reads + m.writes + m.fsyncs
	return [3]float64{m.reads / n, m.writes / n, m.fsyncs / n}
}

// sysbenchMix reads sysbench fileio's report: rates and the total time
// give the counts.
func sysbenchMix(t *testing.T, out []byte) mix {
	t.Helper()
	num := func(re string) float64 {
		m := regexp.MustCompile(re + `\s+([0-9.]+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("no %q in sysbench's output:\n%s", re, out)
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	secs := num(`total time:`)
	return mix{events: num(`total number of events:`), reads: num(`reads/s:`) * secs,
		writes: num(`writes/s:`) * secs, fsyncs: num(`fsyncs/s:`) * secs}
}

func readJSON(t *testing.T, path string) *result.Result {
	t.Helper()
	r, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

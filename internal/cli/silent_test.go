package cli_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/target/targettest"
)

// A full disk is not an error to ignore: the message says to free space
// or move the target, never to add its code to --ignore-errors.
func TestFullDiskHintIsNotToIgnore(t *testing.T) {
	home(t)
	dir := mountTmpfs(t, "size=4m")
	ctx := context.Background()
	tg := "sqlite://" + filepath.Join(dir, "t.db")
	if o := dbmark(t, ctx, "prepare", "oltp_insert", "--target", tg, "--table-size", "1000"); o.code != 0 {
		t.Fatalf("prepare: exit %d: %s", o.code, o.stderr)
	}
	// Full but for room to open the database (its WAL and shared memory).
	fillUp(t, dir)
	fill := filepath.Join(dir, "fill")
	st, err := os.Stat(fill)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(fill, st.Size()-128<<10); err != nil {
		t.Fatal(err)
	}
	o := dbmark(t, ctx, "run", "oltp_insert", "--target", tg, "--table-size", "1000", "--time", "2")
	if o.code == 0 {
		t.Fatalf("a run on a full disk passed: %s", o.stdout)
	}
	last := lastLine(o.stderr)
	if !strings.Contains(last, "SQLITE_13") || !strings.Contains(last, "free space") || strings.Contains(last, "--ignore-errors") {
		t.Errorf("the full disk's message: %q", last)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// An unknown flag before the command is named, not taken for the
// command's value: "unknown command "list"" sent the user looking at the
// wrong word.
func TestUnknownFlagBeforeTheCommandIsNamed(t *testing.T) {
	home(t)
	ctx := context.Background()
	for _, args := range [][]string{
		{"--frobnicate", "results", "list"},
		{"--frobnicate=1", "results", "list"},
		{"-q", "--frobnicate", "results", "list"},
		{"--store", "x.db", "--frobnicate", "results", "list"},
	} {
		o := dbmark(t, ctx, args...)
		oneLineError(t, o, "unknown flag: --frobnicate")
		if strings.Contains(o.stderr, "unknown command") {
			t.Errorf("%v: %s", args, o.stderr)
		}
	}
	// Known flags before the command still work.
	if o := dbmark(t, ctx, "-q", "--verbosity", "3", "results", "list"); o.code != 0 {
		t.Errorf("known flags before the command: exit %d: %s", o.code, o.stderr)
	}
	oneLineError(t, dbmark(t, ctx, "--stor", "x.db", "results", "list"), "did you mean --store?")
}

// With --no-store and no --json nothing is kept: a failed run does not
// say that its partial result was.
func TestNoStoreFailureDoesNotSayKept(t *testing.T) {
	home(t)
	ctx := context.Background()
	tg := "sqlite://" + filepath.Join(t.TempDir(), "t.db")
	if o := dbmark(t, ctx, "prepare", "oltp_point_select", "--target", tg, "--table-size", "100"); o.code != 0 {
		t.Fatalf("prepare: exit %d: %s", o.code, o.stderr)
	}
	// A rate that schedules no event in the time: a failed run.
	o := dbmark(t, ctx, "run", "oltp_point_select", "--target", tg, "--table-size", "100", "--time", "1", "--rate", "0.0001", "--no-store")
	last := lastLine(o.stderr)
	if o.code == 0 || strings.Contains(last, "was kept") || !strings.Contains(last, "not kept") {
		t.Errorf("--no-store without --json: exit %d, %q", o.code, last)
	}
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	o = dbmark(t, ctx, "run", "oltp_point_select", "--target", tg, "--table-size", "100", "--time", "1", "--rate", "0.0001", "--no-store", "--json", jsonPath)
	if last := lastLine(o.stderr); o.code == 0 || !strings.Contains(last, "the partial result was kept") {
		t.Errorf("--no-store with --json: exit %d, %q", o.code, last)
	}
}

// silentSite listens on 127.0.0.1, accepts and never answers: a site
// that hangs.
func silentSite(t *testing.T) string {
	return "http://" + targettest.Listen(t, func(c net.Conn) {
		defer c.Close()
		_, _ = io.Copy(io.Discard, c) // read what comes, answer nothing, until the test ends
	})
}

// storedRun makes one stored run on the embedded database.
func storedRun(t *testing.T) {
	t.Helper()
	if o := dbmark(t, context.Background(), "run", "oltp_point_select", "--time", "0.5", "--table-size", "100"); o.code != 0 {
		t.Fatalf("run: exit %d: %s", o.code, o.stderr)
	}
}

// submit and reproduce give up on a silent site as a connect does: after
// 10 s by default, or --timeout.
func TestSiteThatNeverAnswersTimesOut(t *testing.T) {
	home(t)
	storedRun(t)
	site := silentSite(t)
	ctx := context.Background()
	for _, c := range []struct {
		args  []string
		bound time.Duration
	}{
		{[]string{"submit", "1", "--server", site}, 10 * time.Second},
		{[]string{"submit", "1", "--server", site, "--timeout", "1s"}, time.Second},
		{[]string{"reproduce", site + "/r/abcdefabcdef", "--timeout", "1s"}, time.Second},
	} {
		start := time.Now()
		o := dbmark(t, ctx, c.args...)
		took := time.Since(start)
		if o.code == 0 || !strings.Contains(lastLine(o.stderr), "no answer within "+c.bound.String()) || !strings.Contains(o.stderr, "--timeout") {
			t.Errorf("%v: exit %d, %q", c.args, o.code, o.stderr)
		}
		if took < c.bound-100*time.Millisecond || took > c.bound+5*time.Second {
			t.Errorf("%v: gave up after %v, want about %v", c.args, took, c.bound)
		}
	}
	oneLineError(t, dbmark(t, ctx, "submit", "1", "--server", site, "--timeout", "0s"), "--timeout")
}

// SIGTERM during a submission says it was cancelled, not that what was
// measured is kept; a second signal during a run says the result is lost.
func TestSignalNoticesSayWhatBecomesOfTheWork(t *testing.T) {
	home(t)
	storedRun(t)
	p := startDbmark(t, "submit", "1", "--server", silentSite(t), "--timeout", "30s")
	time.Sleep(500 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := p.wait(t, 10*time.Second)
	if s := p.stderr.String(); code == 0 || strings.Contains(s, "keeping what was measured") || !strings.Contains(s, "cancelling the submission") ||
		!strings.Contains(lastLine(s), "submission was cancelled") {
		t.Errorf("SIGTERM during submit: exit %d, stderr %q", code, s)
	}

	p = startDbmark(t, "run", "oltp_point_select", "--time", "60", "--table-size", "100", "--report-interval", "200ms")
	p.waitFor(t, "[ ", 30*time.Second)
	_ = p.cmd.Process.Signal(os.Interrupt)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.stderr.String(), "press Ctrl-C again"); {
		if time.Now().After(deadline) {
			t.Fatalf("no notice after the first SIGINT: %s", p.stderr)
		}
		time.Sleep(time.Millisecond)
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	p.wait(t, 10*time.Second)
	if s := p.stderr.String(); !strings.Contains(s, "keeping what was measured") || !strings.Contains(s, "quitting at once: the result of the run under way is not kept") {
		t.Errorf("two SIGINTs during a run: stderr %q", s)
	}
}

// --store in a missing directory is refused as --json's is: one line,
// before anything is measured, and nothing created.
func TestStoreInAMissingDirectoryIsRefusedBeforeTheRun(t *testing.T) {
	h := home(t)
	dir := filepath.Join(h, "no", "such")
	start := time.Now()
	o := dbmark(t, context.Background(), "run", "oltp_point_select", "--time", "30", "--table-size", "100", "--store", filepath.Join(dir, "x.db"))
	oneLineError(t, o, "does not exist")
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("refused after %v: the run was measured first", took)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the directory was created: %v", err)
	}
}

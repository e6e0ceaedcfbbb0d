package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/site"
)

var servingRE = regexp.MustCompile(`serving the results site on (http://\S+)`)

// serve starts `dbmark serve` in-process on a free port with args, and
// returns its URL and a function that stops it (as SIGTERM does) and
// returns its exit code.
func serve(t *testing.T, args ...string) (string, func() (int, string)) {
	t.Helper()
	u, _, stop := serveOut(t, args...)
	return u, stop
}

// serveOut is serve, with what the server printed on stdout.
func serveOut(t *testing.T, args ...string) (string, *syncBuffer, func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), &out, &errb)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := servingRE.FindStringSubmatch(out.String()); m != nil {
			stopped := false
			var code int
			stop := func() (int, string) {
				if !stopped {
					cancel()
					code, stopped = <-done, true
				}
				return code, errb.String()
			}
			t.Cleanup(func() { stop() })
			return m[1], &out, stop
		}
		select {
		case code := <-done:
			cancel()
			t.Fatalf("serve exited %d: %s", code, errb.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start: %s", errb.String())
		}
	}
}

func TestSubmitToServe(t *testing.T) {
	home(t)
	ctx := context.Background()
	for _, args := range [][]string{
		{"run", "oltp_point_select", "--time", "1s"},
		{"run", "oltp_point_select", "--time", "1s", "--threads", "2"},
		{"sweep", "oltp_point_select", "--threads", "1,2", "--time", "1s"},
	} {
		if o := dbmark(t, ctx, args...); o.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, o.code, o.stderr)
		}
	}
	url, stop := serve(t, "--store", filepath.Join(t.TempDir(), "site.db"))

	o := dbmark(t, ctx, "submit", "1", "--server", url, "--tag", "env=ci")
	if o.code != 0 || !strings.HasPrefix(o.stdout, url+"/r/") {
		t.Fatalf("submit: exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	link := strings.TrimSpace(o.stdout)
	again := dbmark(t, ctx, "submit", "1", "--server", url+"/", "--note", "once more")
	if again.code != 0 || strings.TrimSpace(again.stdout) != link {
		t.Errorf("same result again: exit %d, %q, want %q (%s)", again.code, again.stdout, link, again.stderr)
	}

	// What the site holds is the redacted document: no host name.
	host, _ := os.Hostname()
	res, err := http.Get(url + "/api/v1/results/" + link[strings.LastIndex(link, "/")+1:])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var d site.ResultDetail
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	if len(d.Submission.Runs) != 1 || d.Submission.Runs[0].Environment.Hostname != "(redacted)" || d.Submission.Tags["env"] != "ci" {
		t.Errorf("stored submission: %+v", d.Submission.Runs[0].Environment)
	}
	if len(host) > 3 && bytes.Contains(body, []byte(host)) {
		t.Errorf("the site holds the host name %q", host)
	}

	// --dry-run prints exactly the bytes a submission sends.
	dry := dbmark(t, ctx, "submit", "2", "--dry-run", "--note", "n")
	if dry.code != 0 {
		t.Fatalf("dry run: %d %s", dry.code, dry.stderr)
	}
	var got []byte
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"aaaaaaaaaaaa","url":"http://example.invalid/r/aaaaaaaaaaaa","created":true}`)
	}))
	defer rec.Close()
	if o := dbmark(t, ctx, "submit", "2", "--server", rec.URL, "--note", "n"); o.code != 0 {
		t.Fatalf("submit to the recorder: %d %s", o.code, o.stderr)
	}
	if !bytes.Equal(got, []byte(dry.stdout)) {
		t.Errorf("dry run printed %d bytes, the submission sent %d different ones", len(dry.stdout), len(got))
	}
	// It says on standard error what redaction took out: at least the
	// host name the environment recorded.
	if !strings.Contains(dry.stderr, "values removed or masked") || !strings.Contains(dry.stderr, "runs[0].environment.") || !strings.Contains(dry.stderr, "nothing was sent") {
		t.Errorf("dry run's note on stderr: %q", dry.stderr)
	}

	// A note the site would refuse is refused here, on a dry run too,
	// with what to do instead of the site's circular advice.
	for _, args := range [][]string{
		{"submit", "2", "--dry-run", "--note", "ran on /home/alice/box"},
		{"submit", "2", "--server", rec.URL, "--note", "ran on /home/alice/box"},
	} {
		got = nil
		o := dbmark(t, ctx, args...)
		oneLineError(t, o, "--note holds personal data")
		if strings.Contains(o.stderr, "submit with dbmark submit") || !strings.Contains(o.stderr, "write it without them") || o.stdout != "" || got != nil {
			t.Errorf("%v: stdout %q, stderr %q, sent %d bytes", args, o.stdout, o.stderr, len(got))
		}
	}
	oneLineError(t, dbmark(t, ctx, "submit", "2", "--dry-run", "--reproduces", "nope"), "--reproduces: not a result id")

	// A sweep is one entry with its runs.
	sw := dbmark(t, ctx, "submit", "sweep:1", "--server", url)
	if sw.code != 0 {
		t.Fatalf("submit sweep: %d %s", sw.code, sw.stderr)
	}
	id := strings.TrimSpace(sw.stdout)
	id = id[strings.LastIndex(id, "/")+1:]
	res, err = http.Get(url + "/api/v1/results/" + id)
	if err != nil {
		t.Fatal(err)
	}
	d = site.ResultDetail{}
	json.NewDecoder(res.Body).Decode(&d)
	res.Body.Close()
	if d.Kind != "sweep" || d.Runs < 2 || d.Runs != len(d.Submission.Runs) || d.Submission.Sweep == nil {
		t.Errorf("sweep entry: kind %q, %d runs", d.Kind, d.Runs)
	}
	res, err = http.Get(url + "/r/" + id)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Contains(page, []byte("a sweep of")) || !bytes.Contains(page, []byte(`class="chart"`)) {
		t.Errorf("the sweep's page: %d", res.StatusCode)
	}

	// Reproduce the first result here and publish it linked to it.
	rep := dbmark(t, ctx, "reproduce", link, "--submit")
	lines := strings.Split(strings.TrimSpace(rep.stdout), "\n")
	if rep.code != 0 || !strings.HasPrefix(lines[0], "reproducing "+link+": dbmark run oltp_point_select") ||
		!strings.HasPrefix(lines[len(lines)-1], url+"/r/") {
		t.Fatalf("reproduce: exit %d\n%s\n%s", rep.code, rep.stdout, rep.stderr)
	}
	repID := lines[len(lines)-1][len(url+"/r/"):]

	// The command it prints (and whatever it says after) keeps the
	// target's password to itself.
	if os.Getenv("DBMARK_TEST_MYSQL") != "" {
		u := serverURL(t, "DBMARK_TEST_MYSQL")
		pw, _ := u.User.Password()
		o := dbmark(t, ctx, "reproduce", link, "--target", u.String())
		if !strings.HasPrefix(o.stdout, "reproducing "+link+": dbmark run oltp_point_select") {
			t.Errorf("reproduce on MariaDB printed %q", o.stdout)
		}
		if strings.Contains(o.stdout+o.stderr, u.User.Username()+":"+pw+"@") {
			t.Errorf("reproduce printed the target's password:\n%s\n%s", o.stdout, o.stderr)
		}
	}
	res, err = http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if !bytes.Contains(page, []byte("Reproductions")) || !bytes.Contains(page, []byte(repID)) {
		t.Errorf("the original's page does not list its reproduction %s", repID)
	}
	oneLineError(t, dbmark(t, ctx, "reproduce", "not-a-url"), "not a result's permalink")
	oneLineError(t, dbmark(t, ctx, "reproduce", url+"/r/zzzzzzzzzzzz"), "has no result zzzzzzzzzzzz")

	// What the server would refuse is refused before sending: one line
	// naming the option, exit 1.
	oneLineError(t, dbmark(t, ctx, "submit", "2", "--server", url, "--note", "mail bob@example.com"), "--note holds personal data")
	oneLineError(t, dbmark(t, ctx, "submit", "2", "--server", url, "--tag", "Bad Key=1"), "--tag Bad Key: a tag's key is")

	if code, logs := stop(); code != 0 {
		t.Errorf("serve stopped with exit %d: %s", code, logs)
	} else if !strings.Contains(logs, "shutting down") || !strings.Contains(logs, "status=201") {
		t.Errorf("serve's log lacks the access log or the shutdown: %s", logs)
	}
}

func TestSubmitAndServeBadInput(t *testing.T) {
	home(t)
	ctx := context.Background()
	if o := dbmark(t, ctx, "run", "oltp_point_select", "--time", "1s"); o.code != 0 {
		t.Fatalf("run: %d %s", o.code, o.stderr)
	}
	if o := dbmark(t, ctx, "run", "oltp_point_select", "--time", "1s", "--threads", "2"); o.code != 0 {
		t.Fatalf("run: %d %s", o.code, o.stderr)
	}

	// A port nothing listens on.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + ln.Addr().String()
	ln.Close()
	o := dbmark(t, ctx, "submit", "1", "--server", down)
	unavailable(t, o, "cannot reach")

	oneLineError(t, dbmark(t, ctx, "submit", "1", "--server", "ftp://example.org"), "not an http:// or https:// URL")
	oneLineError(t, dbmark(t, ctx, "submit", "1", "--server", "::nonsense"), "not an http:// or https:// URL")
	oneLineError(t, dbmark(t, ctx, "submit", "1"), "--server is required")
	oneLineError(t, dbmark(t, ctx, "submit", "99", "--server", down), `no result "99"`)
	oneLineError(t, dbmark(t, ctx, "submit", "1", "--server", down, "--tag", "novalue"), `--tag "novalue"`)

	// 413: a cap smaller than any real result.
	small, _ := serve(t, "--store", filepath.Join(t.TempDir(), "small.db"), "--max-body", "4K")
	oneLineError(t, dbmark(t, ctx, "submit", "1", "--server", small), "too large")

	// 429: one submission a minute.
	limited, _ := serve(t, "--store", filepath.Join(t.TempDir(), "limited.db"), "--submit-per-minute", "1")
	if o := dbmark(t, ctx, "submit", "1", "--server", limited); o.code != 0 {
		t.Fatalf("first submission: %d %s", o.code, o.stderr)
	}
	unavailable(t, dbmark(t, ctx, "submit", "2", "--server", limited), "try again in")

	// A server that is not a results site.
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	unavailable(t, dbmark(t, ctx, "submit", "1", "--server", plain.URL), "is it a dbmark results site?")

	// serve's own bad input.
	busy, _ := net.Listen("tcp", "127.0.0.1:0")
	defer busy.Close()
	oneLineError(t, dbmark(t, ctx, "serve", "--listen", busy.Addr().String(), "--store", filepath.Join(t.TempDir(), "s.db")), "cannot listen on")
	oneLineError(t, dbmark(t, ctx, "serve", "--store", "mysql://x/y"), "neither a file nor a postgres:// URL")
	oneLineError(t, dbmark(t, ctx, "serve", "--admin-token-file", filepath.Join(t.TempDir(), "none")), "--admin-token-file")
	loose := filepath.Join(t.TempDir(), "token")
	os.WriteFile(loose, []byte("0123456789abcdef0123456789abcdef\n"), 0o644)
	oneLineError(t, dbmark(t, ctx, "serve", "--admin-token-file", loose), "chmod 600")
	oneLineError(t, dbmark(t, ctx, "serve", "--max-in-flight", "-1"), "--max-in-flight -1: must be at least 1")
	oneLineError(t, dbmark(t, ctx, "serve", "--queue-wait", "0s"), "--queue-wait 0s: must be at least 1ms")
}

// unavailable checks a failure trying again may cure: exit 3, one line.
func unavailable(t *testing.T, o outcome, want string) {
	t.Helper()
	if o.code != cli.ExitUnavailable {
		t.Fatalf("exit %d, want %d; stderr: %s", o.code, cli.ExitUnavailable, o.stderr)
	}
	lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "dbmark: ") || !strings.Contains(lines[0], want) {
		t.Fatalf("stderr %q: want one line naming %q", o.stderr, want)
	}
}

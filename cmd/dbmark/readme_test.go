package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/target"
)

// readmeDB is the database the README's server examples use here, on both
// servers, so they do not touch the data of other tests.
const readmeDB = "dbmark_readme"

// envAssign is a shell variable assignment before a command.
var envAssign = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// instantAssign is the one shell variable the examples set on a line of
// its own: an instant ahead, in RFC 3339, for hosts to start together.
var instantAssign = regexp.MustCompile(`^([A-Z_][A-Z0-9_]*)=\$\(date -u -d '\+([0-9]+) sec' \+%Y-%m-%dT%H:%M:%SZ\)`)

// shorter keeps the examples to a couple of minutes: the same commands
// with shorter runs and smaller data. Each pair is replaced everywhere in
// the block, so a prepare and the runs on its data change alike.
var shorter = []string{
	"--time 30s", "--time 1s",
	"--time 10s", "--time 1s",
	"--time 5s", "--time 1s",
	"--time 5 ", "--time 1 ",
	"--time 2 ", "--time 1 ",
	" -T 10", " -T 1",
	"--table-size 100000", "--table-size 10000",
	"--table_size 100000", "--table_size 10000",
	"--file-total-size 1G", "--file-total-size 64M",
	"--file-total-size 256M", "--file-total-size 32M",
	" -s 10", " -s 1",
	"--scale 100000", "--scale 10000",
	"--max-rows 2e5 --report-rows 5e4", "--max-rows 2e4 --report-rows 5e3",
	"--max-rows 1e6 --report-rows 1e5", "--max-rows 1e5 --report-rows 2e4",
	"--max-rows 12e5", "--max-rows 12e4",
	"--db-ps-mode disable", "--db-ps-mode disable --time 1s",
	"quick -o quick.html", "quick -o quick.html --time 1 --warmup 0",
	"'+10 sec'", "'+5 sec'",
}

// TestReadmeExamples runs the README's example block in order, as pasted,
// in a fresh data directory: the embedded SQLite ones always, the server
// ones against the private test servers (bash scripts/testenv.sh start),
// in a database of their own. Every command must exit 0. Each command is
// the built dbmark, as bin/dbmark is, run in the test's directory with
// the test's environment: nothing of the test process changes, so the
// examples run at the same time as the other tests of several hosts.
func TestReadmeExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("the README's examples take a couple of minutes")
	}
	t.Parallel()
	bin := buildDbmark(t)
	block := exampleBlock(t)
	// The example files the README names by their place in the repository.
	examples, err := filepath.Abs(filepath.Join("..", "..", "docs", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	env := append(os.Environ(), "DBMARK_HOME="+filepath.Join(work, "home"), "DBMARK_TARGET=", "DBMARK_STORE=")
	// inWork is a path of a command line, relative to the test's directory
	// as the shell's are to its working directory.
	inWork := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(work, p)
	}
	// File I/O with --direct needs a real disk, as the README's /var/tmp is.
	fileDir := filepath.Join(work, "fileio")
	if d, err := os.MkdirTemp("/var/tmp", "dbmark-readme-"); err == nil {
		fileDir = d
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	pairs := append([]string{}, shorter...)
	pairs = append(pairs,
		"/var/tmp/dbmark-fileio", filepath.Join(fileDir, "fileio"),
		"/var/tmp/dbmark-sweep", filepath.Join(fileDir, "sweep"),
		"docs/examples/", examples+"/",
		"@127.0.0.1:55432/bench", "@127.0.0.1:55432/"+readmeDB,
		"postgres:///bench?", "postgres:///"+readmeDB+"?",
		"@127.0.0.1:53306/sbtest", "@127.0.0.1:53306/"+readmeDB,
		"@localhost/sbtest?", "@localhost/"+readmeDB+"?",
		"--mysql-db=sbtest", "--mysql-db="+readmeDB, // dbmark sysbench's connection options
		"-t 100 bench ", "-t 100 "+readmeDB+" ", // pgbench's database name after its options
		"-U bench -i -s 10 bench", "-U bench -i -s 1 "+readmeDB,
		"-U bench -c 8 -T 10 -P 1 -r bench", "-U bench -c 8 -T 1 -P 1 -r "+readmeDB,
		"127.0.0.1:8080", freeAddr(t),
	)
	block = strings.NewReplacer(pairs...).Replace(block)

	servers := map[string]bool{}
	for kind, env := range map[string]string{"postgres": "DBMARK_TEST_POSTGRES", "mysql": "DBMARK_TEST_MYSQL"} {
		if raw := os.Getenv(env); raw != "" {
			createDB(t, raw)
			servers[kind] = true
		}
	}
	_, chartErr := htmlreport.ChartLibrary()

	ran := 0
	// A command sent to the background (the results site) runs until the
	// README's "kill %1", or the end of the test.
	var stopBackground func()
	var waitBackground func() int
	t.Cleanup(func() {
		if stopBackground != nil {
			stopBackground()
		}
	})
	vars := map[string]string{}
	for _, line := range strings.Split(block, "\n") {
		if m := instantAssign.FindStringSubmatch(line); m != nil {
			secs, _ := strconv.Atoi(m[2])
			vars[m[1]] = time.Now().UTC().Add(time.Duration(secs) * time.Second).Format("2006-01-02T15:04:05Z")
			continue
		}
		for name, v := range vars {
			line = strings.ReplaceAll(line, "$"+name, v)
		}
		cmds, err := parseLine(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		for _, c := range cmds {
			// NAME=value before a command sets it for that command only, as
			// a shell does (the last of a name in Env wins).
			cmdEnv := slices.Clone(env)
			for len(c.args) > 1 && envAssign.MatchString(c.args[0]) {
				cmdEnv = append(cmdEnv, c.args[0])
				c.args = c.args[1:]
			}
			switch {
			case c.args[0] == "make":
				t.Logf("skipped (the test runs the dbmark it built): %s", line)
				continue
			case c.args[0] == "kill" && len(c.args) == 2 && c.args[1] == "%1":
				if stopBackground == nil {
					t.Fatalf("%s: nothing runs in the background", line)
				}
				stopBackground()
				stopBackground = nil
				continue
			case c.args[0] == "wait" && len(c.args) == 1:
				// As a shell's wait: the command in the background ends
				// by itself (a run started with others), and must succeed.
				if waitBackground == nil {
					t.Fatalf("%s: nothing runs in the background", line)
				}
				if code := waitBackground(); code != 0 {
					t.Fatalf("README example in the background failed with exit %d: %s", code, line)
				}
				stopBackground, waitBackground = nil, nil
				continue
			case c.args[0] == "mkdir":
				if err := os.MkdirAll(inWork(c.args[len(c.args)-1]), 0o755); err != nil {
					t.Fatal(err)
				}
				continue
			case c.args[0] != "bin/dbmark":
				t.Fatalf("the README runs %q, which this test does not know", c.args[0])
			}
			if kind := needsServer(line); kind != "" && !servers[kind] {
				t.Logf("skipped (no %s test server: bash scripts/testenv.sh start, then eval its env): %s", kind, line)
				continue
			}
			if (c.args[1] == "quick" || c.args[1] == "report") && chartErr != nil {
				t.Logf("skipped (%v): %s", chartErr, line)
				continue
			}
			if c.background {
				stopBackground, waitBackground = background(t, exampleCmd(bin, work, cmdEnv, c.args[1:]))
				ran++
				continue
			}
			var out, errb bytes.Buffer
			cmd := exampleCmd(bin, work, cmdEnv, c.args[1:])
			cmd.Stdout, cmd.Stderr = &out, &errb
			start := time.Now()
			code := exitCode(t, cmd.Run())
			t.Logf("%.1fs exit %d: %s", time.Since(start).Seconds(), code, strings.Join(c.args, " "))
			if code != 0 && strings.Contains(line, "--strict") && strings.Contains(errb.String(), "--strict") {
				continue // exit 1 while a preflight warning stands, as the README says
			}
			if code != 0 {
				t.Fatalf("README example failed with exit %d:\n%s\nstderr:\n%s", code, line, errb.String())
			}
			if c.stdout != "" {
				if err := os.WriteFile(inWork(c.stdout), out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ran++
		}
	}
	if ran < 20 {
		t.Fatalf("only %d examples ran: is the README's example block where this test looks?", ran)
	}
}

// exampleBlock is the first fenced block after the README's "## Examples".
func exampleBlock(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## Examples\n")
	if !ok {
		t.Fatal("README.md has no ## Examples section")
	}
	_, rest, ok = strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatal("README.md's Examples section has no fenced block")
	}
	block, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatal("README.md's example block does not end")
	}
	return block
}

// needsServer names the server a line targets, or "".
func needsServer(line string) string {
	switch {
	case strings.Contains(line, ":55432") || strings.Contains(line, "-p 55432") || strings.Contains(line, "/pg/sock"):
		return "postgres"
	case strings.Contains(line, ":53306") || strings.Contains(line, "mysqld.sock") || strings.Contains(line, "--mysql-port=53306"):
		return "mysql"
	}
	return ""
}

// command is one command of a line: its words, and the file its standard
// output goes to ("" for none).
type command struct {
	args       []string
	stdout     string
	background bool // ends in a single &: runs until "kill %1"
}

// parseLine splits a line of the README as a shell would for what the
// README uses: words, 'single' and "double" quotes, a # comment, && and
// a > redirect.
func parseLine(line string) ([]command, error) {
	var cmds []command
	var cur command
	var word strings.Builder
	inWord, redirect := false, false
	end := func() {
		if !inWord {
			return
		}
		if redirect {
			cur.stdout, redirect = word.String(), false
		} else {
			cur.args = append(cur.args, word.String())
		}
		word.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case ch == '\'' || ch == '"':
			j := strings.IndexByte(line[i+1:], ch)
			if j < 0 {
				return nil, errors.New("unterminated quote")
			}
			word.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case ch == ' ' || ch == '\t':
			end()
		case ch == '#' && !inWord:
			i = len(line)
		case ch == '>' && !inWord:
			redirect = true
		case ch == '&' && !inWord && strings.HasPrefix(line[i:], "&&"):
			cmds = append(cmds, cur)
			cur = command{}
			i++
		case ch == '&' && !inWord:
			cur.background = true
		default:
			word.WriteByte(ch)
			inWord = true
		}
	}
	end()
	if len(cur.args) > 0 {
		cmds = append(cmds, cur)
	}
	return cmds, nil
}

// createDB creates readmeDB on the server raw names, if missing.
func createDB(t *testing.T, raw string) {
	t.Helper()
	ctx := context.Background()
	app := cli.NewApp(nil, nil, nil)
	tg, err := app.Targets.Open(ctx, raw, target.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", raw, err)
	}
	defer tg.Close()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatalf("connect to %s: %v", tg.Redacted(), err)
	}
	defer c.Close()
	if err := c.Exec(ctx, "CREATE DATABASE "+readmeDB); err != nil && !strings.Contains(err.Error(), "exists") {
		u, _ := url.Parse(raw)
		t.Fatalf("create database %s on %s: %v", readmeDB, u.Redacted(), err)
	}
}

// freeAddr is a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// exampleCmd is the built dbmark at bin with args, in dir with env.
func exampleCmd(bin, dir string, env, args []string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// exitCode is the exit code of a command that ran with err; a command
// that could not start fails t.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// background starts cmd and returns a stop, which sends it SIGTERM as a
// shell's kill does, and a wait for its end by itself; a command with
// --listen is waited for until it answers there.
func background(t *testing.T, cmd *exec.Cmd) (stop func(), wait func() int) {
	t.Helper()
	// errb is read only once the command has ended (Wait has copied all).
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	args := cmd.Args[1:]
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(ended)
	}()
	for i, a := range args {
		if a != "--listen" || i+1 >= len(args) {
			continue
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			if c, err := net.Dial("tcp", args[i+1]); err == nil {
				c.Close()
				break
			}
			select {
			case <-ended:
				t.Fatalf("dbmark %s ended (%v) before it listened: %s", strings.Join(args, " "), waitErr, errb.String())
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				<-ended
				t.Fatalf("dbmark %s does not listen on %s", strings.Join(args, " "), args[i+1])
			}
		}
	}
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-ended:
		case <-time.After(15 * time.Second):
			t.Errorf("dbmark %s did not end 15 s after SIGTERM", strings.Join(args, " "))
			_ = cmd.Process.Kill()
			<-ended
		}
	}
	wait = func() int {
		<-ended
		code := exitCode(t, waitErr)
		if code != 0 {
			t.Logf("dbmark %s: %s", strings.Join(args, " "), errb.String())
		}
		return code
	}
	return stop, wait
}

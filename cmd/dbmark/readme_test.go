package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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
}

// TestReadmeExamples runs the README's example block in order, as pasted,
// in a fresh data directory: the embedded SQLite ones always, the server
// ones against the private test servers (bash scripts/testenv.sh start),
// in a database of their own. Every command must exit 0.
func TestReadmeExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("the README's examples take a couple of minutes")
	}
	block := exampleBlock(t)
	// The example files the README names by their place in the repository.
	examples, err := filepath.Abs(filepath.Join("..", "..", "docs", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	t.Setenv("DBMARK_HOME", filepath.Join(work, "home"))
	t.Setenv("DBMARK_TARGET", "")
	t.Setenv("DBMARK_STORE", "")
	t.Chdir(work)
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

	ctx := context.Background()
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
	for _, line := range strings.Split(block, "\n") {
		cmds, err := parseLine(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		for _, c := range cmds {
			// NAME=value before a command sets it for that command only, as
			// a shell does.
			var restore []func()
			for len(c.args) > 1 && envAssign.MatchString(c.args[0]) {
				name, value, _ := strings.Cut(c.args[0], "=")
				old, had := os.LookupEnv(name)
				t.Setenv(name, value)
				restore = append(restore, func() {
					if had {
						os.Setenv(name, old)
					} else {
						os.Unsetenv(name)
					}
				})
				c.args = c.args[1:]
			}
			unset := func() {
				for _, r := range restore {
					r()
				}
			}
			switch {
			case c.args[0] == "make":
				t.Logf("skipped (the test runs dbmark in-process, built with the test): %s", line)
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
				if err := os.MkdirAll(c.args[len(c.args)-1], 0o755); err != nil {
					t.Fatal(err)
				}
				continue
			case c.args[0] != "bin/dbmark":
				t.Fatalf("the README runs %q, which this test does not know", c.args[0])
			}
			if kind := needsServer(line); kind != "" && !servers[kind] {
				t.Logf("skipped (no %s test server: bash scripts/testenv.sh start, then eval its env): %s", kind, line)
				unset()
				continue
			}
			if (c.args[1] == "quick" || c.args[1] == "report") && chartErr != nil {
				t.Logf("skipped (%v): %s", chartErr, line)
				unset()
				continue
			}
			if c.background {
				stopBackground, waitBackground = background(t, c.args[1:])
				ran++
				continue
			}
			var out, errb bytes.Buffer
			start := time.Now()
			code := cli.Main(ctx, c.args[1:], &out, &errb)
			unset()
			t.Logf("%.1fs exit %d: %s", time.Since(start).Seconds(), code, strings.Join(c.args, " "))
			if code != 0 && strings.Contains(line, "--strict") && strings.Contains(errb.String(), "--strict") {
				continue // exit 1 while a preflight warning stands, as the README says
			}
			if code != 0 {
				t.Fatalf("README example failed with exit %d:\n%s\nstderr:\n%s", code, line, errb.String())
			}
			if c.stdout != "" {
				if err := os.WriteFile(c.stdout, out.Bytes(), 0o644); err != nil {
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

// background runs dbmark with args until the returned stop is called; a
// command with --listen is waited for until it answers there.
func background(t *testing.T, args []string) (stop func(), wait func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- cli.Main(ctx, args, io.Discard, &errb) }()
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
			case code := <-done:
				cancel()
				t.Fatalf("dbmark %s ended with exit %d before it listened: %s", strings.Join(args, " "), code, errb.String())
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("dbmark %s does not listen on %s", strings.Join(args, " "), args[i+1])
			}
		}
	}
	var code int
	ended := make(chan struct{})
	go func() {
		code = <-done
		close(ended)
	}()
	stop = func() {
		cancel()
		select {
		case <-ended:
		case <-time.After(15 * time.Second):
			t.Errorf("dbmark %s did not end 15 s after it was told to", strings.Join(args, " "))
		}
	}
	wait = func() int {
		<-ended
		if code != 0 {
			t.Logf("dbmark %s: %s", strings.Join(args, " "), errb.String())
		}
		return code
	}
	return stop, wait
}

package main

// The Ansible recipe in deploy/ansible (docs/scale-out.md): the playbook
// checked, and run on two hosts that are this machine, its secret in a
// vault, its merged result submitted to a results site of the test's.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/workload/workloadtest"
)

func TestAnsibleRecipe(t *testing.T) {
	t.Parallel()
	playbook := tool(t, "DBMARK_TEST_ANSIBLE_PLAYBOOK", "ansible-playbook")
	vault := filepath.Join(filepath.Dir(playbook), "ansible-vault")
	recipe := filepath.Join("..", "..", "deploy", "ansible")
	work := t.TempDir()
	env := append(os.Environ(), "ANSIBLE_NOCOLOR=1", "ANSIBLE_HOME="+filepath.Join(work, "ansible"),
		"ANSIBLE_ASYNC_DIR="+filepath.Join(work, "async"), "DBMARK_HOME="+work, "DBMARK_STORE=", "DBMARK_TARGET=")
	ansible := func(prog string, args ...string) ([]byte, error) {
		cmd := exec.Command(prog, args...)
		cmd.Env = env
		return cmd.CombinedOutput()
	}
	if out, err := ansible(playbook, "--syntax-check", "-i", filepath.Join(recipe, "inventory.example.ini"), filepath.Join(recipe, "playbook.yml")); err != nil {
		t.Fatalf("ansible-playbook --syntax-check: %v\n%s", err, out)
	}

	// The database, with its password where a user keeps it: in a vault.
	target := "sqlite://" + filepath.Join(work, "bench.db")
	if raw := os.Getenv("DBMARK_TEST_POSTGRES"); raw != "" {
		target = workloadtest.PostgresDB(t, raw, "dbmark_deploy_ansible")
	}
	pw, vars := filepath.Join(work, "vault-password"), filepath.Join(work, "vault.yml")
	os.WriteFile(pw, []byte("not-a-real-vault-password\n"), 0o600)
	os.WriteFile(vars, []byte(fmt.Sprintf("dbmark_target: %q\n", target)), 0o600)
	if out, err := ansible(vault, "encrypt", "--vault-password-file", pw, vars); err != nil {
		t.Fatalf("ansible-vault encrypt: %v\n%s", err, out)
	}
	// Two hosts that are this machine.
	inv := filepath.Join(work, "inventory.ini")
	var lines []string
	for _, h := range []string{"h1", "h2"} {
		lines = append(lines, fmt.Sprintf("%s ansible_connection=local ansible_python_interpreter={{ansible_playbook_python}} dbmark_remote_dir=%s", h, filepath.Join(work, h)))
	}
	os.WriteFile(inv, []byte("[dbmark_clients]\n"+strings.Join(lines, "\n")+"\n"), 0o644)
	site := resultsSite(t, work)
	bin := buildDbmark(t)
	// The playbook picks the instant one task before the runs start, and
	// dbmark refuses an instant already past when it starts. Starting the
	// runs took 5 to 8 s on 2 cores with a load of 11 to 13, so the lead
	// is 15 s; where starting them took longer than the lead, the playbook
	// runs again with twice the lead. That costs a run on a machine too
	// slow for the lead, where a longer lead would cost every run its wait.
	var (
		out, all []byte // the last run's output, every run's
		err      error
		results  string
		began    time.Time
	)
	for startIn := 15; ; startIn *= 2 {
		results = filepath.Join(work, fmt.Sprintf("results-%ds", startIn))
		extra, _ := json.Marshal(map[string]any{
			"dbmark_binary": bin, "dbmark_prepare": true, "dbmark_options": "--table-size 1000",
			"dbmark_run_options": "--threads 2 --time 2s --warmup 1s", "dbmark_start_in": startIn, "dbmark_poll": 1,
			"dbmark_results_dir": results, "dbmark_results_site": site,
		})
		// -vvv shows each command a task runs, and the environment it is given.
		began = time.Now()
		out, err = ansible(playbook, "-vvv", "-i", inv, "--vault-password-file", pw, "-e", "@"+vars, "-e", string(extra), filepath.Join(recipe, "playbook.yml"))
		all = append(all, out...)
		if err == nil || !startAtPassed.Match(out) || startIn >= 60 {
			break
		}
		t.Logf("the instant %ds ahead had passed when a host started (%s): once more with %ds", startIn, startAtPassed.Find(out), 2*startIn)
	}
	if err != nil {
		t.Fatalf("ansible-playbook: %v\n%s", err, out)
	}
	var ahead []string
	for _, m := range readyAhead.FindAllSubmatch(out, -1) {
		if !slices.Contains(ahead, string(m[1])) { // -vvv shows a line more than once
			ahead = append(ahead, string(m[1]))
		}
	}
	t.Logf("the playbook ran in %s; the hosts were ready %v before the instant", time.Since(began).Round(time.Second), ahead)
	if strings.Contains(string(all), target) || (strings.Contains(target, "@") && strings.Contains(string(all), target[:strings.Index(target, "@")])) {
		t.Fatalf("the target's URL is in the playbook's output:\n%s", all)
	}
	for _, h := range []string{"h1", "h2"} {
		if _, err := os.Stat(filepath.Join(work, h, "target")); !os.IsNotExist(err) {
			t.Fatalf("the target's file is left on %s (%v)", h, err)
		}
	}
	runs, _ := filepath.Glob(filepath.Join(results, "*", "merged.json"))
	if len(runs) != 1 {
		t.Fatalf("merged results %v, want one\n%s", runs, out)
	}
	var events int64
	var at time.Time
	for _, h := range []string{"h1", "h2"} {
		r := readResult(t, filepath.Join(filepath.Dir(runs[0]), h+".json"))
		if r.ClientID != h || r.StartAt == nil || (!at.IsZero() && !r.StartAt.At.Equal(at)) {
			t.Fatalf("%s: client %q, start %+v, want the other host's %v", h, r.ClientID, r.StartAt, at)
		}
		at = r.StartAt.At
		events += r.Summary.Events
	}
	m := readResult(t, runs[0])
	if len(m.Clients) != 2 || m.Summary.Events != events || m.Run.Threads != 4 {
		t.Fatalf("merged: %d clients, %d events, %d threads; want 2, %d, 4", len(m.Clients), m.Summary.Events, m.Run.Threads, events)
	}
	if !regexp.MustCompile(`/r/[0-9a-zA-Z-]+`).Match(out) {
		t.Fatalf("the merged result was not submitted to the results site:\n%s", out)
	}
}

// startAtPassed is dbmark's refusal of a --start-at instant that had
// passed when it started (internal/cli's startFlags.resolve).
var startAtPassed = regexp.MustCompile(`--start-at \S+ is \S+ in the past`)

// readyAhead is how long before the instant a host's run was ready
// (its "Measuring from" line).
var readyAhead = regexp.MustCompile(`Measuring from \S+ \(in ([^)]+)\)`)

// resultsSite starts `dbmark serve` on a free port for the test and
// returns its URL once it answers.
func resultsSite(t *testing.T, work string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, buildDbmark(t), "serve", "--listen", addr, "--store", filepath.Join(work, "site.db"))
	cmd.Env = append(os.Environ(), "DBMARK_HOME="+work)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/"); err == nil {
			resp.Body.Close()
			return "http://" + addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("dbmark serve did not answer on %s within 30s:\n%s", addr, log.String())
		}
	}
}

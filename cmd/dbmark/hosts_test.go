package main

// What the tests of several client hosts share: the recipes in deploy/
// (deploy_test.go) and hosts in network namespaces (netns_test.go) run
// the built command, as the hosts would.

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

var built struct {
	once sync.Once
	dir  string
	err  error
	out  []byte
}

// buildDbmark builds this command once per test process and returns its
// path; the directory goes when the process ends.
func buildDbmark(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "dbmark-hosts-test-")
		if built.err != nil {
			return
		}
		built.out, built.err = exec.Command("go", "build", "-tags", "sqlite_dbstat", "-o", filepath.Join(built.dir, "dbmark"), ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return filepath.Join(built.dir, "dbmark")
}

// TestMain removes the built command after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

func readResult(t *testing.T, path string) *result.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := result.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// tool is the path of a command the test needs: $env (set by
// scripts/deploy-tools.sh env), else name on the PATH. Without it the test
// is skipped, except in CI, where `make test` installs it.
func tool(t *testing.T, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed: make test installs it (scripts/deploy-tools.sh)", name)
	}
	t.Skipf("%s is not installed: scripts/deploy-tools.sh install (as root), or make deploy-check", name)
	return ""
}

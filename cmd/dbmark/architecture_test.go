package main

import (
	"bufio"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
)

// docs/architecture.md's table of packages is the code's: every package
// it names exists, and every package that exists is named.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	named := documentedPackages(t, filepath.Join(root, "docs", "architecture.md"))
	have := map[string]bool{}
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") {
				rel, _ := filepath.Rel(root, filepath.Dir(p))
				have[filepath.ToSlash(rel)] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var missing, gone []string
	for p := range have {
		if !named[p] {
			missing = append(missing, p)
		}
	}
	for p := range named {
		if !have[p] {
			gone = append(gone, p)
		}
	}
	sort.Strings(missing)
	sort.Strings(gone)
	if len(missing) > 0 {
		t.Errorf("packages docs/architecture.md does not name: %s", strings.Join(missing, ", "))
	}
	if len(gone) > 0 {
		t.Errorf("docs/architecture.md names packages that do not exist: %s", strings.Join(gone, ", "))
	}
}

// documentedPackages reads the first code block of the architecture page:
// a line "dir/   what it does" names a package, and an indented one a
// package under the last line less indented.
func documentedPackages(t *testing.T, path string) map[string]bool {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	var stack []string // the directory at each indent level (two spaces)
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			if in {
				break
			}
			in = true
			continue
		}
		if !in || strings.TrimSpace(line) == "" {
			continue
		}
		name := strings.Fields(line)[0]
		if !strings.HasSuffix(name, "/") {
			continue // a file: scripts/testenv.sh
		}
		level := (len(line) - len(strings.TrimLeft(line, " "))) / 2
		if level > len(stack) {
			t.Fatalf("%s: %q is indented under nothing", path, line)
		}
		stack = append(stack[:level], strings.TrimSuffix(name, "/"))
		dir := strings.Join(stack, "/")
		if strings.HasPrefix(dir, "cmd/") || strings.HasPrefix(dir, "internal/") {
			out[dir] = true
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no package table found", path)
	}
	return out
}

// The helpers tests share (test servers, a browser, the suites engines,
// stores and workloads pass) stay out of the binary, and the browser's is
// imported by tests alone: it starts Chromium, which only a test may do.
func TestTestHelpersStayInTests(t *testing.T) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		gocmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	list := func(dir string, args ...string) []string {
		t.Helper()
		cmd := exec.Command(gocmd, append([]string{"list", "-tags", "sqlite_dbstat"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	const module = "github.com/dbmark/dbmark/"
	for _, p := range list(".", "-deps", ".") {
		base := path.Base(p)
		if strings.HasPrefix(p, module) && (strings.HasPrefix(base, "test") || strings.HasSuffix(base, "test")) ||
			strings.HasPrefix(p, "github.com/chromedp/") {
			t.Errorf("the dbmark binary links %s, a test helper", p)
		}
	}
	for _, line := range list(filepath.Join("..", ".."), "-f", `{{.ImportPath}}: {{join .Imports " "}}`, "./...") {
		pkg, imports, _ := strings.Cut(line, ": ")
		if slices.Contains(strings.Fields(imports), module+"internal/testchrome") {
			t.Errorf("%s imports internal/testchrome outside its tests", pkg)
		}
	}
}

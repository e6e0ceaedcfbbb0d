package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/result"
)

// pathsIn returns every string of the document that is an absolute path
// outside the kernel's trees, as a run recorded it.
func pathsIn(doc string) []string {
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			for _, f := range strings.FieldsFunc(x, func(r rune) bool { return strings.ContainsRune(" ,=?&[]\"", r) }) {
				f = strings.TrimRight(f, ":.")
				if len(f) > 2 && strings.HasPrefix(f, "/") && !strings.HasPrefix(f, "/dev/") &&
					!strings.HasPrefix(f, "/sys/") && !strings.HasPrefix(f, "/proc/") {
					out = append(out, f)
				}
			}
		}
	}
	walk(v)
	return out
}

// unescape undoes the escapes a page's JSON may use for a slash.
var unescape = strings.NewReplacer(`\/`, "/", `\u002f`, "/", `\u002F`, "/", "&#x2F;", "/", "&#47;", "/")

// TestRedactionDropsEveryPath runs each kind of run that records paths
// outside a home directory (the embedded SQLite with a custom script, file
// I/O on a directory, PostgreSQL and MariaDB over their sockets, whose
// settings name data directories, configuration files, sockets and logs)
// and checks that neither the export nor a redacted report holds any of
// them, while the script's name and the file system stay.
func TestRedactionDropsEveryPath(t *testing.T) {
	dir := home(t)
	ctx := context.Background()
	script := selectOne(t)
	fdir := t.TempDir()
	fileio := []string{"--dir", fdir, "--file-num", "1", "--file-total-size", "4M"}
	if o := dbmark(t, ctx, append([]string{"prepare", "fileio"}, fileio...)...); o.code != 0 {
		t.Fatalf("prepare fileio: %s", o.stderr)
	}
	runs := map[string][]string{
		"sqlite": {"run", "tpcb", "-n", "-f", script, "--time", "1", "--json", filepath.Join(dir, "r.json")},
		"fileio": append([]string{"run", "fileio", "--mode", "rndrd", "--time", "1"}, fileio...),
	}
	if u := os.Getenv("DBMARK_TEST_POSTGRES_SOCKET"); u != "" {
		runs["postgres"] = []string{"run", "tpcb", "-n", "-f", script, "--target", u, "--time", "1"}
	}
	if u := os.Getenv("DBMARK_TEST_MYSQL_SOCKET"); u != "" {
		runs["mariadb"] = []string{"run", "tpcb", "-n", "-f", script, "--target", u, "--time", "1"}
	}
	if len(runs) < 4 {
		t.Log("PostgreSQL or MariaDB not set (make test starts them): their settings are not checked")
	}
	_, haveLib := htmlreport.ChartLibrary()
	id := 0
	for _, name := range []string{"sqlite", "fileio", "postgres", "mariadb"} {
		args, ok := runs[name]
		if !ok {
			continue
		}
		id++
		t.Run(name, func(t *testing.T) {
			if o := dbmark(t, ctx, args...); o.code != 0 {
				t.Fatalf("run: exit %d: %s", o.code, o.stderr)
			}
			ref := []string{"results", "export", strconv.Itoa(id)}
			raw := dbmark(t, ctx, append(ref, "--no-redact")...).stdout
			paths := pathsIn(raw)
			if len(paths) == 0 {
				t.Fatalf("the stored result holds no path to look for:\n%s", raw)
			}
			o := dbmark(t, ctx, ref...)
			if o.code != 0 {
				t.Fatalf("export: %s", o.stderr)
			}
			for _, p := range paths {
				if strings.Contains(o.stdout, p) {
					t.Errorf("%s survived the export", p)
				}
			}
			r, err := result.Unmarshal([]byte(o.stdout))
			if err != nil {
				t.Fatal(err)
			}
			full, _ := result.Unmarshal([]byte(raw))
			checkKept(t, name, full, r)

			if haveLib != nil {
				return
			}
			for _, redacted := range []bool{false, true} {
				out := filepath.Join(dir, name+".html")
				args := []string{"report", "-o", out, strconv.Itoa(id)}
				if redacted {
					args = append(args, "--redact")
				}
				if o := dbmark(t, ctx, args...); o.code != 0 {
					t.Fatalf("report: %s", o.stderr)
				}
				// A one-second run may end before its first counter sample,
				// so the page is not held to a number of charts.
				page := unescape.Replace(readWholePage(t, out))
				for _, p := range []string{full.Target.DataDir, full.Environment.Mounts[0].Path} {
					if strings.Contains(page, p) != !redacted {
						t.Errorf("report (redacted: %v): %s in the page: %v", redacted, p, !redacted)
					}
				}
				if redacted {
					for _, p := range paths {
						if strings.Contains(page, p) {
							t.Errorf("%s survived report --redact", p)
						}
					}
				}
			}
		})
	}
}

// checkKept checks what the redacted result r still says of the paths of
// full: the script's base name, the file system, the engine's files'
// names.
func checkKept(t *testing.T, name string, full, r *result.Result) {
	t.Helper()
	doc, _ := json.Marshal(r)
	if name != "fileio" && !strings.Contains(string(doc), `"(redacted)/select1.sql"`) {
		t.Errorf("the script's name is lost: %v", r.Command)
	}
	for i, m := range r.Environment.Mounts {
		if m.FSType == "" || m.FSType != full.Environment.Mounts[i].FSType || m.Path != "(redacted)" {
			t.Errorf("mount %d: %+v", i, m)
		}
	}
	if r.Target.DataDir != "(redacted)" {
		t.Errorf("data directory %q", r.Target.DataDir)
	}
	want := map[string]map[string]string{
		"fileio":   {"fs_type": full.Target.Settings["fs_type"]},
		"postgres": {"data_directory": "(redacted)", "config_file": "(redacted)/postgresql.conf", "hba_file": "(redacted)/pg_hba.conf", "unix_socket_directories": "(redacted)"},
		"mariadb":  {"datadir": "(redacted)", "socket": "(redacted)/mysqld.sock", "pid_file": "(redacted)/mysqld.pid"},
	}[name]
	for k, v := range want {
		if full.Target.Settings[k] == "" || r.Target.Settings[k] != v {
			t.Errorf("setting %s: %q, redacted to %q, want %q", k, full.Target.Settings[k], r.Target.Settings[k], v)
		}
	}
}

// A published file I/O run has no directory any more: reproducing it says
// which option to give and the command to give it to, in one line.
func TestReproduceAskedForARedactedPath(t *testing.T) {
	home(t)
	ctx := context.Background()
	fileio := []string{"--dir", t.TempDir(), "--file-num", "1", "--file-total-size", "4M"}
	if o := dbmark(t, ctx, append([]string{"prepare", "fileio"}, fileio...)...); o.code != 0 {
		t.Fatalf("prepare: %s", o.stderr)
	}
	if o := dbmark(t, ctx, append([]string{"run", "fileio", "--mode", "seqrd", "--time", "1"}, fileio...)...); o.code != 0 {
		t.Fatalf("run: %s", o.stderr)
	}
	url, _ := serve(t, "--store", filepath.Join(t.TempDir(), "site.db"))
	o := dbmark(t, ctx, "submit", "1", "--server", url)
	if o.code != 0 {
		t.Fatalf("submit: %s", o.stderr)
	}
	o = dbmark(t, ctx, "reproduce", strings.TrimSpace(o.stdout))
	oneLineError(t, o, "the published run's --dir held a path")
	if !strings.Contains(o.stderr, "dbmark run fileio ") || !strings.Contains(o.stderr, "--mode=seqrd") {
		t.Errorf("no command to run: %s", o.stderr)
	}
	if _, err := os.Stat("(redacted)"); err == nil {
		t.Error("reproduce made a directory named after the mask")
	}
}

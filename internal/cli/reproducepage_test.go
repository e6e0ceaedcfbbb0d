package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/site"
)

var scriptRE = regexp.MustCompile(`(?s)<pre class="cmd" id="reproduce-script">(.*?)</pre>`)

// TestReproduceScriptRunsAsPasted publishes a real quick-suite step and a
// real sweep (testdata: dbmark submit --dry-run of each), takes the
// script from each result's page, sets its TARGET line to the test
// PostgreSQL server as a user would, and runs it in a shell with the
// dbmark built from this tree: it must prepare, run, keep the result and
// publish it as a reproduction, which the original's page then lists.
func TestReproduceScriptRunsAsPasted(t *testing.T) {
	pg := os.Getenv("DBMARK_TEST_POSTGRES")
	if pg == "" {
		t.Skip("DBMARK_TEST_POSTGRES is not set")
	}
	bin := dbmarkBinary(t)
	home(t)
	ctx := context.Background()
	base, _ := serve(t, "--store", filepath.Join(t.TempDir(), "site.db"))
	t.Cleanup(func() { dbmark(t, ctx, "cleanup", "oltp_read_write", "--target", pg) })
	t.Cleanup(func() { dbmark(t, ctx, "cleanup", "oltp_point_select", "--target", pg) })
	for _, name := range []string{"quick-step", "sweep"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "submission-"+name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := http.Post(base+"/api/v1/results", "application/json", bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			var ans site.SubmitAnswer
			err = json.NewDecoder(res.Body).Decode(&ans)
			res.Body.Close()
			if err != nil || ans.ID == "" {
				t.Fatalf("publish: %s %v", res.Status, err)
			}
			m := scriptRE.FindStringSubmatch(getPage(t, base+"/r/"+ans.ID))
			if m == nil {
				t.Fatal("the result page has no reproduction script")
			}
			script := html.UnescapeString(m[1])
			for _, bad := range []string{"(redacted)", "--no-store", "--json", "--store"} {
				if strings.Contains(script, bad) {
					t.Errorf("the script holds %q:\n%s", bad, script)
				}
			}
			// The user's one edit: the line that says where.
			target := regexp.MustCompile(`(?m)^TARGET=.*$`)
			if !target.MatchString(script) || !strings.Contains(script, `--target "$TARGET"`) {
				t.Fatalf("the script has no TARGET line to fill in:\n%s", script)
			}
			script = target.ReplaceAllLiteralString(script, "TARGET='"+pg+"'")
			cmd := exec.CommandContext(ctx, "sh", "-e", "-c", script)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the script failed: %v\n%s\n%s", err, script, out)
			}
			link := regexp.MustCompile(regexp.QuoteMeta(base) + `/r/([a-z2-7]{12})`).FindSubmatch(out)
			if link == nil {
				t.Fatalf("the script published nothing:\n%s", out)
			}
			if page := getPage(t, base+"/r/"+ans.ID); !strings.Contains(page, `href="/r/`+string(link[1])+`"`) {
				t.Errorf("the original's page does not list its reproduction %s", link[1])
			}
		})
	}
}

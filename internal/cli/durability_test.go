package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDurabilityFlagged runs on each engine once with durable settings and
// once with one that is not (set for the run with --server-set, which puts
// the server's own back after), and follows the flag from the preflight's
// warning to the site's pages and both compares. The test servers run
// with fsync=off and innodb_flush_log_at_trx_commit=2 themselves: the
// durable run sets them on.
func TestDurabilityFlagged(t *testing.T) {
	home(t)
	ctx := context.Background()
	site, _ := serve(t, "--store", filepath.Join(t.TempDir(), "site.db"))
	type engine struct {
		name, target    string
		durable, unsafe []string
		want            string
	}
	engines := []engine{{"sqlite", "sqlite://" + filepath.Join(t.TempDir(), "d.db"),
		[]string{"synchronous=FULL"}, []string{"synchronous=OFF"}, "synchronous=OFF"}}
	if pg := os.Getenv("DBMARK_TEST_POSTGRES"); pg != "" {
		on := []string{"fsync=on", "full_page_writes=on"}
		engines = append(engines, engine{"postgres", pg, append(on, "synchronous_commit=on"), append(on, "synchronous_commit=off"), "synchronous_commit=off"})
	}
	if my := os.Getenv("DBMARK_TEST_MYSQL"); my != "" {
		engines = append(engines, engine{"mysql", my, []string{"innodb_flush_log_at_trx_commit=1"}, []string{"innodb_flush_log_at_trx_commit=2"}, "innodb_flush_log_at_trx_commit=2"})
	}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			common := []string{"oltp_point_select", "--target", e.target, "--table-size", "100"}
			dbmark(t, ctx, append([]string{"cleanup"}, common...)...)
			if o := dbmark(t, ctx, append([]string{"prepare"}, common...)...); o.code != 0 {
				t.Fatalf("prepare: %d %s", o.code, o.stderr)
			}
			t.Cleanup(func() { dbmark(t, ctx, append([]string{"cleanup"}, common...)...) })
			ids, stored := map[bool]string{}, map[bool]string{}
			for _, safe := range []bool{true, false} {
				args := append([]string{"run"}, common...)
				args = append(args, "--events", "200")
				sets := e.unsafe
				if safe {
					sets = e.durable
				}
				for _, s := range sets {
					args = append(args, "--server-set", s)
				}
				o := dbmark(t, ctx, args...)
				if o.code != 0 {
					t.Fatalf("%v: %d %s", args, o.code, o.stderr)
				}
				if m := savedRE.FindStringSubmatch(o.stdout + o.stderr); m != nil {
					stored[safe] = m[1]
				}
				flagged := strings.Contains(o.stderr, "warning: durability is off: "+e.want+" (")
				if flagged == safe || safe && strings.Contains(o.stderr, "durability is off") {
					t.Fatalf("durable %v: the preflight's warning is wrong:\n%s", safe, o.stderr)
				}
				sub := dbmark(t, ctx, "submit", "last", "--server", site)
				if sub.code != 0 {
					t.Fatalf("submit: %d %s", sub.code, sub.stderr)
				}
				link := strings.TrimSpace(sub.stdout)
				ids[safe] = link[strings.LastIndex(link, "/")+1:]
				page := getPage(t, link)
				if strings.Contains(page, `id="not-durable"`) == safe || !safe && !strings.Contains(page, e.want) {
					t.Errorf("durable %v: the result page's flag is wrong", safe)
				}
			}
			// Lists mark it, and filter by it.
			list := getPage(t, site+"/results?"+url.Values{"durability": {"not durable"}, "engine": {engineOf(t, site, ids[false])}}.Encode())
			if !strings.Contains(list, ids[false]) || strings.Contains(list, ids[true]) || !strings.Contains(list, `class="badge not-durable"`) {
				t.Errorf("the list of results that are not durable is wrong:\n%s", list)
			}
			// The site's compare, page and API, and the command's.
			cmp := getPage(t, site+"/compare?ids="+ids[true]+","+ids[false])
			if !strings.Contains(cmp, ids[false]+" was not durable: durability is off: "+e.want) || strings.Contains(cmp, ids[true]+" was not durable") {
				t.Errorf("the compare page does not say which side was not durable")
			}
			var api struct {
				NotDurable []string `json:"not_durable"`
			}
			if err := json.Unmarshal([]byte(getPage(t, site+"/api/v1/compare?ids="+ids[true]+","+ids[false])), &api); err != nil || len(api.NotDurable) != 2 {
				t.Errorf("the compare API's not_durable: %v %q", err, api.NotDurable)
			}
			o := dbmark(t, ctx, "compare", stored[true], stored[false])
			if o.code != 0 || !strings.Contains(o.stdout, "warning: B was not durable: durability is off: "+e.want) {
				t.Errorf("dbmark compare does not say B was not durable:\n%s", o.stdout)
			}
		})
	}
}

var savedRE = regexp.MustCompile(`result (\d+) saved`)

// getPage fetches a page and fails the test on anything but 200.
func getPage(t *testing.T, u string) string {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", u, res.Status, b)
	}
	return string(b)
}

// engineOf is the engine facet of a published result.
func engineOf(t *testing.T, site, id string) string {
	var d struct {
		Facets map[string]string `json:"facets"`
	}
	if err := json.Unmarshal([]byte(getPage(t, site+"/api/v1/results/"+id)), &d); err != nil {
		t.Fatal(err)
	}
	return d.Facets["engine"]
}

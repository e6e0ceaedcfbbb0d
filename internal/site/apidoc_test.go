package site_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/site"
)

// TestAPIPage: every operation of the OpenAPI document is on the API
// page, with its parameters and answers, and the page links the JSON.
func TestAPIPage(t *testing.T) {
	ts := newServer(t, t.TempDir()+"/site.db", nil)
	a := ts.do("GET", "/api", nil)
	if a.Status != http.StatusOK || !strings.HasPrefix(a.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/api: %d %s", a.Status, a.Header.Get("Content-Type"))
	}
	body := string(a.Body)
	doc, err := site.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if !strings.Contains(body, `<h2><code>`+method+` `+path+`</code></h2>`) || !strings.Contains(body, `id="op-`+op.OperationID+`"`) {
				t.Errorf("%s %s is not on the page", method, path)
			}
			for _, p := range op.Parameters {
				if !strings.Contains(body, "<code>"+p.Value.Name+"</code>") {
					t.Errorf("%s %s: parameter %s is not on the page", method, path, p.Value.Name)
				}
			}
		}
	}
	for _, want := range []string{`href="/api/v1/openapi.json"`, "<code>next_cursor</code>", "<code>differing</code>", "<code>429</code>", "admin: <code>Authorization: Bearer TOKEN</code>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the API page lacks %s", want)
		}
	}
	if strings.Contains(body, "<script") && !strings.Contains(body, `<script src="/static/`) {
		t.Error("the API page has a script of its own")
	}
	// The raw document is beside it, unchanged.
	var raw map[string]any
	ts.do("GET", "/api/v1/openapi.json", nil).json(t, &raw)
	if raw["openapi"] != "3.0.3" {
		t.Errorf("openapi.json: %v", raw["openapi"])
	}
	t.Logf("API page: %d bytes", len(a.Body))
}

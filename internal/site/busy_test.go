package site_test

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/dbmark/dbmark/internal/site"
)

// TestBusy holds the only slot of a server with a submission that waits on
// the store's write lock (taken here, as another writer would), then checks
// that every request that does work is answered 503 with Retry-After, in
// the API's JSON and as a page, while the static files, the OpenAPI
// document and the held submission still complete.
func TestBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "site.db")
	ts := newServer(t, path, func(c *site.Config) { c.MaxInFlight, c.QueueWait = 1, 20*time.Millisecond })
	base := realRun(t, "oltp_point_select")
	id := ts.mustSubmit(submission(base))

	ctx := context.Background()
	db, err := sql.Open("sqlite3", path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	held := make(chan answer, 1)
	go func() { held <- ts.submit(submission(variant(t, base, nil))) }()

	// The held submission takes the slot once its body is read.
	deadline := time.Now().Add(10 * time.Second)
	for ts.do("GET", "/api/v1/results/"+id, nil).Status != http.StatusServiceUnavailable {
		if time.Now().After(deadline) {
			t.Fatal("the site never answered busy while its only slot was held")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, c := range []struct {
		method, path string
		body         bool
	}{
		{"GET", "/api/v1/results", false},
		{"GET", "/api/v1/results/" + id, false},
		{"GET", "/api/v1/compare?ids=" + id + "," + id, false},
		{"POST", "/api/v1/results", true},
		{"GET", "/", false},
		{"GET", "/results", false},
		{"GET", "/r/" + id, false},
		{"GET", "/leaderboard", false},
		{"GET", "/feed.atom", false},
	} {
		var a answer
		if c.body {
			a = ts.submit(submission(variant(t, base, nil)))
		} else {
			a = ts.do(c.method, c.path, nil)
		}
		if a.Status != http.StatusServiceUnavailable || a.Header.Get("Retry-After") != "1" {
			t.Errorf("%s %s while busy: %d, Retry-After %q, want 503 and 1", c.method, c.path, a.Status, a.Header.Get("Retry-After"))
			continue
		}
		if strings.HasPrefix(c.path, "/api/") {
			if e := a.apiError(t); !strings.Contains(e.Error, "busy") {
				t.Errorf("%s %s: error %q", c.method, c.path, e.Error)
			}
		} else if !strings.Contains(string(a.Body), "The site is busy") {
			t.Errorf("%s %s: the page does not say the site is busy:\n%.300s", c.method, c.path, a.Body)
		}
	}
	for _, p := range []string{"/static/site.css", "/api/v1/openapi.json"} {
		if a := ts.do("GET", p, nil); a.Status != http.StatusOK {
			t.Errorf("GET %s while busy: %d, want 200 (it needs no slot)", p, a.Status)
		}
	}

	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if a := <-held; a.Status != http.StatusCreated {
		t.Errorf("the held submission: %d %s", a.Status, a.Body)
	}
	if a := ts.do("GET", "/results", nil); a.Status != http.StatusOK {
		t.Errorf("/results once free: %d", a.Status)
	}
}

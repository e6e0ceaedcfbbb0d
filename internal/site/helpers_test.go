package site_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/google/uuid"

	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site"
	"github.com/dbmark/dbmark/internal/site/sitestore"
	"github.com/dbmark/dbmark/internal/store/storetest"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/sqlite"
)

// realRun reads a result a real run of the embedded SQLite workload
// recorded, redacted by dbmark results export (testdata).
func realRun(t testing.TB, name string) *result.Result {
	t.Helper()
	r, err := result.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// variant is a copy of r as a different run (its own id), changed by fn.
func variant(t testing.TB, r *result.Result, fn func(*result.Result)) *result.Result {
	t.Helper()
	b, _ := json.Marshal(r)
	var c result.Result
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	c.ID = uuid.NewString()
	if fn != nil {
		fn(&c)
	}
	return &c
}

func submission(runs ...*result.Result) *site.Submission {
	return &site.Submission{Format: site.SubmissionFormat, Runs: runs}
}

// backends runs fn once with each store: a SQLite file, and the private
// PostgreSQL server when DBMARK_TEST_STORE_POSTGRES names it.
var backends = storetest.Backends

type testServer struct {
	*httptest.Server
	t     *testing.T
	store *sitestore.Store
	clock *clock
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newServer starts the site on a real store at dsn, every API request and
// answer checked against the OpenAPI document.
func newServer(t *testing.T, dsn string, mod func(*site.Config)) *testServer {
	t.Helper()
	ctx := context.Background()
	st, err := sitestore.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lib, _ := htmlreport.ChartLibrary()
	c := &clock{now: time.Now()}
	cfg := site.Config{Store: st, AdminToken: "s3cret-admin-token", ChartLibrary: lib, Now: c.Now,
		Limits: sitestore.Limits{PerMinute: 1000, PerDay: 100000}, Durability: engines().Unsafe}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := site.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(contract(t, srv.Handler()))
	t.Cleanup(ts.Close)
	return &testServer{Server: ts, t: t, store: st, clock: c}
}

var (
	routerOnce sync.Once
	router     routers.Router
	routerErr  error
	// exercised collects the API operations and statuses the tests saw.
	exercised sync.Map
)

// invalidRequest marks a request a test makes wrong on purpose: its answer
// is still checked, the request is not.
const invalidRequest = "X-Test-Invalid-Request"

// contract checks every /api/v1/ request and answer against the OpenAPI
// document the server serves.
func contract(t *testing.T, next http.Handler) http.Handler {
	routerOnce.Do(func() {
		var doc *openapi3.T
		if doc, routerErr = site.OpenAPI(); routerErr != nil {
			return
		}
		if routerErr = doc.Validate(context.Background()); routerErr != nil {
			return
		}
		router, routerErr = legacy.NewRouter(doc)
	})
	if routerErr != nil {
		t.Fatalf("OpenAPI document: %v", routerErr)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/v1/") {
			next.ServeHTTP(w, r)
			return
		}
		checkReq := r.Header.Get(invalidRequest) == ""
		r.Header.Del(invalidRequest)
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		// The document describes the JSON; a gzip body is checked inflated.
		plain := body
		if r.Header.Get("Content-Encoding") == "gzip" {
			if zr, err := gzip.NewReader(bytes.NewReader(body)); err == nil {
				if b, err := io.ReadAll(io.LimitReader(zr, 64<<20)); err == nil {
					plain = b
				}
			}
		}
		vr := r.Clone(r.Context())
		vr.Body = io.NopCloser(bytes.NewReader(plain))
		vr.Header.Del("Content-Encoding")
		vr.URL.Scheme, vr.URL.Host = "", ""
		route, params, err := router.FindRoute(vr)
		if err != nil {
			t.Errorf("contract: %s %s: not in the OpenAPI document: %v", r.Method, r.URL.Path, err)
			next.ServeHTTP(w, r)
			return
		}
		in := &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		if checkReq {
			if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
				t.Errorf("contract: request %s %s does not match the document: %v", r.Method, r.URL.Path, err)
			}
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		res := rec.Result()
		rb, _ := io.ReadAll(res.Body)
		if err := openapi3filter.ValidateResponse(r.Context(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: res.StatusCode, Header: res.Header, Body: io.NopCloser(bytes.NewReader(rb)),
			Options: &openapi3filter.Options{IncludeResponseStatus: true},
		}); err != nil {
			t.Errorf("contract: answer %d to %s %s does not match the document: %v\n%.500s", res.StatusCode, r.Method, r.URL.Path, err, rb)
		}
		exercised.Store(route.Operation.OperationID+" "+res.Status[:3], true)
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		w.Write(rb)
	})
}

type answer struct {
	Status int
	Header http.Header
	Body   []byte
}

func (a answer) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(a.Body, v); err != nil {
		t.Fatalf("answer %d is not JSON: %v\n%s", a.Status, err, a.Body)
	}
}

func (a answer) apiError(t *testing.T) site.APIError {
	t.Helper()
	var e site.APIError
	a.json(t, &e)
	return e
}

// do sends a request and reads the whole answer.
func (ts *testServer) do(method, path string, body []byte, header ...string) answer {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, bytes.NewReader(body))
	if err != nil {
		ts.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := ts.Client().Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return answer{Status: res.StatusCode, Header: res.Header, Body: b}
}

// submit posts s and returns the answer.
func (ts *testServer) submit(s *site.Submission, header ...string) answer {
	ts.t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		ts.t.Fatal(err)
	}
	return ts.do("POST", "/api/v1/results", b, header...)
}

// mustSubmit posts s and returns its id, failing on anything but 201/200.
func (ts *testServer) mustSubmit(s *site.Submission) string {
	ts.t.Helper()
	a := ts.submit(s)
	if a.Status != http.StatusCreated && a.Status != http.StatusOK {
		ts.t.Fatalf("submit: %d %s", a.Status, a.Body)
	}
	var ans site.SubmitAnswer
	a.json(ts.t, &ans)
	return ans.ID
}

// released makes r look like a run of a released build.
func released(r *result.Result) { r.Tool.Version = "1.2.0"; r.Tool.Revision = "abc123" }

// engines is a target registry with every engine, as the command wires it:
// the site's durability rules are theirs.
func engines() *target.Registry {
	r := target.NewRegistry()
	postgres.Register(r)
	mysql.Register(r)
	sqlite.Register(r)
	return r
}

package site

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/site/sitestore"
)

// Config is what a Server needs.
type Config struct {
	Store  *sitestore.Store
	Logger *slog.Logger
	// AdminToken enables moderation when not empty.
	AdminToken string
	// MaxBody caps a submission after decompression (DefaultMaxBody if 0).
	MaxBody int64
	// Limits are the submissions a client may make (DefaultLimits if zero).
	Limits sitestore.Limits
	// TrustProxy takes the client's address from the last X-Forwarded-For
	// entry, for a server behind a reverse proxy that sets it.
	TrustProxy bool
	// ChartLibrary is the script that draws the charts (the report's).
	ChartLibrary []byte
	// MaxInFlight is how many requests are worked on at once (4 per CPU
	// if 0); QueueWait is how long a request waits for one of those slots
	// (DefaultQueueWait if 0) before it is answered 503.
	MaxInFlight int
	QueueWait   time.Duration
	// LeaderboardUnreleased adds to each leaderboard a board of its own,
	// labelled, for results of unreleased builds (built from source):
	// they are never ranked with released builds.
	LeaderboardUnreleased bool
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

// DefaultLimits are a few submissions a minute and a daily cap per client.
var DefaultLimits = sitestore.Limits{PerMinute: 6, PerDay: 200}

// Server serves the site. It keeps no state beyond its store, so several
// servers can share one PostgreSQL behind a load balancer.
type Server struct {
	cfg     Config
	rateKey []byte
	csrfKey []byte
	mux     *http.ServeMux
	pages   *pages
	adm     *admission
}

// New builds a server on cfg.Store.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("site: no store")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Limits == (sitestore.Limits{}) {
		cfg.Limits = DefaultLimits
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 4 * runtime.GOMAXPROCS(0)
	}
	if cfg.QueueWait <= 0 {
		cfg.QueueWait = DefaultQueueWait
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), adm: newAdmission(cfg.MaxInFlight, cfg.QueueWait)}
	var err error
	if s.rateKey, err = cfg.Store.Secret(ctx, "rate-limit"); err != nil {
		return nil, err
	}
	if s.csrfKey, err = cfg.Store.Secret(ctx, "csrf"); err != nil {
		return nil, err
	}
	if s.pages, err = newPages(cfg.ChartLibrary); err != nil {
		return nil, err
	}
	// The facet index is built before the first request, not by it.
	if _, err := cfg.Store.Facets(ctx, sitestore.Query{}); err != nil {
		return nil, err
	}
	if err := s.backfillPeers(ctx); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("POST /api/v1/results", s.apiSubmit)
	m.HandleFunc("GET /api/v1/results", s.admitted(s.apiList))
	m.HandleFunc("GET /api/v1/results/{id}", s.admitted(s.apiGet))
	m.HandleFunc("GET /api/v1/compare", s.admitted(s.apiCompare))
	m.HandleFunc("GET /api/v1/openapi.json", s.apiOpenAPI)
	m.HandleFunc("POST /api/v1/admin/results/{id}/hide", s.admin(s.apiHide(true)))
	m.HandleFunc("POST /api/v1/admin/results/{id}/unhide", s.admin(s.apiHide(false)))
	m.HandleFunc("DELETE /api/v1/admin/results/{id}", s.admin(s.apiDelete))
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.apiError(w, r, &Error{Status: http.StatusNotFound, Msg: "no such API endpoint (see /api/v1/openapi.json)"})
	})
	s.pageRoutes(m)
}

// Handler is the server's HTTP handler with its headers and access log.
func (s *Server) Handler() http.Handler {
	return s.logged(s.secured(s.mux))
}

// secured sets the headers every answer carries: no script but this
// origin's files (no inline script, no handler attributes), nothing from
// another origin, no framing, no sniffing, no referrer. Style attributes
// are allowed ('unsafe-inline' in style-src only): the chart library sets
// them on the SVG it draws, and CSS cannot run script.
func (s *Server) secured(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "+
			"connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// logged writes one structured line per request. The client's address is
// not logged: the site keeps none.
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				s.cfg.Logger.ErrorContext(r.Context(), "handler panicked", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v))
				if sw.status == 0 {
					http.Error(sw, "internal error", http.StatusInternalServerError)
				}
			}
			s.cfg.Logger.InfoContext(r.Context(), "http", "method", r.Method, "path", r.URL.Path, "status", sw.status,
				"bytes", sw.bytes, "duration_ms", float64(time.Since(start).Microseconds())/1000)
		}()
		next.ServeHTTP(sw, r)
	})
}

// clientKey is a keyed hash of the client's address (an IPv6 client's /64,
// which one host usually holds whole): what the rate limits count by. The
// address itself is never stored or logged.
func (s *Server) clientKey(r *http.Request) string {
	addr := r.RemoteAddr
	if s.cfg.TrustProxy {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			parts := strings.Split(xff[len(xff)-1], ",")
			addr = strings.TrimSpace(parts[len(parts)-1])
		}
	}
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	if ip, err := netip.ParseAddr(addr); err == nil {
		ip = ip.Unmap()
		if ip.Is6() {
			p, _ := ip.Prefix(64)
			addr = p.String()
		} else {
			addr = ip.String()
		}
	}
	m := hmac.New(sha256.New, s.rateKey)
	m.Write([]byte(addr))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// admin lets a request through only with the admin token, compared in
// constant time, as a bearer token.
func (s *Server) admin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.isAdmin(r.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="dbmark admin"`)
			s.apiError(w, r, &Error{Status: http.StatusUnauthorized, Msg: "admin token missing or wrong"})
			return
		}
		next(w, r)
	}
}

func (s *Server) isAdmin(authorization string) bool {
	tok, ok := strings.CutPrefix(authorization, "Bearer ")
	return ok && s.tokenOK(tok)
}

func (s *Server) tokenOK(tok string) bool {
	if s.cfg.AdminToken == "" || tok == "" {
		return false
	}
	// Hashing first makes the comparison's time independent of the lengths.
	a := sha256.Sum256([]byte(tok))
	b := sha256.Sum256([]byte(s.cfg.AdminToken))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encode answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// APIError is the body of every API error.
type APIError struct {
	Error string `json:"error"`
	// Field is the JSON path of the submission's field at fault.
	Field string `json:"field,omitempty"`
}

func (s *Server) apiError(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	if !errors.As(err, &e) {
		switch {
		case errors.Is(err, sitestore.ErrNotFound):
			e = &Error{Status: http.StatusNotFound, Msg: "no such result"}
		case errors.Is(err, sitestore.ErrBadQuery):
			e = &Error{Status: http.StatusBadRequest, Msg: err.Error()}
		default:
			s.cfg.Logger.ErrorContext(r.Context(), "request failed", "path", r.URL.Path, "err", err)
			e = &Error{Status: http.StatusInternalServerError, Msg: "internal error"}
		}
	}
	writeJSON(w, e.Status, APIError{Error: e.Error(), Field: e.Field})
}

// baseURL is where the site answered this request, for permalinks.
func (s *Server) baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || s.cfg.TrustProxy && r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

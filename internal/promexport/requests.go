package promexport

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Requests counts an HTTP server's requests (the results site's) for
// Prometheus: by route, method and status, their durations, and those in
// flight. The route is the pattern the server's ServeMux matched ("GET
// /r/{file}"), never the path asked for: the series stay as few as the
// routes, and no result id, query or other data a user sent becomes a
// label.
type Requests struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
}

// NewRequests makes the request metrics of a server; register them
// (Collectors) and wrap its handler (Wrap).
func NewRequests() *Requests {
	return &Requests{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "site",
			Name: "http_requests_total", Help: "Requests answered, by route pattern, method and status code."},
			[]string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "site",
			Name: "http_request_duration_seconds", Help: "Time from a request's arrival to the end of its answer, by route pattern and method.",
			Buckets: Buckets, NativeHistogramBucketFactor: 1.1}, []string{"route", "method"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Subsystem: "site",
			Name: "http_requests_in_flight", Help: "Requests being answered now, queued ones included."}),
	}
}

// Collectors are the metrics to register.
func (q *Requests) Collectors() []prometheus.Collector {
	return []prometheus.Collector{q.total, q.duration, q.inFlight}
}

// Wrap counts and times next's requests. It must wrap the ServeMux that
// routes them (middleware between them passing the request on as it is),
// which records the pattern it matched in the request.
func (q *Requests) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		q.inFlight.Inc()
		sw := &codeWriter{ResponseWriter: w}
		defer func() {
			q.inFlight.Dec()
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			method := knownMethod(r.Method)
			code := sw.code
			if code == 0 {
				code = http.StatusOK
			}
			q.total.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
			q.duration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(sw, r)
	})
}

// knownMethod keeps the method label to the methods HTTP defines: any
// other word a client sends is "other".
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// codeWriter remembers the status an answer was given.
type codeWriter struct {
	http.ResponseWriter
	code int
}

func (w *codeWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *codeWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *codeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

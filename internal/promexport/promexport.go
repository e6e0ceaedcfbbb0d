// Package promexport serves dbmark's live metrics to Prometheus: a run's
// (run --metrics-addr, converted at each scrape from what the run's ticker
// already merged, so a scrape adds nothing to a worker's path) and the
// results site's own requests (serve --metrics-addr). promhttp negotiates
// the format: Prometheus text, OpenMetrics, or protobuf, which alone
// carries native histograms.
package promexport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the metrics are served.
const Path = "/metrics"

// Server serves one registry's metrics on a listener of its own. Its
// registry holds the process's own figures (CPU, memory, file
// descriptors), the run being served (Serve) and whatever else is
// registered (Register).
type Server struct {
	ln  net.Listener
	hs  *http.Server
	reg *prometheus.Registry
	run atomic.Pointer[runCollector]
	end chan error
}

// Listen binds addr (host:port; port 0 picks a free one) and serves the
// metrics there until Close. A bad address or one in use is an error of
// one line naming the option.
func Listen(addr string, log *slog.Logger) (*Server, error) {
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return nil, fmt.Errorf("--metrics-addr %q: not a host:port to listen on (:9464, 127.0.0.1:9464, or :0 for a free port)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: cannot listen: %s (is another process using the port? give another, or :0 for a free one)", addr, listenReason(err))
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{ln: ln, reg: prometheus.NewRegistry(), end: make(chan error, 1)}
	s.reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector(), liveRun{s})
	mux := http.NewServeMux()
	mux.Handle("GET "+Path, promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		// A scrape reads copies under the ticker's lock: two at once
		// would only queue there.
		MaxRequestsInFlight: 2,
		Timeout:             10 * time.Second,
	}))
	s.hs = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() { s.end <- s.hs.Serve(ln) }()
	return s, nil
}

// listenReason is the system's reason a listen failed, without the
// address the message already names.
func listenReason(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		msg := op.Err.Error()
		if _, after, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "bind") {
			return after
		}
		return msg
	}
	return err.Error()
}

// Addr is the address the server listens on (the port picked, for :0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is where the metrics are, for a person to read.
func (s *Server) URL() string { return "http://" + s.Addr() + Path }

// Register adds collectors to the server's registry.
func (s *Server) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := s.reg.Register(c); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	return nil
}

// Close stops serving: the requests under way get ctx's time to finish.
func (s *Server) Close(ctx context.Context) error {
	err := s.hs.Shutdown(ctx)
	if serr := <-s.end; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

const namespace = "dbmark"

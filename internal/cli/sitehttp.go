package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/target"
)

// siteTimeout bounds, by default, each step of a request to a results
// site (the connection, TLS, the wait for the answer) as a connect to a
// target is bounded: a site that accepts and never answers fails in
// seconds, not minutes.
const siteTimeout = target.ConnectTimeout

// siteTimeoutFlag adds --timeout to a command that talks to a site.
func siteTimeoutFlag(fs *pflag.FlagSet, d *time.Duration) {
	fs.DurationVar(d, "timeout", siteTimeout, "how long to wait for the results site to connect and to answer")
}

// siteClient is the HTTP client of submit and reproduce: each step is
// bounded by timeout; a whole request, by a generous two minutes.
func siteClient(timeout time.Duration) (*http.Client, error) {
	if timeout <= 0 {
		return nil, withCode(ExitUsage, fmt.Errorf("--timeout %v: must be above 0 (e.g. 30s)", timeout))
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = timeout
	tr.ResponseHeaderTimeout = timeout
	return &http.Client{Transport: tr, Timeout: max(2*time.Minute, timeout)}, nil
}

// siteError is one line for a request to a site that failed before any
// answer: cancelled by a signal (the line is cancelled), timed out, or
// unreachable.
func siteError(cancelled, where string, timeout time.Duration, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return withCode(ExitInterrupted, errors.New(cancelled))
	case errors.As(err, &ne) && ne.Timeout():
		return withCode(ExitUnavailable, fmt.Errorf("no answer within %v from %s (is the site up? --timeout sets the bound)", timeout, where))
	}
	return withCode(ExitUnavailable, fmt.Errorf("cannot reach %s: %v (is dbmark serve running there?)", where, err))
}

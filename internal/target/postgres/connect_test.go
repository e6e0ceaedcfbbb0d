package postgres_test

import (
	"context"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/targettest"
)

func connectTo(t *testing.T, raw string) (time.Duration, error) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := postgres.Open(context.Background(), u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c, err := tg.Connect(context.Background())
	if err == nil {
		c.Close()
	}
	return time.Since(start), err
}

// Another service on the port is named as such, in one line.
func TestAnotherServiceIsNamed(t *testing.T) {
	addr := targettest.Listen(t, func(c net.Conn) {
		defer c.Close()
		_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
	})
	for _, mode := range []string{"disable", "prefer"} {
		_, err := connectTo(t, "postgres://u:p@"+addr+"/db?sslmode="+mode)
		if err == nil || !strings.Contains(err.Error(), "did not answer as PostgreSQL does") || strings.Contains(err.Error(), "\n") {
			t.Errorf("sslmode=%s: %v; want one line saying it is not PostgreSQL", mode, err)
		}
	}
}

// A server that accepts and never answers does not hold the connect: the
// URL's connect_timeout bounds it, and without one the default does.
func TestSilentServerTimesOut(t *testing.T) {
	addr := targettest.Listen(t, func(c net.Conn) {
		defer c.Close()
		_, _ = c.Read(make([]byte, 1024)) // and say nothing until the test ends
		time.Sleep(time.Minute)
	})
	for _, c := range []struct {
		query string
		bound time.Duration
	}{{"&connect_timeout=1", time.Second}, {"", target.ConnectTimeout}} {
		took, err := connectTo(t, "postgres://u:p@"+addr+"/db?sslmode=disable"+c.query)
		if err == nil || !strings.Contains(err.Error(), "no answer within") {
			t.Fatalf("%q: %v; want a time-out", c.query, err)
		}
		if took < c.bound-100*time.Millisecond || took > c.bound+5*time.Second {
			t.Fatalf("%q: gave up after %v, want about %v", c.query, took, c.bound)
		}
	}
}

// A MySQL or MariaDB server greets first; read as PostgreSQL's protocol
// its greeting is a message pgconn does not expect at connect, and its
// error wraps no cause. The line names the wrong service instead of
// printing the driver's "%!w(<nil>)".
func TestMySQLPortIsNamed(t *testing.T) {
	// The shape of a MariaDB greeting: a 3-byte length, a sequence
	// number, protocol 10 and a version string.
	// The listener's goroutine sends the greeting the loop last stored.
	var greeting atomic.Pointer[[]byte]
	addr := targettest.Listen(t, func(c net.Conn) {
		defer c.Close()
		_, _ = c.Write(*greeting.Load())
		_, _ = c.Read(make([]byte, 1024))
	})
	for _, first := range []byte{'d', 'J'} { // MariaDB 10.11's length (100), MySQL 8's (74)
		g := append([]byte{first, 0, 0, 0, 10}, "5.5.5-10.11.0-MariaDB\x00"...)
		g = append(g, make([]byte, 60)...)
		greeting.Store(&g)
		_, err := connectTo(t, "postgres://u:p@"+addr+"/db?sslmode=disable&connect_timeout=3")
		if err == nil || strings.Contains(err.Error(), "%!") || !strings.Contains(err.Error(), "did not answer as PostgreSQL does") || strings.Contains(err.Error(), "\n") {
			t.Errorf("a greeting starting %q: %v; want one line saying it is not PostgreSQL", first, err)
		}
	}
}

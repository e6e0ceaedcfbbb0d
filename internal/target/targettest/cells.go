package targettest

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/testsrv"
)

// Cell is one way of reaching the server a suite runs over: Env names the
// shared server's URL (scripts/testenv.sh env), Own gives the same kind of
// URL on a private server.
type Cell struct {
	Env string
	Own func(*testsrv.Server) string
}

// Cells are the TCP, unix socket and TLS cells whose shared URLs are in
// env, env_SOCKET and env_TLS.
func Cells(env string) (tcp, socket, tls Cell) {
	return Cell{env, func(s *testsrv.Server) string { return s.TCP }},
		Cell{env + "_SOCKET", func(s *testsrv.Server) string { return s.Socket }},
		Cell{env + "_TLS", func(s *testsrv.Server) string { return s.TLS }}
}

// URL is the shared server's URL, or skips t when the test environment
// has none.
func (c Cell) URL(t testing.TB) string {
	t.Helper()
	raw := os.Getenv(c.Env)
	if raw == "" {
		t.Skipf("%s is not set: no server to test against (make test starts one)", c.Env)
	}
	return raw
}

// Listen serves each connection to a loopback port with serve, until the
// test ends, and returns the port's address: a peer that is not the
// database, for the tests of what a client makes of it.
func Listen(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

// RunEach runs the suite over each of cells with the engine engine gives
// for it, and checks that the driver line of the cell's target contains
// driver (the transport the cells run on).
func RunEach(t *testing.T, engine func(Cell) Engine, driver string, cells ...Cell) {
	for _, c := range cells {
		t.Run(c.Env, func(t *testing.T) {
			e := engine(c)
			Run(t, e)
			tg := e.Open(t)
			defer tg.Close()
			DriverSays(t, tg, driver)
		})
	}
}

// DriverSays checks that the driver line tg's Inspect records contains
// want (the transport a result says ran, the TLS version...).
func DriverSays(t *testing.T, tg target.Target, want string) {
	t.Helper()
	e, err := tg.Inspect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.Driver, want) {
		t.Errorf("driver line %q, want it to say %q", e.Driver, want)
	}
}

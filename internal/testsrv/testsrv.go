// Package testsrv starts throwaway PostgreSQL and MariaDB servers that one
// test owns, so that it may kill and restart them: the shared servers of
// scripts/testenv.sh serve other packages' tests at the same time and are
// never stopped by a test.
//
// A server lives in a temporary directory, listens on 127.0.0.1 on a free
// port (PostgreSQL, with PostgresAlsoOn, on one more address too) and on a
// unix socket, offers TLS with a self-signed certificate,
// and has one database for the test. Starting one needs the server's
// binaries (PostgreSQL's initdb and pg_ctl, MariaDB's mariadb-install-db
// and mariadbd); when they are missing the test is skipped.
package testsrv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// ErrUnavailable marks a server that cannot be started here (binaries
// missing, no unprivileged user to run PostgreSQL as root); tests skip.
var ErrUnavailable = errors.New("no server binaries")

// startWait bounds a server's start, crash recovery included.
const startWait = 60 * time.Second

// Server is a running private server.
type Server struct {
	// Kind is "postgres" or "mysql".
	Kind string
	// TCP, Socket and TLS are the URLs of the test's database over TCP,
	// over the unix socket and over TCP with TLS required (the server's
	// certificate is self-signed, so it is not verified).
	TCP, Socket, TLS string
	// RestartCmd is a shell command that restarts the server (a clean
	// shutdown and a start on the same data and ports), for a test to give
	// dbmark's --restart-cmd; "" where the server has none (MariaDB's is
	// the test's own process).
	RestartCmd string

	dir  string
	mu   sync.Mutex // serialises Kill, Start and Close
	up   bool
	kill func() error
	boot func() error
	// pid is the server's main process (PostgreSQL's postmaster); ping
	// connects and runs a statement.
	pid  func() (int, error)
	ping func() error
}

// Kill stops the server at once, as a crash does (PostgreSQL's immediate
// shutdown, SIGKILL for MariaDB): sessions end without a goodbye, and the
// next start recovers.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up {
		return nil
	}
	s.up = false
	return s.kill()
}

// Start starts a killed server again on the same data, ports and socket,
// and returns once it accepts connections.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.up {
		return nil
	}
	if err := s.boot(); err != nil {
		return err
	}
	s.up = true
	return nil
}

// Up says the server runs again after a Kill, started by a command of
// its own (RestartCmd, given to dbmark): it must answer.
func (s *Server) Up() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ping(); err != nil {
		return fmt.Errorf("the server does not answer: %w", err)
	}
	s.up = true
	return nil
}

// Close stops the server, also one started again by its RestartCmd
// after a Kill, and removes its files.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.kill()
	if !s.up {
		err = nil // it was not running, or it was and has stopped
	}
	s.up = false
	return errors.Join(err, os.RemoveAll(s.dir))
}

// Starter starts a server (Postgres or MariaDB).
type Starter func(ctx context.Context) (*Server, error)

// Start starts a server for t and closes it when t ends; it skips t when
// the server cannot run here.
func Start(t testing.TB, start Starter) *Server {
	t.Helper()
	s, err := start(context.Background())
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("closing the private server: %v", err)
		}
	})
	return s
}

// Lazy returns a function that starts one server the first time it is
// called, for the subtests of outer to share; the server is closed when
// outer ends. A server that could not start skips or fails every caller.
func Lazy(outer testing.TB, start Starter) func(t testing.TB) *Server {
	var (
		once sync.Once
		srv  *Server
		err  error
	)
	return func(t testing.TB) *Server {
		t.Helper()
		once.Do(func() {
			srv, err = start(context.Background())
			if err == nil {
				outer.Cleanup(func() {
					if err := srv.Close(); err != nil {
						outer.Errorf("closing the private server: %v", err)
					}
				})
			}
		})
		if errors.Is(err, ErrUnavailable) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
}

// Shared is one server that the tests of a package share: started by the
// first test that asks for it, closed by the package's TestMain once
// every test has ended. Starting a server (initdb, mariadb-install-db)
// takes seconds, and tests that each kill and restart it in turn need no
// server of their own.
type Shared struct {
	start Starter
	once  sync.Once
	srv   *Server
	err   error
}

// NewShared returns a server that its first Get starts.
func NewShared(start Starter) *Shared { return &Shared{start: start} }

// Get starts the server the first time it is called, and returns it; a
// server that could not start skips or fails every caller.
func (s *Shared) Get(t testing.TB) *Server {
	t.Helper()
	s.once.Do(func() { s.srv, s.err = s.start(context.Background()) })
	if errors.Is(s.err, ErrUnavailable) {
		t.Skip(s.err)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.srv
}

// Close closes the server if a test started it; it is called after the
// package's tests have ended (TestMain), when no Get runs.
func (s *Shared) Close() error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// Main is a package's TestMain: it runs the tests, then closes the
// server, and exits with the tests' code, or 1 when closing failed.
func (s *Shared) Main(m *testing.M) {
	code := m.Run()
	if err := s.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "closing the private server: %v\n", err)
		code = 1
	}
	os.Exit(code)
}

// freePort is a TCP port on 127.0.0.1 that nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tempDir is a new directory under parent ("": the system's temporary
// directory) that other users may traverse (PostgreSQL runs as its own
// user under root), with a short path for unix sockets.
func tempDir(parent string) (string, error) {
	dir, err := os.MkdirTemp(parent, "dbmark-srv-")
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o755)
}

// writeCert writes a self-signed certificate for 127.0.0.1 and localhost
// and its key to certFile and keyFile (the key readable by its owner only).
func writeCert(certFile, keyFile string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), 0o600)
}

// tail is the end of a log file, for an error message.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "\n--- " + filepath.Base(path) + " ---\n" + string(b)
}

// waitFor calls ready until it succeeds, alive says twice in a row that
// the server died, or startWait passes. One "not alive" is not enough: a
// process caught between fork and exec can look like another one.
func waitFor(ready func() error, alive func() bool, log string) error {
	deadline := time.Now().Add(startWait)
	dead := 0
	for {
		err := ready()
		if err == nil {
			return nil
		}
		if alive != nil && !alive() {
			if dead++; dead == 2 {
				return fmt.Errorf("the server exited during startup: %v%s", err, tail(log))
			}
		} else {
			dead = 0
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server did not accept connections within %v: %v%s", startWait, err, tail(log))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

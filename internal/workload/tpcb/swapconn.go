package tpcb

import (
	"context"

	"github.com/dbmark/dbmark/internal/target"
)

// swapConn is the connection a client sees under -C: the runner's
// connection until the first transaction, then a new one for each. Every
// call goes to the connection current then, so its statements are that
// connection's own (RowStmt included, and a pipeline's to queue). The
// client forgets its statements when the connection changes and prepares
// them again on the new one when first run, as pgbench does.
type swapConn struct {
	target.Conn
	own bool // Conn is ours to close (not the runner's)
}

// newSwapConn wraps the runner's connection c, keeping its abilities: a
// target.ProtocolConn stays one (the engine's new connections are of the
// same kind).
func newSwapConn(c target.Conn) (*swapConn, target.Conn) {
	s := &swapConn{Conn: c}
	if _, ok := c.(target.ProtocolConn); ok {
		return s, swapProtoConn{s}
	}
	return s, s
}

// set makes c the connection, closing the previous one if it was ours.
func (s *swapConn) set(c target.Conn) {
	s.release()
	s.Conn, s.own = c, true
}

func (s *swapConn) release() {
	if s.own {
		s.Conn.Close()
		s.own = false
	}
}

// swapProtoConn is a swapConn over PostgreSQL's connections: -M and
// pipelines go to the current one.
type swapProtoConn struct{ *swapConn }

func (s swapProtoConn) proto() target.ProtocolConn { return s.Conn.(target.ProtocolConn) }

func (s swapProtoConn) Protocol() string { return s.proto().Protocol() }

func (s swapProtoConn) RunText(ctx context.Context, sql []byte) (target.Row, error) {
	return s.proto().RunText(ctx, sql)
}

func (s swapProtoConn) StartPipeline(ctx context.Context) (target.Pipeline, error) {
	return s.proto().StartPipeline(ctx)
}

package tpcb

import (
	"context"

	"github.com/dbmark/dbmark/internal/target"
)

// swapConn is the connection a client sees under -C: the runner's
// connection until the first transaction, then a new one for each. Its
// statements are prepared again on each new connection when first run.
type swapConn struct {
	target.Conn
	gen int  // bumped on every change
	own bool // Conn is ours to close (not the runner's)
}

// set makes c the connection, closing the previous one if it was ours.
func (s *swapConn) set(c target.Conn) {
	s.release()
	s.Conn, s.own = c, true
	s.gen++
}

func (s *swapConn) release() {
	if s.own {
		s.Conn.Close()
		s.own = false
	}
}

// Prepare defers to the first run, on whatever connection is current then.
func (s *swapConn) Prepare(_ context.Context, sql string) (target.Stmt, error) {
	return &swapStmt{sc: s, sql: sql, gen: -1}, nil
}

type swapStmt struct {
	sc  *swapConn
	sql string
	st  target.Stmt
	gen int
}

func (s *swapStmt) Run(ctx context.Context, args []target.Value) (int64, error) {
	if s.gen != s.sc.gen {
		// The old statement went with its connection.
		st, err := s.sc.Conn.Prepare(ctx, s.sql)
		if err != nil {
			return 0, err
		}
		s.st, s.gen = st, s.sc.gen
	}
	return s.st.Run(ctx, args)
}

func (s *swapStmt) Close() error {
	if s.st != nil && s.gen == s.sc.gen {
		return s.st.Close()
	}
	return nil
}

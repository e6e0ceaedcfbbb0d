package target

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/dbmark/dbmark/internal/mux"
)

// Socket is a driver's connection as a target's own protocol code uses
// it: in a mux task, a read or write that would block waits in the task's
// loop (TaskConn) instead of in Go's poller.
type Socket struct {
	Conn net.Conn
	tc   TaskConn
	task *mux.Task
	ctx  context.Context
}

// NewSocket wraps conn.
func NewSocket(conn net.Conn) Socket {
	s := Socket{Conn: conn}
	s.tc, _ = conn.(TaskConn)
	return s
}

// Use makes ctx the context of the next request. A worker passes the same
// one every time, so its task is looked up once.
func (s *Socket) Use(ctx context.Context) {
	if s.tc != nil && ctx != s.ctx {
		s.ctx, s.task = ctx, mux.From(ctx)
	}
}

func (s *Socket) Write(b []byte) (int, error) {
	if s.task != nil {
		return s.tc.WriteWait(s.ctx, s.task, b)
	}
	return s.Conn.Write(b)
}

func (s *Socket) Read(b []byte) (int, error) {
	if s.task != nil {
		return s.tc.ReadWait(s.ctx, s.task, b)
	}
	return s.Conn.Read(b)
}

// InBuf holds what was read from a server and not yet parsed: Buf[R:W].
type InBuf struct {
	Buf  []byte
	R, W int
}

// Sizes of an InBuf: a read asks for up to InBufSize bytes; a buffer grown
// past InBufKeep for a large answer is given back after it (Trim).
const (
	InBufSize = 16 << 10
	InBufKeep = 256 << 10
)

// NewInBuf returns an empty buffer of InBufSize.
func NewInBuf() InBuf { return InBuf{Buf: make([]byte, InBufSize)} }

// Room makes space after the unread bytes for a message of size bytes in
// all, and for a full read after it when it is small.
func (b *InBuf) Room(size int) {
	if b.R == b.W {
		b.R, b.W = 0, 0
	}
	if len(b.Buf)-b.R >= size && len(b.Buf)-b.W >= InBufSize/4 {
		return
	}
	n := copy(b.Buf, b.Buf[b.R:b.W])
	b.R, b.W = 0, n
	if len(b.Buf) < size {
		b.Buf = append(b.Buf[:n], make([]byte, size+InBufSize-n)...)
		b.Buf = b.Buf[:cap(b.Buf)]
	}
}

// Trim gives back a large buffer once everything in it is parsed.
func (b *InBuf) Trim() {
	if len(b.Buf) > InBufKeep && b.R == b.W {
		*b = NewInBuf()
	}
}

// Fill reads from s what is there after making room for a message of size
// bytes (Room). A connection that ends there ends in the middle of an
// answer: io.ErrUnexpectedEOF.
func (b *InBuf) Fill(s *Socket, size int) error {
	b.Room(size)
	k, err := s.Read(b.Buf[b.W:])
	b.W += k
	if err != nil && k == 0 {
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

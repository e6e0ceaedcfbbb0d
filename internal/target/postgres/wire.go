package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dbmark/dbmark/internal/target"
)

// wire runs statements on the socket pgconn opened, speaking the few
// messages a statement needs. pgconn does the rest (start-up and
// authentication, PREPARE, COPY, pipelines, closing), and both can share
// the socket because each leaves it idle, with nothing left unread, after
// ReadyForQuery.
//
// Measured (bench/README.md): through pgconn's general path a statement
// passed a dozen layers, a timer set and stopped around every write, and
// a few allocations; that was a third of the client's user CPU in
// pgbench's select-only script. Here a request is one buffer and one
// write, and answers are parsed in place from one read buffer.
type wire struct {
	// In a mux task a request waits in the task's loop (one thread's
	// poll over its connections) instead of in Go's poller.
	sock   target.Socket
	out    []byte
	in     target.InBuf
	names  []string // the last RowDescription's column names, reused
	broken error    // set once the connection cannot be used any more
}

const (
	// wireMaxMessage bounds the buffer a message may ask for: the server
	// never sends more than 1 GB in one field.
	wireMaxMessage = 1<<30 + 1<<20
)

func newWire(conn net.Conn) *wire {
	return &wire{sock: target.NewSocket(conn), in: target.NewInBuf()}
}

// begin starts a message of type t in the output buffer and returns where
// its length goes.
func (w *wire) begin(t byte) int {
	w.out = append(w.out, t, 0, 0, 0, 0)
	return len(w.out) - 4
}

// end writes the length of the message begun at at.
func (w *wire) end(at int) {
	binary.BigEndian.PutUint32(w.out[at:], uint32(len(w.out)-at))
}

// queueQuery queues a simple-protocol Query.
func queueQuery[S string | []byte](w *wire, sql S) {
	at := w.begin('Q')
	w.out = append(append(w.out, sql...), 0)
	w.end(at)
}

func (w *wire) parse(name, sql string) {
	at := w.begin('P')
	w.out = append(append(w.out, name...), 0)
	w.out = append(append(w.out, sql...), 0)
	w.out = append(w.out, 0, 0) // no parameter types: the server infers them
	w.end(at)
}

// bind binds the statement name to args, all sent and returned as text.
func (w *wire) bind(name string, args []target.Value) {
	at := w.begin('B')
	w.out = append(w.out, 0) // the unnamed portal
	w.out = append(append(w.out, name...), 0)
	w.out = append(w.out, 0, 0) // parameter formats: all text
	w.out = binary.BigEndian.AppendUint16(w.out, uint16(len(args)))
	for _, a := range args {
		switch {
		case a.IsNull:
			w.out = binary.BigEndian.AppendUint32(w.out, 0xFFFFFFFF) // -1: NULL
		case a.IsStr:
			w.out = binary.BigEndian.AppendUint32(w.out, uint32(len(a.Str)))
			w.out = append(w.out, a.Str...)
		default:
			lat := len(w.out)
			w.out = append(w.out, 0, 0, 0, 0)
			w.out = strconv.AppendInt(w.out, a.Int, 10)
			binary.BigEndian.PutUint32(w.out[lat:], uint32(len(w.out)-lat-4))
		}
	}
	w.out = append(w.out, 0, 0) // result formats: all text
	w.end(at)
}

// describePortal asks for the unnamed portal's columns, as libpq does for
// PQsendQueryParams.
func (w *wire) describePortal() {
	at := w.begin('D')
	w.out = append(w.out, 'P', 0)
	w.end(at)
}

func (w *wire) execute() {
	at := w.begin('E')
	w.out = append(w.out, 0, 0, 0, 0, 0) // the unnamed portal, all rows
	w.end(at)
}

func (w *wire) sync() {
	w.out = append(w.out, 'S', 0, 0, 0, 4)
}

// flush sends the output buffer in one write.
func (w *wire) flush() error {
	if w.broken != nil {
		w.out = w.out[:0]
		return w.broken
	}
	_, err := w.sock.Write(w.out)
	w.out = w.out[:0]
	if err != nil {
		return w.fail(err)
	}
	return nil
}

// fail marks the connection unusable: after a lost or interrupted read or
// write, where the protocol stands is unknown.
func (w *wire) fail(err error) error {
	if w.broken == nil {
		w.broken = err
	}
	return err
}

// next returns the next message; body is valid until the next call.
func (w *wire) next() (byte, []byte, error) {
	for {
		need := 5
		if n := w.in.W - w.in.R; n >= 5 {
			size := int(binary.BigEndian.Uint32(w.in.Buf[w.in.R+1:]))
			if size < 4 || size > wireMaxMessage {
				return 0, nil, w.fail(fmt.Errorf("PostgreSQL protocol: message %q of %d bytes", w.in.Buf[w.in.R], size))
			}
			if n >= 1+size {
				t, body := w.in.Buf[w.in.R], w.in.Buf[w.in.R+5:w.in.R+1+size]
				w.in.R += 1 + size
				return t, body, nil
			}
			need = 1 + size
		}
		if err := w.in.Fill(&w.sock, need); err != nil {
			return 0, nil, w.fail(err)
		}
	}
}

// results is what reading one request's answers leaves.
type results struct {
	rows     int64 // rows returned by every result
	affected int64 // rows affected by every result, from the command tags
	// Row, when keep is set, holds the last result: its last row and
	// column names, or no columns and its affected rows.
	row  target.Row
	keep bool
	cols []string // column names when no RowDescription is sent (prepared)
	open bool     // a result has begun and not yet ended
}

// read reads answers up to ReadyForQuery. The first error the server
// reports is returned once it is ready again; the connection stays
// usable. A failed read returns at once and leaves the connection broken.
func (w *wire) read(res *results) error {
	var first error
	for {
		t, body, err := w.next()
		if err != nil {
			if first != nil {
				return first // a FATAL error, then the server hung up
			}
			return err
		}
		switch t {
		case 'Z': // ReadyForQuery
			w.in.Trim() // give back a large answer's room
			return first
		case 'T': // RowDescription
			w.startResult(res)
			if res.keep {
				res.cols = w.columns(body)
			}
		case 'D': // DataRow
			if !res.open {
				w.startResult(res)
			}
			res.rows++
			if res.keep {
				res.row.Rows++
				if err := keepRow(&res.row, body); err != nil {
					return w.fail(err)
				}
			}
		case 'C', 'I': // CommandComplete, EmptyQueryResponse
			if !res.open {
				w.startResult(res)
			}
			var n int64
			if t == 'C' {
				n = rowsAffected(body)
			}
			res.affected += n
			if res.keep {
				if res.row.Rows > 0 {
					res.row.Columns = append(res.row.Columns[:0], res.cols...)
				} else {
					res.row.Rows = n
					res.row.Columns = res.row.Columns[:0]
				}
			}
			res.open = false
		case 'E': // ErrorResponse
			var msg pgproto3.ErrorResponse
			if err := msg.Decode(body); err != nil {
				return w.fail(fmt.Errorf("PostgreSQL protocol: %w", err))
			}
			pgErr := pgconn.ErrorResponseToPgError(&msg)
			res.open = false
			if pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC" || pgErr.SeverityUnlocalized == "FATAL" {
				return w.fail(pgErr) // the server closes the connection
			}
			if first == nil {
				first = pgErr
			}
		case 'G': // CopyInResponse: a COPY FROM STDIN among the statements
			at := w.begin('f')
			w.out = append(append(w.out, "COPY FROM STDIN is not supported here"...), 0)
			w.end(at)
			if err := w.flush(); err != nil {
				return err
			}
		case '1', '2', '3', 'n', 's', 't', 'N', 'A', 'S', 'H', 'd', 'c':
			// ParseComplete, BindComplete, CloseComplete, NoData,
			// PortalSuspended, ParameterDescription, notices,
			// notifications, parameter changes and COPY TO STDOUT data
			// need no answer.
		default:
			return w.fail(fmt.Errorf("PostgreSQL protocol: unexpected message %q", t))
		}
	}
}

func (w *wire) startResult(res *results) {
	res.open = true
	if res.keep {
		res.row.Rows = 0
		res.row.Columns = res.row.Columns[:0]
	}
}

// columns reads a RowDescription's names into w.names, reusing the
// strings of the last one when they are the same.
func (w *wire) columns(body []byte) []string {
	if len(body) < 2 {
		return w.names[:0]
	}
	n := int(binary.BigEndian.Uint16(body))
	body = body[2:]
	if cap(w.names) < n {
		w.names = append(w.names[:cap(w.names)], make([]string, n-cap(w.names))...)
	}
	names := w.names[:n]
	for i := range names {
		end := 0
		for end < len(body) && body[end] != 0 {
			end++
		}
		if names[i] != string(body[:end]) {
			names[i] = string(body[:end])
		}
		if end+19 > len(body) {
			return names[:i+1]
		}
		body = body[end+19:] // NUL, table, column, type, size, modifier, format
	}
	w.names = names
	return names
}

// keepRow copies a DataRow's values into row's reused buffers.
func keepRow(row *target.Row, body []byte) error {
	if len(body) < 2 {
		return errors.New("PostgreSQL protocol: short DataRow")
	}
	n := int(binary.BigEndian.Uint16(body))
	body = body[2:]
	if cap(row.Values) < n {
		row.Values = append(row.Values[:cap(row.Values)], make([][]byte, n-cap(row.Values))...)
	}
	row.Values = row.Values[:n]
	for i := range n {
		if len(body) < 4 {
			return errors.New("PostgreSQL protocol: short DataRow")
		}
		size := int32(binary.BigEndian.Uint32(body))
		body = body[4:]
		if size < 0 {
			row.Values[i] = nil
			continue
		}
		if int(size) > len(body) {
			return errors.New("PostgreSQL protocol: short DataRow")
		}
		// A value of the last row must stay non-nil even when empty:
		// nil is NULL.
		if cap(row.Values[i]) > target.InBufKeep {
			row.Values[i] = nil // do not keep a large value's room
		}
		row.Values[i] = append(row.Values[i][:0], body[:size]...)
		if row.Values[i] == nil {
			row.Values[i] = []byte{}
		}
		body = body[size:]
	}
	return nil
}

// rowsAffected is the number at the end of a command tag ("UPDATE 1",
// "INSERT 0 1", "SELECT 5"), 0 when there is none: pgconn's
// CommandTag.RowsAffected, read from the message without making a string.
func rowsAffected(tag []byte) int64 {
	if len(tag) > 0 && tag[len(tag)-1] == 0 {
		tag = tag[:len(tag)-1]
	}
	var n, mult int64 = 0, 1
	for i := len(tag) - 1; i >= 0 && tag[i] >= '0' && tag[i] <= '9'; i-- {
		n += int64(tag[i]-'0') * mult
		mult *= 10
	}
	return n
}

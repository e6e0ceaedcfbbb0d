package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/dbmark/dbmark/internal/target"
)

// Conn is one driver connection. Like the driver's, it is used by one
// goroutine at a time. A statement ends when the caller's context does:
// the connection is closed under it (see watch).
type Conn struct {
	dc     driverConn
	raw    net.Conn     // what the driver dialed
	w      target.Watch // closes raw when a statement's context ends
	cur    target.Activity
	psMode string
	closed bool
	rr     textReader // QueryRow's, ExecRows' and Query's
}

func (t *Target) conn(ctx context.Context) (*Conn, error) {
	c, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return c.(*Conn), nil
}

// wrap reports a statement ended by its context as the context's error.
// It is small enough to be inlined: a statement that succeeded does not
// ask its context.
func wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return ctxErr(ctx, err)
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// watch starts a statement under ctx: the connection is closed if ctx
// ends before c.w.End is called, so that the driver's read or
// write fails and wrap reports ctx's error. The driver itself is given
// context.Background(), which it does not watch: its own watch hands
// every statement's context to a goroutine of the connection and back,
// two wake-ups per statement that cost about a fifth of the client's CPU
// on a point select. c.w registers with a context once, not per
// statement (target.Watch).
func (c *Conn) watch(ctx context.Context) error { return c.w.Begin(ctx) }

// Exec runs a text query and discards its result.
func (c *Conn) Exec(ctx context.Context, sql string) error {
	c.cur.Set(sql)
	if err := c.watch(ctx); err != nil {
		return err
	}
	defer c.w.End()
	_, err := c.dc.ExecContext(context.Background(), sql, nil)
	return wrap(ctx, err)
}

// ExecRows runs sql as text, as Exec does, and returns the rows it
// returned or else affected.
func (c *Conn) ExecRows(ctx context.Context, sql string) (int64, error) {
	c.cur.Set(sql)
	if err := c.watch(ctx); err != nil {
		return 0, err
	}
	defer c.w.End()
	if !returnsRows(sql) {
		res, err := c.dc.ExecContext(context.Background(), sql, nil)
		if err != nil {
			return 0, wrap(ctx, err)
		}
		n, err := res.RowsAffected()
		return n, wrap(ctx, err)
	}
	rows, err := c.dc.QueryContext(context.Background(), sql, nil)
	if err != nil {
		return 0, wrap(ctx, err)
	}
	n, err := c.rr.readRows(rows, nil, nil)
	return n, wrap(ctx, err)
}

// QueryRow returns the first column of the first row as text.
func (c *Conn) QueryRow(ctx context.Context, sql string) (string, bool, error) {
	c.cur.Set(sql)
	if err := c.watch(ctx); err != nil {
		return "", false, err
	}
	defer c.w.End()
	rows, err := c.dc.QueryContext(context.Background(), sql, nil)
	if err != nil {
		return "", false, wrap(ctx, err)
	}
	var v string
	var found bool
	_, err = c.rr.readRows(rows, nil, func(d []driver.Value) error {
		if !found && len(d) > 0 {
			v, found = string(c.rr.appendValue(nil, 0, d[0])), true
		}
		return nil
	})
	if err != nil {
		return "", false, wrap(ctx, err)
	}
	return v, found, nil
}

// rows runs a text query and returns its rows as text (NULL as "").
func (c *Conn) rows(ctx context.Context, sql string) ([][]string, error) {
	if err := c.watch(ctx); err != nil {
		return nil, err
	}
	defer c.w.End()
	rs, err := c.dc.QueryContext(context.Background(), sql, nil)
	if err != nil {
		return nil, wrap(ctx, err)
	}
	var rr textReader
	var out [][]string
	_, err = rr.readRows(rs, nil, func(d []driver.Value) error {
		row := make([]string, len(d))
		for i, v := range d {
			row[i] = string(rr.appendValue(nil, i, v))
		}
		out = append(out, row)
		return nil
	})
	return out, wrap(ctx, err)
}

// returnsRows says whether a statement produces result sets, which are
// then read (and counted) rather than its count of affected rows.
func returnsRows(sql string) bool {
	s := strings.TrimLeft(sql, " \t\r\n(")
	if len(s) > 8 {
		s = s[:8]
	}
	s = strings.ToUpper(s)
	for _, p := range []string{"SELECT", "SHOW", "WITH", "EXPLAIN", "DESC", "VALUES", "TABLE", "CALL"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Prepare readies sql (with ? placeholders): on the server with
// --db-ps-mode auto, once, for every later run; as a client-side template
// with disable.
func (c *Conn) Prepare(ctx context.Context, sql string) (target.Stmt, error) {
	s := &Stmt{c: c, sql: sql, rows: returnsRows(sql)}
	if c.psMode == PSDisable {
		tpl, err := target.ParseTemplate(sql)
		if err != nil {
			return nil, err
		}
		s.tpl = tpl
		return s, nil
	}
	c.cur.Set(sql)
	if err := c.watch(ctx); err != nil {
		return nil, err
	}
	defer c.w.End()
	ds, err := c.dc.PrepareContext(context.Background(), sql)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", sql, wrap(ctx, err))
	}
	st, ok := ds.(preparedStmt)
	if !ok {
		ds.Close()
		return nil, fmt.Errorf("prepare %q: the driver's statement (%T) lacks the context methods", sql, ds)
	}
	s.ds = st
	return s, nil
}

// Close closes the connection.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.w.Release()
	return c.dc.Close()
}

// preparedStmt is what this package needs of the driver's statement.
type preparedStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

// Current is the statement the connection is running, or ran last
// (target.Reporter).
func (c *Conn) Current() string { return c.cur.Current() }

// Stmt is a statement on one Conn. Its buffers are reused from run to run.
type Stmt struct {
	c    *Conn
	sql  string
	rows bool
	ds   preparedStmt     // server-side prepared (PSAuto)
	tpl  *target.Template // client-side (PSDisable)
	args []driver.NamedValue
	rr   textReader
	text []byte
	row  target.Row
}

// Run executes the statement, reads and discards its rows, and returns
// how many rows it returned or affected.
func (s *Stmt) Run(ctx context.Context, args []target.Value) (int64, error) {
	s.c.cur.SetStmt(&s.sql)
	if err := s.c.watch(ctx); err != nil {
		return 0, err
	}
	// End is called in line, not deferred (the defer cost about 15
	// instructions a statement): a panic between Begin and End is a
	// driver's bug, which ends the program.
	var n int64
	var err error
	if !s.rows {
		n, err = s.exec(args)
	} else {
		var rows driver.Rows
		if rows, err = s.query(args); err == nil {
			n, err = s.rr.readRows(rows, nil, nil)
		}
	}
	s.c.w.End()
	return n, wrap(ctx, err)
}

// RunRow executes the statement and keeps the last row it returned.
func (s *Stmt) RunRow(ctx context.Context, args []target.Value) (target.Row, error) {
	s.c.cur.SetStmt(&s.sql)
	s.row.Columns = s.row.Columns[:0]
	if err := s.c.watch(ctx); err != nil {
		return target.Row{}, err
	}
	defer s.c.w.End()
	if !s.rows {
		n, err := s.exec(args)
		s.row.Rows = n
		if err != nil {
			return target.Row{}, wrap(ctx, err)
		}
		return s.row, nil
	}
	rows, err := s.query(args)
	if err == nil {
		err = s.rr.readLastRow(rows, &s.row)
	}
	if err != nil {
		return target.Row{}, wrap(ctx, err)
	}
	return s.row, nil
}

// exec runs a statement that returns no rows and returns the rows it
// affected, under the caller's watch.
func (s *Stmt) exec(args []target.Value) (int64, error) {
	var res driver.Result
	var err error
	if s.tpl != nil {
		var q string
		if q, err = s.render(args); err != nil {
			return 0, err
		}
		res, err = s.c.dc.ExecContext(context.Background(), q, nil)
	} else {
		res, err = s.ds.ExecContext(context.Background(), s.bind(args))
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// query runs a statement that returns rows, under the caller's watch.
func (s *Stmt) query(args []target.Value) (driver.Rows, error) {
	if s.tpl != nil {
		q, err := s.render(args)
		if err != nil {
			return nil, err
		}
		return s.c.dc.QueryContext(context.Background(), q, nil)
	}
	return s.ds.QueryContext(context.Background(), s.bind(args))
}

// render inlines args into the statement's text.
func (s *Stmt) render(args []target.Value) (string, error) {
	b, err := s.tpl.Render(s.text[:0], args, true)
	if err != nil {
		return "", err
	}
	s.text = b
	return string(b), nil
}

// bind converts args into the reused driver arguments.
func (s *Stmt) bind(args []target.Value) []driver.NamedValue {
	if len(s.args) != len(args) {
		s.args = make([]driver.NamedValue, len(args))
		for i := range s.args {
			s.args[i].Ordinal = i + 1
		}
	}
	for i := range args {
		a, nv := &args[i], &s.args[i]
		switch {
		case a.IsNull:
			nv.Value = nil
		case a.IsStr && a.Str == nil:
			nv.Value = []byte{} // the driver sends a nil []byte as NULL
		case a.IsStr:
			nv.Value = a.Str
		default:
			nv.Value = a.Int
		}
	}
	return s.args
}

// Close releases a server-side statement. One on a lost connection is
// gone with it.
func (s *Stmt) Close() error {
	if s.ds == nil || s.c.closed {
		return nil
	}
	err := s.ds.Close()
	s.ds = nil
	if errors.Is(err, driver.ErrBadConn) {
		return nil
	}
	return err
}

// readRows is the one loop that reads rows from the driver: it reads
// every result set of rows, each row's values into r's reused
// destination, and closes rows, returning how many rows the sets held.
// set, when not nil, is called as each result set begins, and row with
// each row's values (valid until the next row). Only for a caller that
// looks at the values is each set's text form read from its columns
// (start): counting rows needs none of it.
func (r *textReader) readRows(rows driver.Rows, set func(driver.Rows), row func([]driver.Value) error) (int64, error) {
	var count int64
	for {
		var d []driver.Value
		if set == nil && row == nil {
			d = sized(&r.dest, len(rows.Columns()))
		} else {
			d = r.start(rows)
		}
		if set != nil {
			set(rows)
		}
		for {
			err := rows.Next(d)
			if err == io.EOF {
				break
			}
			if err == nil && row != nil {
				err = row(d)
			}
			if err != nil {
				rows.Close()
				return count, err
			}
			count++
		}
		more, err := nextResultSet(rows)
		if err != nil {
			rows.Close()
			return count, err
		}
		if !more {
			return count, rows.Close()
		}
	}
}

// readLastRow reads every result set of rows and keeps in row the last
// one's columns, its count of rows and its last row as the server's text
// protocol prints it (NULL as nil), in row's reused buffers. It closes
// rows.
func (r *textReader) readLastRow(rows driver.Rows, row *target.Row) error {
	_, err := r.readRows(rows, func(rs driver.Rows) {
		row.Rows = 0
		row.Columns = append(row.Columns[:0], rs.Columns()...)
	}, func(d []driver.Value) error {
		row.Rows++
		r.keepRow(row, d)
		return nil
	})
	return err
}

// nextResultSet moves rows to its next result set with columns, if any:
// the OK that ends a procedure's answer is not one.
func nextResultSet(rows driver.Rows) (bool, error) {
	rs, ok := rows.(driver.RowsNextResultSet)
	if !ok || !rs.HasNextResultSet() {
		return false, nil
	}
	switch err := rs.NextResultSet(); err {
	case nil:
		return true, nil
	case io.EOF:
		return false, nil
	default:
		return false, err
	}
}

func sized(dest *[]driver.Value, n int) []driver.Value {
	if cap(*dest) < n {
		*dest = make([]driver.Value, n)
	}
	return (*dest)[:n]
}

// keepBytes is the largest buffer a kept value holds on to between rows.
const keepBytes = 64 << 10

// keepRow copies a row's values, as text, into row's reused buffers.
func (r *textReader) keepRow(row *target.Row, d []driver.Value) {
	if cap(row.Values) < len(d) {
		row.Values = append(row.Values[:cap(row.Values)], make([][]byte, len(d)-cap(row.Values))...)
	}
	row.Values = row.Values[:len(d)]
	for i, v := range d {
		if v == nil {
			row.Values[i] = nil
			continue
		}
		b := row.Values[i]
		if cap(b) > keepBytes {
			b = nil
		}
		b = r.appendValue(b[:0], i, v)
		if b == nil {
			b = []byte{} // empty, not NULL
		}
		row.Values[i] = b
	}
}

// bulkBytes bounds one multi-row INSERT, well under the default max_allowed_packet.
const bulkBytes = 1 << 20

// BulkInsert loads rows with multi-row INSERT statements.
func (c *Conn) BulkInsert(ctx context.Context, table string, columns []string, rows target.RowSource) (int64, error) {
	head := fmt.Sprintf("INSERT INTO %s (%s) VALUES ", table, strings.Join(columns, ", "))
	vals := make([]target.Value, len(columns))
	buf := make([]byte, 0, bulkBytes+4096)
	var total int64
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		if err := c.watch(ctx); err != nil {
			return err
		}
		res, err := c.dc.ExecContext(context.Background(), string(buf), nil)
		c.w.End()
		buf = buf[:0]
		if err != nil {
			return fmt.Errorf("insert into %s: %w", table, wrap(ctx, err))
		}
		n, _ := res.RowsAffected()
		total += n
		return nil
	}
	for rows.Next(vals) {
		if len(buf) == 0 {
			buf = append(buf, head...)
		} else {
			buf = append(buf, ',')
		}
		buf = append(buf, '(')
		for i, v := range vals {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = target.AppendLiteral(buf, v, true)
		}
		buf = append(buf, ')')
		if len(buf) >= bulkBytes {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	if err := flush(); err != nil {
		return total, err
	}
	return total, nil
}

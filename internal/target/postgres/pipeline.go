package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbmark/dbmark/internal/target"
)

// Protocol is the connection's mode (pgbench's -M).
func (c *Conn) Protocol() string { return c.mode }

// InTransaction says whether a transaction block is open (or failed and
// not yet ended), as the server last reported (target.TxStater).
func (c *Conn) InTransaction() bool { return c.pc.TxStatus() != 'I' }

// RunText runs sql with the simple protocol and keeps the last row of its
// last result. The row is reused by the next call.
func (c *Conn) RunText(ctx context.Context, sql []byte) (target.Row, error) {
	text := string(sql)
	c.cur.Set(text)
	if err := c.w.Begin(ctx); err != nil {
		return target.Row{}, err
	}
	defer c.w.End()
	if err := textRow(c.pc, text, &c.row); err != nil {
		return target.Row{}, wrap(ctx, c.pc, err)
	}
	return c.row, nil
}

// errSimplePipeline is pgbench's refusal, word for word.
var errSimplePipeline = errors.New("cannot use pipeline mode with the simple query protocol")

// pipeline is pgconn's pipeline mode: statements are written to the
// connection's buffer, sent at a sync, and their results read at End.
type pipeline struct {
	c     *Conn
	p     *pgconn.Pipeline
	syncs []bool // per queued item: a sync (true) or a statement
	args  params // pgconn copies the encoded arguments at once
}

// StartPipeline enters pipeline mode (extended and prepared modes only).
func (c *Conn) StartPipeline(ctx context.Context) (target.Pipeline, error) {
	if c.mode == ModeSimple {
		return nil, errSimplePipeline
	}
	c.cur.Set("pipeline")
	c.pl = pipeline{c: c, p: c.pc.StartPipeline(ctx), syncs: c.pl.syncs[:0], args: c.pl.args}
	return &c.pl, nil
}

// Queue adds one execution of st; pgconn encodes the arguments at once.
func (p *pipeline) Queue(st target.Stmt, args []target.Value) error {
	s, ok := st.(*Stmt)
	if !ok || s.c != p.c {
		return fmt.Errorf("pipeline: %T is not a statement of this connection", st)
	}
	if s.sd != nil {
		p.p.SendQueryStatement(s.sd, p.args.encode(args), nil, nil)
	} else {
		p.p.SendQueryParams(s.sql, p.args.encode(args), nil, nil, nil)
	}
	p.syncs = append(p.syncs, false)
	return nil
}

// Sync sends what is queued with a sync after it, without waiting.
func (p *pipeline) Sync() error {
	p.syncs = append(p.syncs, true)
	return p.p.Sync()
}

// End syncs, reads every result in order and leaves pipeline mode. After
// a statement's error the server skips the rest of its transaction, and
// pgconn skips their results: so does the count of statements.
func (p *pipeline) End(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		_ = p.p.Close()
		return err
	}
	first := p.Sync()
	stmt, skipping := 0, false
	for _, isSync := range p.syncs {
		if first != nil && !isPgError(first) {
			break // the connection is lost: nothing more to read
		}
		if !isSync && skipping {
			stmt++
			continue
		}
		res, err := p.p.GetResults()
		if err == nil {
			if rr, ok := res.(*pgconn.ResultReader); ok {
				_, err = rr.Close() // discards the rows
			}
		}
		if isSync {
			skipping = false
			if err != nil && first == nil {
				first = err
			}
			continue
		}
		if err != nil {
			skipping = true
			if first == nil {
				first = &target.PipelineError{Index: stmt, Err: err}
			}
		}
		stmt++
	}
	if err := p.p.Close(); err != nil && first == nil {
		first = err
	}
	p.syncs = p.syncs[:0]
	return wrap(ctx, p.c.pc, first)
}

// Abort leaves pipeline mode without a sync. pgconn closes the connection
// when requests were not synced, which rolls them back.
func (p *pipeline) Abort() {
	_ = p.p.Close()
	p.syncs = p.syncs[:0]
}

func isPgError(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr)
}

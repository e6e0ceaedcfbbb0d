package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbmark/dbmark/internal/target"
)

// Type OIDs of the integer types, and of numeric, whose whole values are
// summed too (target.Tally).
const (
	oidInt8    = 20
	oidInt2    = 21
	oidInt4    = 23
	oidNumeric = 1700
)

// Query runs sql with the simple protocol, as psql sends a statement, and
// counts its rows as pgconn reads them into its one reused buffer. A text
// of several statements tallies the last result that returned rows, or
// else the rows they affected.
func (c *Conn) Query(ctx context.Context, sql string, o target.QueryOptions) (target.Tally, error) {
	c.cur.Set(sql)
	var t, last target.Tally
	var affected int64
	mrr := c.pc.Exec(ctx, sql)
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		fds := rr.FieldDescriptions()
		cur := target.Tally{Returned: len(fds) > 0}
		if cur.Returned {
			cur.Columns = make([]string, len(fds))
			for i, f := range fds {
				cur.Columns[i] = f.Name
			}
			switch fds[0].DataTypeOID {
			case oidInt2, oidInt4, oidInt8, oidNumeric:
				cur.SumValid = true
			}
		}
		err := tallyRows(rr, &cur, o.Each)
		tag, cerr := rr.Close()
		if err != nil {
			_ = mrr.Close()
			return target.Tally{}, err
		}
		if cerr != nil {
			break // mrr.Close reports it
		}
		if cur.Returned {
			last = cur
		} else {
			affected += tag.RowsAffected()
		}
	}
	if err := mrr.Close(); err != nil {
		return target.Tally{}, wrap(ctx, c.pc, err)
	}
	if last.Returned {
		t = last
	} else {
		t.Rows = affected
	}
	return t, nil
}

// tallyRows counts rr's rows into t, handing each to each when set.
func tallyRows(rr *pgconn.ResultReader, t *target.Tally, each func([][]byte) error) error {
	for rr.NextRow() {
		vals := rr.Values()
		t.Rows++
		for _, v := range vals {
			t.Bytes += int64(len(v))
		}
		if t.SumValid {
			t.AddText(vals[0])
		}
		if each != nil {
			if err := each(vals); err != nil {
				return err
			}
		}
	}
	return nil
}

// SetQueryTimeout sets the session's statement_timeout: the server
// cancels a statement that runs longer (SQLSTATE 57014).
func (c *Conn) SetQueryTimeout(ctx context.Context, d time.Duration) error {
	if err := c.Exec(ctx, fmt.Sprintf("SET statement_timeout = %d", target.TimeoutMillis(d))); err != nil {
		return fmt.Errorf("set statement_timeout: %w", err)
	}
	return nil
}

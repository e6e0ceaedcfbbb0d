package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	my "github.com/go-sql-driver/mysql"

	"github.com/dbmark/dbmark/internal/target"
)

// Query runs sql in the text protocol, as the mysql client sends a
// statement, and counts its rows as the driver reads them into one reused
// row. A statement that returns rows is told from one that does not by
// its first word (returnsRows), since only an Exec reports the rows
// affected.
func (c *Conn) Query(ctx context.Context, sql string, o target.QueryOptions) (target.Tally, error) {
	c.cur.Set(sql)
	if err := c.watch(ctx); err != nil {
		return target.Tally{}, err
	}
	defer c.w.End()
	if !returnsRows(sql) {
		res, err := c.dc.ExecContext(context.Background(), sql, nil)
		if err != nil {
			return target.Tally{}, wrap(ctx, err)
		}
		n, err := res.RowsAffected()
		return target.Tally{Rows: n}, wrap(ctx, err)
	}
	rows, err := c.dc.QueryContext(context.Background(), sql, nil)
	if err != nil {
		return target.Tally{}, wrap(ctx, err)
	}
	var t target.Tally
	if err := c.tally(rows, &t, o.Each); err != nil {
		return target.Tally{}, wrap(ctx, err)
	}
	return t, nil
}

// tally counts every result set of rows into t (the last one with
// columns is the one kept) and closes rows.
func (c *Conn) tally(rows driver.Rows, t *target.Tally, each func([][]byte) error) error {
	r := &c.rr
	var text, bufs [][]byte
	var cur target.Tally
	begun := false
	keep := func() {
		if len(cur.Columns) > 0 || !t.Returned {
			*t = cur
		}
	}
	_, err := r.readRows(rows, func(rs driver.Rows) {
		if begun {
			keep()
		}
		begun = true
		cols := rs.Columns()
		cur = target.Tally{Returned: true, Columns: append([]string(nil), cols...)}
		if tn, ok := rs.(driver.RowsColumnTypeDatabaseTypeName); ok && len(cols) > 0 {
			cur.SumValid = wholeType(tn.ColumnTypeDatabaseTypeName(0))
		}
		if cap(text) < len(cols) {
			text, bufs = make([][]byte, len(cols)), make([][]byte, len(cols))
		}
		text, bufs = text[:len(cols)], bufs[:len(cols)]
	}, func(d []driver.Value) error {
		cur.Rows++
		for i, v := range d {
			switch x := v.(type) {
			case nil:
				text[i] = nil
			case []byte:
				text[i] = x // already the text the server sent
			case int64:
				if each != nil || r.form[i] != free {
					bufs[i] = r.appendValue(bufs[i][:0], i, v)
					text[i] = bufs[i]
					break
				}
				// Only counted: the length of its text, not written (a
				// whole number is summed from x below, never from text).
				text[i] = nil
				cur.Bytes += int64(decimalLen(x))
				continue
			default:
				// A number the driver parsed, printed back as the text
				// protocol sends it, into a buffer kept from row to row.
				bufs[i] = r.appendValue(bufs[i][:0], i, v)
				text[i] = bufs[i]
			}
			cur.Bytes += int64(len(text[i]))
		}
		if cur.SumValid && len(d) > 0 {
			switch x := d[0].(type) {
			case int64:
				cur.AddInt(x)
			case uint64:
				cur.AddInt(int64(x)) // wraps, as the sum does
			default:
				cur.AddText(text[0])
			}
		}
		if each != nil {
			return each(text)
		}
		return nil
	})
	if err != nil {
		return err
	}
	keep()
	return nil
}

// wholeType says whether a column of the driver's type name holds whole
// numbers (or exact numbers, whose whole values are summed).
func wholeType(name string) bool {
	name = strings.TrimPrefix(name, "UNSIGNED ")
	switch name {
	case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "YEAR", "DECIMAL":
		return true
	}
	return false
}

// SetQueryTimeout sets MariaDB's max_statement_time, which ends any
// statement that runs longer on the server; MySQL has it not and takes
// max_execution_time instead, which ends SELECTs only.
func (c *Conn) SetQueryTimeout(ctx context.Context, d time.Duration) error {
	err := c.Exec(ctx, fmt.Sprintf("SET SESSION max_statement_time = %.6f", d.Seconds()))
	var me *my.MySQLError
	if !errors.As(err, &me) || me.Number != errUnknownVariable {
		if err != nil {
			return fmt.Errorf("set max_statement_time: %w", err)
		}
		return nil
	}
	if err := c.Exec(ctx, fmt.Sprintf("SET SESSION max_execution_time = %d", target.TimeoutMillis(d))); err != nil {
		return fmt.Errorf("set max_execution_time: %w", err)
	}
	return nil
}

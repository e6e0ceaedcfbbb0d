package sqlite

/*
#include <stdint.h>
#include <time.h>

typedef struct sqlite3 sqlite3;
typedef long long sqlite3_int64;
extern void sqlite3_progress_handler(sqlite3 *, int, int (*)(void *), void *);
extern sqlite3_int64 sqlite3_changes64(sqlite3 *);

static sqlite3_int64 dbm_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (sqlite3_int64)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// dbm_past_deadline is the progress handler: SQLite calls it every
// DBM_PROGRESS_STEPS virtual machine instructions of a statement and
// interrupts the statement (SQLITE_INTERRUPT) once it returns non-zero.
// Its argument is the deadline on the monotonic clock, in nanoseconds.
static int dbm_past_deadline(void *deadline) {
	return dbm_now_ns() > (sqlite3_int64)(intptr_t)deadline;
}

enum { DBM_PROGRESS_STEPS = 1000 };

// dbm_deadline makes db interrupt its statements from ns nanoseconds on;
// 0 removes the limit.
static void dbm_deadline(sqlite3 *db, sqlite3_int64 ns) {
	if (ns <= 0) {
		sqlite3_progress_handler(db, 0, 0, 0);
		return;
	}
	sqlite3_progress_handler(db, DBM_PROGRESS_STEPS, dbm_past_deadline, (void *)(intptr_t)(dbm_now_ns() + ns));
}
*/
import "C"

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/dbmark/dbmark/internal/target"
)

// Query runs sql and counts its rows as SQLite steps through them. A
// statement that returns no columns reports the rows it changed.
func (c *Conn) Query(ctx context.Context, sql string, o target.QueryOptions) (target.Tally, error) {
	c.cur.Set(sql)
	if c.timeout > 0 {
		C.dbm_deadline(c.cache.db, C.sqlite3_int64(c.timeout))
		defer C.dbm_deadline(c.cache.db, 0) // the deadline is this statement's alone
	}
	rows, err := c.c.QueryContext(ctx, sql, nil)
	if err != nil {
		return target.Tally{}, err
	}
	cols := rows.Columns()
	if len(cols) == 0 {
		var none []driver.Value
		for {
			if err := rows.Next(none); err != nil {
				if err == io.EOF {
					break
				}
				rows.Close()
				return target.Tally{}, err
			}
		}
		if err := rows.Close(); err != nil {
			return target.Tally{}, err
		}
		var n int64
		if c.cache.db != nil {
			n = int64(C.sqlite3_changes64(c.cache.db))
		}
		return target.Tally{Rows: n}, nil
	}
	// SQLite's columns have no type of their own: the sum holds while
	// every value of the first column is an integer.
	t := target.Tally{Returned: true, Columns: append([]string(nil), cols...), SumValid: true}
	dest := make([]driver.Value, len(cols))
	text := make([][]byte, len(cols))
	bufs := make([][]byte, len(cols))
	for {
		err := rows.Next(dest)
		if err == io.EOF {
			break
		}
		if err != nil {
			rows.Close()
			return target.Tally{}, err
		}
		t.Rows++
		for i, v := range dest {
			switch x := v.(type) {
			case nil:
				text[i] = nil
			case []byte:
				text[i] = x
			default:
				bufs[i] = appendValue(bufs[i][:0], x)
				text[i] = bufs[i]
			}
			t.Bytes += int64(len(text[i]))
		}
		switch x := dest[0].(type) {
		case int64:
			t.AddInt(x)
		case nil:
		default:
			t.SumValid = false
		}
		if o.Each != nil {
			if err := o.Each(text); err != nil {
				rows.Close()
				return target.Tally{}, err
			}
		}
	}
	if !t.SumValid {
		t.Sum = 0
	}
	return t, rows.Close()
}

// appendValue appends a driver value's text as SQLite's shell prints it.
func appendValue(b []byte, v driver.Value) []byte {
	switch x := v.(type) {
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case string:
		return append(b, x...)
	case bool:
		return strconv.AppendBool(b, x)
	case time.Time:
		return x.AppendFormat(b, "2006-01-02 15:04:05.999999999Z07:00")
	}
	return fmt.Append(b, v)
}

// SetQueryTimeout makes every later statement Query runs end with
// SQLITE_INTERRUPT once it has run for d: SQLite's progress handler,
// armed for that statement alone, looks at the clock every thousand
// instructions of it.
func (c *Conn) SetQueryTimeout(_ context.Context, d time.Duration) error {
	if c.cache.db == nil {
		return fmt.Errorf("set a query timeout on SQLite: the connection's handle is unknown")
	}
	c.timeout = d
	return nil
}

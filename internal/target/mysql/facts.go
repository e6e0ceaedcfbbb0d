package mysql

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
)

// sizeVariables decide most of InnoDB's speed: the buffer pool, the redo
// log, how and how often it is flushed.
var sizeVariables = []string{
	"innodb_buffer_pool_size", "innodb_buffer_pool_instances", "innodb_log_file_size", "innodb_log_files_in_group",
	"innodb_redo_log_capacity", "innodb_log_buffer_size", "innodb_flush_method", "innodb_flush_log_at_trx_commit",
	"innodb_doublewrite", "innodb_io_capacity", "innodb_io_capacity_max", "innodb_page_size", "sync_binlog", "log_bin",
	"max_connections", "thread_handling",
}

// Facts reports the variables whose global value differs from the
// compiled-in default (MariaDB's information_schema.SYSTEM_VARIABLES; MySQL
// states only where a value came from), the sizes that matter and the size
// of the tables.
func (t *Target) Facts(ctx context.Context) (*result.EngineFacts, error) {
	c, err := t.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	f := &result.EngineFacts{NonDefault: map[string]result.NonDefault{}, Sizes: map[string]string{}}
	rows, err := c.rows(ctx, `SELECT LOWER(VARIABLE_NAME), GLOBAL_VALUE, DEFAULT_VALUE, GLOBAL_VALUE_ORIGIN
		FROM information_schema.SYSTEM_VARIABLES
		WHERE GLOBAL_VALUE_ORIGIN <> 'COMPILE-TIME' AND NOT (GLOBAL_VALUE <=> DEFAULT_VALUE)`)
	if err != nil {
		// MySQL has no default values in SQL, only each value's source.
		rows, err = c.rows(ctx, `SELECT LOWER(v.VARIABLE_NAME), g.VARIABLE_VALUE, '(not stated by MySQL)', v.VARIABLE_SOURCE
			FROM performance_schema.variables_info v JOIN performance_schema.global_variables g USING (VARIABLE_NAME)
			WHERE v.VARIABLE_SOURCE <> 'COMPILED'`)
	}
	if err != nil {
		return nil, fmt.Errorf("inspect MySQL: non-default variables: %w", err)
	}
	for _, r := range rows {
		f.NonDefault[r[0]] = result.NonDefault{Value: r[1], Default: r[2], Source: strings.ToLower(r[3])}
	}
	rows, err = c.rows(ctx, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('"+strings.Join(sizeVariables, "','")+"')")
	if err != nil {
		return nil, fmt.Errorf("inspect MySQL: sizes: %w", err)
	}
	for _, r := range rows {
		f.Sizes[r[0]] = r[1]
		if r[0] == "innodb_buffer_pool_size" {
			f.CacheBytes, _ = strconv.ParseUint(r[1], 10, 64)
		}
	}
	if rows, err := c.rows(ctx, "SELECT COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) FROM information_schema.TABLES"); err == nil && len(rows) == 1 {
		f.DataBytes, _ = strconv.ParseUint(rows[0][0], 10, 64)
	}
	return f, nil
}

// statusCounters maps SHOW GLOBAL STATUS names to the sampler's names.
// MariaDB 10.6 dropped the Innodb_rows_* counters; its Rows_read and the
// handler counters say the same at the server's level.
var statusCounters = map[string]target.Counter{
	"Innodb_rows_read":                 {Name: "rows_read"},
	"Rows_read":                        {Name: "rows_read"},
	"Rows_sent":                        {Name: "rows_sent"},
	"Handler_write":                    {Name: "handler_write"},
	"Handler_update":                   {Name: "handler_update"},
	"Handler_delete":                   {Name: "handler_delete"},
	"Innodb_rows_inserted":             {Name: "rows_inserted"},
	"Innodb_rows_updated":              {Name: "rows_updated"},
	"Innodb_rows_deleted":              {Name: "rows_deleted"},
	"Innodb_buffer_pool_read_requests": {Name: "buffer_pool_read_requests", Unit: "pages"},
	"Innodb_buffer_pool_reads":         {Name: "buffer_pool_reads", Unit: "pages"},
	"Innodb_buffer_pool_pages_flushed": {Name: "pages_flushed", Unit: "pages"},
	"Innodb_buffer_pool_pages_dirty":   {Name: "dirty_pages", Unit: "pages", Gauge: true},
	"Innodb_buffer_pool_pages_data":    {Name: "data_pages", Unit: "pages", Gauge: true},
	"Innodb_buffer_pool_wait_free":     {Name: "buffer_pool_wait_free"},
	"Innodb_log_writes":                {Name: "log_writes"},
	"Innodb_os_log_written":            {Name: "log_bytes", Unit: "bytes"},
	"Innodb_log_waits":                 {Name: "log_waits"},
	"Innodb_checkpoint_age":            {Name: "checkpoint_age", Unit: "bytes", Gauge: true},
	"Innodb_data_fsyncs":               {Name: "fsyncs"},
	"Innodb_row_lock_waits":            {Name: "row_lock_waits"},
	"Innodb_row_lock_time":             {Name: "row_lock_time", Unit: "ms"},
	"Innodb_row_lock_current_waits":    {Name: "lock_waiters", Gauge: true},
	"Threads_running":                  {Name: "threads_running", Gauge: true},
	"Threads_connected":                {Name: "threads_connected", Gauge: true},
	"Questions":                        {Name: "questions"},
	"Com_commit":                       {Name: "commits"},
	"Com_rollback":                     {Name: "rollbacks"},
}

// OpenCounters opens a connection for the sampler.
func (t *Target) OpenCounters(ctx context.Context) (target.CounterReader, error) {
	c, err := t.conn(ctx)
	if err != nil {
		return nil, err
	}
	return &counterReader{c: c}, nil
}

type counterReader struct{ c *Conn }

// ReadCounters reads SHOW GLOBAL STATUS and keeps the counters that explain
// a throughput chart.
func (r *counterReader) ReadCounters(ctx context.Context) ([]target.Counter, error) {
	rows, err := r.c.rows(ctx, "SHOW GLOBAL STATUS")
	if err != nil {
		return nil, fmt.Errorf("read MySQL counters: %w", err)
	}
	out := make([]target.Counter, 0, len(statusCounters))
	for _, row := range rows {
		c, ok := statusCounters[row[0]]
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(row[1], 64)
		if err != nil {
			continue
		}
		c.Value = v
		out = append(out, c)
	}
	// lock_waiters counts the sessions waiting on another's lock: InnoDB's
	// row locks (its status above) and the server's own, which it does not
	// count (a table's metadata lock, LOCK TABLES, a global read lock,
	// the backup lock): those are the sessions the process list finds
	// "Waiting for ... lock". A user without PROCESS sees only its own
	// user's sessions, the run's.
	waits, err := r.c.rows(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE LIKE 'Waiting for%lock'")
	if err != nil {
		return out, fmt.Errorf("read MySQL's lock waits: %w", err)
	}
	if len(waits) != 1 {
		return out, nil
	}
	v, err := strconv.ParseFloat(waits[0][0], 64)
	if err != nil {
		return out, nil
	}
	for i := range out {
		if out[i].Name == "lock_waiters" {
			out[i].Value += v
			return out, nil
		}
	}
	return append(out, target.Counter{Name: "lock_waiters", Gauge: true, Value: v}), nil
}

func (r *counterReader) Close() error { return r.c.Close() }

package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
)

// sizeSettings are the settings that decide most of PostgreSQL's speed:
// memory, WAL and checkpoints, durability.
var sizeSettings = []string{
	"shared_buffers", "effective_cache_size", "work_mem", "maintenance_work_mem", "huge_pages",
	"wal_buffers", "wal_level", "wal_compression", "min_wal_size", "max_wal_size", "wal_segment_size",
	"checkpoint_timeout", "checkpoint_completion_target", "fsync", "synchronous_commit", "full_page_writes",
	"wal_sync_method", "bgwriter_delay", "bgwriter_lru_maxpages", "max_connections",
}

// unitBytes turns pg_settings' memory units into bytes per unit.
var unitBytes = map[string]uint64{"B": 1, "kB": 1 << 10, "8kB": 8 << 10, "16kB": 16 << 10, "MB": 1 << 20, "16MB": 16 << 20, "GB": 1 << 30}

// Facts reports the settings that differ from their built-in defaults
// (pg_settings' boot_val), the sizes that matter and the databases' size.
func (t *Target) Facts(ctx context.Context) (*result.EngineFacts, error) {
	pc, err := t.connectRaw(ctx)
	if err != nil {
		return nil, err
	}
	defer pc.Close(context.Background())
	f := &result.EngineFacts{NonDefault: map[string]result.NonDefault{}, Sizes: map[string]string{}}
	rows, err := query(ctx, pc, `SELECT name, setting, coalesce(boot_val, ''), source, coalesce(unit, '')
		FROM pg_settings WHERE source NOT IN ('default', 'override') AND setting IS DISTINCT FROM boot_val`)
	if err != nil {
		return nil, fmt.Errorf("inspect PostgreSQL: non-default settings: %w", err)
	}
	for _, r := range rows {
		unit := r[4]
		f.NonDefault[r[0]] = result.NonDefault{Value: withUnit(r[1], unit), Default: withUnit(r[2], unit), Source: r[3]}
	}
	rows, err = query(ctx, pc, `SELECT name, setting, coalesce(unit, '') FROM pg_settings WHERE name = ANY('{`+strings.Join(sizeSettings, ",")+`}')`)
	if err != nil {
		return nil, fmt.Errorf("inspect PostgreSQL: sizes: %w", err)
	}
	for _, r := range rows {
		if per, ok := unitBytes[r[2]]; ok {
			n, err := strconv.ParseUint(r[1], 10, 64)
			if err == nil {
				f.Sizes[r[0]] = strconv.FormatUint(n*per, 10)
				if r[0] == "shared_buffers" {
					f.CacheBytes = n * per
				}
				continue
			}
		}
		f.Sizes[r[0]] = withUnit(r[1], r[2])
	}
	rows, err = query(ctx, pc, `SELECT coalesce(sum(pg_database_size(datname)), 0)::bigint FROM pg_database
		WHERE datallowconn AND has_database_privilege(datname, 'CONNECT')`)
	if err == nil && len(rows) == 1 {
		f.DataBytes, _ = strconv.ParseUint(rows[0][0], 10, 64)
	}
	return f, nil
}

func withUnit(v, unit string) string {
	if unit == "" || v == "" || v == "-1" {
		return v
	}
	return v + " " + unit
}

// query runs sql and returns its rows as text.
func query(ctx context.Context, pc *pgconn.PgConn, sql string) ([][]string, error) {
	res := pc.ExecParams(ctx, sql, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, res.Err
	}
	out := make([][]string, len(res.Rows))
	for i, row := range res.Rows {
		out[i] = make([]string, len(row))
		for j, v := range row {
			out[i][j] = string(v)
		}
	}
	return out, nil
}

// counterQuery is one statement returning one row of counters; its column
// names are the counters' names.
type counterQuery struct {
	minVersion int // server_version_num from which the view has these columns
	maxVersion int // 0: still there
	sql        string
}

// counterQueries follow the statistics views across versions:
// pg_stat_checkpointer took the checkpoint counters from pg_stat_bgwriter in
// 17, pg_stat_io came in 16, pg_stat_wal in 14.
var counterQueries = []counterQuery{
	{0, 0, `SELECT sum(xact_commit) AS commits, sum(xact_rollback) AS rollbacks, sum(blks_read) AS blocks_read,
		sum(blks_hit) AS blocks_hit, sum(tup_returned) AS rows_returned, sum(tup_fetched) AS rows_read,
		sum(tup_inserted) AS rows_inserted, sum(tup_updated) AS rows_updated, sum(tup_deleted) AS rows_deleted,
		sum(temp_bytes) AS temp_bytes, sum(deadlocks) AS deadlocks FROM pg_stat_database`},
	// A checkpoint's sync time (ms) is added when it ends: a sync that held
	// the disk shows in the second it ended, which a sample of the
	// checkpointer at work (checkpointer_busy, below) may miss. Its write
	// time is left out: a spread checkpoint's is mostly the naps that pace
	// it.
	{0, 170000, `SELECT checkpoints_timed, checkpoints_req AS checkpoints_requested, buffers_checkpoint AS checkpoint_buffers,
		checkpoint_sync_time,
		buffers_clean AS bgwriter_buffers, buffers_backend AS backend_buffers, buffers_alloc FROM pg_stat_bgwriter`},
	{170000, 0, `SELECT num_timed AS checkpoints_timed, num_requested AS checkpoints_requested, buffers_written AS checkpoint_buffers,
		sync_time AS checkpoint_sync_time FROM pg_stat_checkpointer`},
	{170000, 0, `SELECT buffers_clean AS bgwriter_buffers, buffers_alloc FROM pg_stat_bgwriter`},
	{140000, 0, `SELECT wal_records, wal_fpi, wal_bytes, wal_buffers_full, wal_write AS wal_writes, wal_sync AS wal_syncs FROM pg_stat_wal`},
	{160000, 0, `SELECT coalesce(sum(reads), 0) AS io_reads, coalesce(sum(writes), 0) AS io_writes,
		coalesce(sum(extends), 0) AS io_extends, coalesce(sum(fsyncs), 0) AS io_fsyncs FROM pg_stat_io`},
	// checkpointer_busy is 100 when the sample finds the checkpointer at
	// work on a checkpoint (writing or syncing its pages, a CHECKPOINT's
	// or a spread checkpoint's final syncs), else 0, so its mean over a
	// stretch is the share of the samples that found it so. Its idle wait
	// and the naps that pace a spread checkpoint are not work: a spread
	// checkpoint is in progress most of the time, and writes little at a
	// time. Another role's wait events are hidden from a user without
	// pg_read_all_stats, whose counter is left out.
	// lock_waiters counts the backends waiting on another's lock (a row's,
	// a table's): the wait of a role's own sessions is visible to it.
	{0, 0, `SELECT count(*) FILTER (WHERE state = 'active') AS active_backends, count(*) AS backends,
		count(*) FILTER (WHERE wait_event_type = 'Lock') AS lock_waiters,
		CASE WHEN pg_has_role('pg_read_all_stats', 'USAGE') THEN
			100 * count(*) FILTER (WHERE backend_type = 'checkpointer'
				AND coalesce(wait_event, '') NOT IN ('CheckpointerMain', 'CheckpointWriteDelay')) END
			AS checkpointer_busy
		FROM pg_stat_activity`},
}

var gauges = map[string]bool{"active_backends": true, "backends": true, "lock_waiters": true, "checkpointer_busy": true}

// OpenCounters opens a connection for the sampler.
func (t *Target) OpenCounters(ctx context.Context) (target.CounterReader, error) {
	pc, err := t.connectRaw(ctx)
	if err != nil {
		return nil, err
	}
	v, _ := strconv.Atoi(pc.ParameterStatus("server_version_num"))
	if v == 0 {
		if rows, err := query(ctx, pc, "SHOW server_version_num"); err == nil && len(rows) == 1 {
			v, _ = strconv.Atoi(rows[0][0])
		}
	}
	cr := &counterReader{pc: pc}
	for _, q := range counterQueries {
		if v >= q.minVersion && (q.maxVersion == 0 || v < q.maxVersion) {
			cr.queries = append(cr.queries, q.sql)
		}
	}
	return cr, nil
}

type counterReader struct {
	pc      *pgconn.PgConn
	queries []string
}

func (r *counterReader) ReadCounters(ctx context.Context) ([]target.Counter, error) {
	var out []target.Counter
	for _, q := range r.queries {
		res := r.pc.ExecParams(ctx, q, nil, nil, nil, nil).Read()
		if res.Err != nil {
			return out, fmt.Errorf("read PostgreSQL counters: %w", res.Err)
		}
		if len(res.Rows) != 1 {
			continue
		}
		for i, fd := range res.FieldDescriptions {
			v, err := strconv.ParseFloat(string(res.Rows[0][i]), 64)
			if err != nil {
				continue // NULL: nothing counted yet
			}
			unit := ""
			switch {
			case strings.HasSuffix(fd.Name, "_bytes"):
				unit = "bytes"
			case strings.HasSuffix(fd.Name, "_buffers") || strings.HasPrefix(fd.Name, "blocks_") || fd.Name == "buffers_alloc":
				unit = "pages"
			case fd.Name == "checkpointer_busy":
				unit = "%"
			case strings.HasSuffix(fd.Name, "_time"):
				unit = "ms"
			}
			out = append(out, target.Counter{Name: fd.Name, Unit: unit, Value: v, Gauge: gauges[fd.Name]})
		}
	}
	return out, nil
}

func (r *counterReader) Close() error { return r.pc.Close(context.Background()) }

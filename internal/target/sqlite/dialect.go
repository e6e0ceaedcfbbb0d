package sqlite

import (
	"context"
	"fmt"

	"github.com/dbmark/dbmark/internal/target"
)

// dialect is SQLite's SQL: one file, no server, types by affinity.
type dialect struct{}

var _ target.Dialect = dialect{}

const name = "SQLite"

func (dialect) Name() string   { return name }
func (dialect) Embedded() bool { return true }

func (dialect) Supports(f target.Feature) error {
	switch f {
	case target.AddedForeignKeys:
		return &target.UnsupportedError{Engine: name, Feature: f, Why: "ALTER TABLE cannot add one"}
	case target.Unlogged, target.FillFactor, target.Tablespaces, target.Partitions, target.ForeignKeysOnPartitions:
		return &target.UnsupportedError{Engine: name, Feature: f}
	}
	return nil
}

func (dialect) Placeholder(int) string { return "?" }

func (dialect) Begin(write bool) string {
	if write {
		return "BEGIN IMMEDIATE"
	}
	return "BEGIN"
}

func (d dialect) ScriptStatement(text string, txn target.Txn) string {
	return target.ScriptTxn(d, text, txn)
}

func (dialect) DefaultIgnoredErrors() []string { return nil }

// Type names the types as the other engines do; SQLite keeps the value
// by the name's affinity.
func (dialect) Type(t target.Type) string {
	switch t {
	case target.Float32:
		return "real"
	case target.DateTime:
		return "datetime"
	}
	return "timestamp"
}

func (dialect) AutoIncrementPK(col string) string { return col + " INTEGER PRIMARY KEY" }
func (dialect) IntPK(col string) string           { return col + " INTEGER NOT NULL PRIMARY KEY" }

// AutoIncrement: an INTEGER primary key is the rowid, which SQLite
// assigns; AUTOINCREMENT keeps ids increasing after deletes, as the other
// engines do, and must be declared on the column.
func (dialect) AutoIncrement(_, monotonic bool) (string, bool) {
	if monotonic {
		return "INTEGER PRIMARY KEY AUTOINCREMENT", true
	}
	return "INTEGER", false
}

func (dialect) NextID() string                       { return "" }
func (dialect) InlineIndex(string, ...string) string { return "" }

func (d dialect) CreateTable(t target.Table) (target.TableDDL, error) {
	switch {
	case t.Unlogged:
		return target.TableDDL{}, d.Supports(target.Unlogged)
	case t.FillFactor != 0 && t.FillFactor != 100:
		return target.TableDDL{}, d.Supports(target.FillFactor)
	case t.Tablespace != "":
		return target.TableDDL{}, d.Supports(target.Tablespaces)
	case t.Partitions != nil:
		return target.TableDDL{}, d.Supports(target.Partitions)
	}
	return target.TableDDL{Head: t.Layout.KW("create table")}, nil
}

// AddPrimaryKey: SQLite cannot add a primary key to a table, so it gets
// the unique index PostgreSQL builds for one, under the same name.
func (d dialect) AddPrimaryKey(table, col, tablespace string) (string, error) {
	if tablespace != "" {
		return "", d.Supports(target.Tablespaces)
	}
	return fmt.Sprintf("create unique index %s_pkey on %s (%s)", table, table, col), nil
}

func (d dialect) AddForeignKey(target.ForeignKey) (string, error) {
	return "", d.Supports(target.AddedForeignKeys)
}

// DropTables drops one table per statement, in the order given.
func (dialect) DropTables(tables ...string) []string { return each("drop table if exists ", tables) }

// Truncate deletes every row: SQLite's DELETE without WHERE truncates.
func (dialect) Truncate(tables ...string) []string { return each("delete from ", tables) }

func each(verb string, tables []string) []string {
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = verb + t
	}
	return out
}

// Reload needs nothing around it: the bulk path commits as it goes.
func (dialect) Reload() target.Bracket { return target.Bracket{} }

func (dialect) Series(col string, n int64) target.Series { return target.RecursiveSeries(col, n) }
func (dialect) IntDiv() string                           { return "/" }

// Maintain: SQLite reuses free pages itself (VACUUM rebuilds the whole
// file, which is not maintenance of a table); ANALYZE refreshes the
// statistics.
func (dialect) Maintain(table string, m target.Maintenance) []string {
	if m&target.Analyze != 0 {
		return []string{"analyze " + table}
	}
	return nil
}

func (dialect) IndexHint(string) string { return "" }

// DeleteOne names the row by its rowid: DELETE ... LIMIT needs a
// compile-time option the library is not built with.
func (dialect) DeleteOne(table, cond string) string {
	return "DELETE FROM " + table + " WHERE rowid = (SELECT rowid FROM " + table + " WHERE " + cond + " LIMIT 1)"
}

func (dialect) TableExists(table string) string {
	return "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '" + table + "'"
}

// TableBytes reads the dbstat table. SQLite built without it (the
// sqlite_dbstat build tag) can say only how much of the file is in use:
// that is the table's size, indexes included, when the file holds
// nothing else, and unknown when it does. dbstat reads every page, so
// callers space their calls out.
func (dialect) TableBytes(ctx context.Context, c target.Conn, table string) (data, index int64, err error) {
	if data, err = target.QueryInt(ctx, c, "SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name = '"+table+"'"); err != nil {
		return fileBytes(ctx, c, table)
	}
	if index, err = target.QueryInt(ctx, c, "SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '"+table+"')"); err != nil {
		return data, -1, fmt.Errorf("read the index size of %s: %w", table, err)
	}
	return data, index, nil
}

// fileBytes is the file's pages in use when table and its indexes are all
// the file holds; -1 otherwise.
func fileBytes(ctx context.Context, c target.Conn, table string) (data, index int64, err error) {
	others, err := target.QueryInt(ctx, c, "SELECT COUNT(*) FROM sqlite_master WHERE tbl_name <> '"+table+"' AND name NOT LIKE 'sqlite_%'")
	if err != nil {
		return -1, -1, fmt.Errorf("read the size of %s: %w", table, err)
	}
	if others > 0 {
		return -1, -1, nil
	}
	var n [3]int64
	for i, q := range []string{"PRAGMA page_count", "PRAGMA freelist_count", "PRAGMA page_size"} {
		if n[i], err = target.QueryInt(ctx, c, q); err != nil {
			return -1, -1, fmt.Errorf("read the size of %s: %w", table, err)
		}
	}
	return (n[0] - n[1]) * n[2], -1, nil
}

// Explain asks for the plan of q.
func (dialect) Explain(q string) string { return "EXPLAIN QUERY PLAN " + target.TrimStatement(q) }

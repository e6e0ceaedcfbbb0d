package mysql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dbmark/dbmark/internal/target"
)

// dialect is MariaDB's and MySQL's SQL, with InnoDB's rules.
type dialect struct{}

var _ target.Dialect = dialect{}

const name = "MariaDB and MySQL"

func (dialect) Name() string   { return name }
func (dialect) Embedded() bool { return false }

func (dialect) Supports(f target.Feature) error {
	switch f {
	case target.FillFactor:
		return &target.UnsupportedError{Engine: name, Feature: f, Why: "InnoDB's is the server's innodb_fill_factor"}
	case target.ForeignKeysOnPartitions:
		return &target.UnsupportedError{Engine: name, Feature: f, Why: "InnoDB does not allow them"}
	case target.Unlogged, target.Tablespaces:
		return &target.UnsupportedError{Engine: name, Feature: f}
	}
	return nil
}

func (dialect) Placeholder(int) string { return "?" }
func (dialect) Begin(bool) string      { return "BEGIN" }

func (d dialect) ScriptStatement(text string, txn target.Txn) string {
	return target.ScriptTxn(d, text, txn)
}

// DefaultIgnoredErrors is empty: the errors sysbench's mysql driver
// ignores by default (1213, 1020, 1205) are retried instead.
func (dialect) DefaultIgnoredErrors() []string { return nil }

// Type: MariaDB's timestamp has whole seconds and ends in 2038;
// datetime(6) is what PostgreSQL's timestamp is.
func (dialect) Type(t target.Type) string {
	switch t {
	case target.Float32:
		return "float"
	case target.DateTime:
		return "datetime"
	}
	return "datetime(6)"
}

func (dialect) AutoIncrementPK(col string) string {
	return col + " INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY"
}
func (dialect) IntPK(col string) string { return col + " INTEGER NOT NULL PRIMARY KEY" }

func (dialect) AutoIncrement(big, _ bool) (string, bool) {
	if big {
		return "BIGINT NOT NULL AUTO_INCREMENT", false
	}
	return "INTEGER NOT NULL AUTO_INCREMENT", false
}

// NextID: an id of 0 asks for the next AUTO_INCREMENT value (unless
// sql_mode has NO_AUTO_VALUE_ON_ZERO), as sysbench sends it.
func (dialect) NextID() string { return "0" }

func (dialect) InlineIndex(name string, cols ...string) string {
	return "KEY " + name + " (" + strings.Join(cols, ", ") + ")"
}

// CreateTable names partitions inside the table's definition: they are
// not tables of their own. MariaDB's HASH is the key modulo N, not
// PostgreSQL's hash, so rows spread differently.
func (d dialect) CreateTable(t target.Table) (target.TableDDL, error) {
	if err := d.refuse(t); err != nil {
		return target.TableDDL{}, err
	}
	l := t.Layout
	ddl := target.TableDDL{Head: l.KW("create table")}
	if t.StorageEngine != "" {
		ddl.Tail = " " + l.KW("engine") + l.Eq() + t.StorageEngine
	}
	p := t.Partitions
	switch {
	case p == nil:
	case p.Hash:
		ddl.Tail += fmt.Sprintf(" %s (%s) %s %d", l.KW("partition by hash"), p.Column, l.KW("partitions"), p.Count)
	default:
		parts := make([]string, p.Count)
		for i := range parts {
			_, hi := p.RangeBound(i)
			switch {
			case hi != "":
				hi = "(" + hi + ")"
			case l.ParenMax:
				hi = "(" + l.KW("maxvalue") + ")"
			default:
				hi = l.KW("maxvalue")
			}
			parts[i] = l.KW("partition") + " " + p.Name(i, false) + " " + l.KW("values less than") + " " + hi
		}
		ddl.Tail += " " + l.KW("partition by range") + " (" + p.Column + ") (" + strings.Join(parts, ", ") + ")"
	}
	return ddl, nil
}

// refuse is the error for the first of t's options the engine lacks.
func (d dialect) refuse(t target.Table) error {
	switch {
	case t.Unlogged:
		return d.Supports(target.Unlogged)
	case t.FillFactor != 0 && t.FillFactor != 100:
		return d.Supports(target.FillFactor)
	case t.Tablespace != "":
		return d.Supports(target.Tablespaces)
	}
	return nil
}

func (d dialect) AddPrimaryKey(table, col, tablespace string) (string, error) {
	if tablespace != "" {
		return "", d.Supports(target.Tablespaces)
	}
	return fmt.Sprintf("alter table %s add primary key (%s)", table, col), nil
}

// AddForeignKey names the referenced column, which MariaDB wants.
func (dialect) AddForeignKey(fk target.ForeignKey) (string, error) {
	return fmt.Sprintf("alter table %s add constraint %s foreign key (%s) references %s (%s)", fk.Table, fk.Name, fk.Column, fk.Ref, fk.RefColumn), nil
}

// DropTables drops them in one statement with the foreign keys unchecked:
// InnoDB checks them table by table even within one DROP. The names are
// sorted so the text does not depend on the caller's order.
func (dialect) DropTables(tables ...string) []string {
	s := slices.Clone(tables)
	slices.Sort(s)
	return []string{"set foreign_key_checks = 0", "drop table if exists " + strings.Join(s, ", "), "set foreign_key_checks = 1"}
}

func (dialect) Truncate(tables ...string) []string {
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = "truncate table " + t
	}
	return out
}

// Reload unchecks the foreign keys: InnoDB refuses to truncate a
// referenced table. Its bulk path commits as it goes.
func (dialect) Reload() target.Bracket {
	return target.Bracket{Before: []string{"set foreign_key_checks = 0"}, After: []string{"set foreign_key_checks = 1"}}
}

// Series is a recursive common table expression, which MariaDB stops
// after 1000 rounds by default.
func (dialect) Series(col string, n int64) target.Series {
	s := target.RecursiveSeries(col, n)
	s.Setup = []string{fmt.Sprintf("set session max_recursive_iterations = %d", n+1)}
	return s
}

func (dialect) IntDiv() string { return "div" }

// Maintain: InnoDB purges dead rows itself; ANALYZE TABLE refreshes the
// statistics.
func (dialect) Maintain(table string, m target.Maintenance) []string {
	if m&target.Analyze != 0 {
		return []string{"analyze table " + table}
	}
	return nil
}

func (dialect) IndexHint(index string) string { return "FORCE INDEX (" + index + ")" }

// DeleteOne uses DELETE's own LIMIT.
func (dialect) DeleteOne(table, cond string) string {
	return "DELETE FROM " + table + " WHERE " + cond + " LIMIT 1"
}

func (dialect) TableExists(table string) string {
	return "SELECT 1" + infoSchema(table)
}

func (dialect) TableBytes(ctx context.Context, c target.Conn, table string) (data, index int64, err error) {
	return target.TableBytes(ctx, c, table, "SELECT DATA_LENGTH"+infoSchema(table), "SELECT INDEX_LENGTH"+infoSchema(table))
}

func infoSchema(table string) string {
	return " FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" + table + "'"
}

// Explain asks for the plan of q.
func (dialect) Explain(q string) string { return "EXPLAIN " + target.TrimStatement(q) }

package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/dbmark/dbmark/internal/target"
)

// dialect is PostgreSQL's SQL, pgbench's statements its reference.
type dialect struct{}

var _ target.Dialect = dialect{}

func (dialect) Name() string                  { return "PostgreSQL" }
func (dialect) Embedded() bool                { return false }
func (dialect) Supports(target.Feature) error { return nil }

func (dialect) Placeholder(n int) string { return "$" + strconv.Itoa(n) }
func (dialect) Begin(bool) string        { return "BEGIN" }

// ScriptStatement keeps the text: pgbench's scripts are PostgreSQL's.
func (dialect) ScriptStatement(text string, _ target.Txn) string { return text }

// DefaultIgnoredErrors: sysbench's pgsql driver ignores unique violations,
// which concurrent DELETE/INSERT pairs provoke under READ COMMITTED.
func (dialect) DefaultIgnoredErrors() []string { return []string{"23505"} }

func (dialect) Type(t target.Type) string {
	if t == target.Float32 {
		return "real"
	}
	return "timestamp"
}

func (dialect) AutoIncrementPK(col string) string { return col + " SERIAL PRIMARY KEY" }
func (dialect) IntPK(col string) string           { return col + " INTEGER NOT NULL PRIMARY KEY" }

func (dialect) AutoIncrement(big, _ bool) (string, bool) {
	if big {
		return "BIGSERIAL", false
	}
	return "SERIAL", false
}

func (dialect) NextID() string                       { return "" }
func (dialect) InlineIndex(string, ...string) string { return "" }

// CreateTable declares partitions with the table and creates each as a
// table of its own; a partitioned table takes no fill factor, its
// partitions do.
func (dialect) CreateTable(t target.Table) (target.TableDDL, error) {
	l := t.Layout
	head := l.KW("create")
	if t.Unlogged {
		head += " " + l.KW("unlogged")
	}
	head += " " + l.KW("table")
	ddl := target.TableDDL{Head: head}
	fill := ""
	if t.FillFactor > 0 {
		fill = " " + l.KW("with") + " (" + l.KW("fillfactor") + l.Eq() + strconv.Itoa(t.FillFactor) + ")"
	}
	if p := t.Partitions; p != nil {
		method := "range"
		if p.Hash {
			method = "hash"
		}
		ddl.Tail = " " + l.KW("partition by "+method) + " (" + p.Column + ")"
		for i := 0; i < p.Count; i++ {
			var b strings.Builder
			b.WriteString(head + " " + p.Name(i, true) + l.Sep() + l.KW("partition of") + " " + t.Name + l.Sep() + l.KW("for values") + " ")
			if p.Hash {
				fmt.Fprintf(&b, "%s (%s %d, %s %d)", l.KW("with"), l.KW("modulus"), p.Count, l.KW("remainder"), i)
			} else {
				lo, hi := p.RangeBound(i)
				if lo == "" {
					lo = l.KW("minvalue")
				}
				if hi == "" {
					hi = l.KW("maxvalue")
				}
				fmt.Fprintf(&b, "%s (%s) %s (%s)", l.KW("from"), lo, l.KW("to"), hi)
			}
			b.WriteString(fill)
			ddl.After = append(ddl.After, b.String())
		}
	} else {
		ddl.Tail = fill
	}
	if t.Tablespace != "" {
		ddl.Tail += " " + l.KW("tablespace") + " " + pgx.Identifier{t.Tablespace}.Sanitize()
	}
	return ddl, nil
}

func (dialect) AddPrimaryKey(table, col, tablespace string) (string, error) {
	ddl := fmt.Sprintf("alter table %s add primary key (%s)", table, col)
	if tablespace != "" {
		ddl += " using index tablespace " + pgx.Identifier{tablespace}.Sanitize()
	}
	return ddl, nil
}

func (dialect) AddForeignKey(fk target.ForeignKey) (string, error) {
	return fmt.Sprintf("alter table %s add constraint %s foreign key (%s) references %s", fk.Table, fk.Name, fk.Column, fk.Ref), nil
}

// DropTables drops them in one statement, which PostgreSQL orders itself;
// the names are sorted so the text does not depend on the caller's order.
func (dialect) DropTables(tables ...string) []string {
	return []string{"drop table if exists " + sorted(tables)}
}

// Truncate empties them in one statement, as DropTables.
func (dialect) Truncate(tables ...string) []string {
	if len(tables) == 1 {
		return []string{"truncate " + tables[0]}
	}
	return []string{"truncate table " + sorted(tables)}
}

func sorted(tables []string) string {
	s := slices.Clone(tables)
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// Reload is one transaction: the tables are emptied and loaded together
// or not at all.
func (dialect) Reload() target.Bracket {
	return target.Bracket{Before: []string{"begin"}, After: []string{"commit"}, Abort: []string{"rollback"}}
}

func (dialect) Series(col string, n int64) target.Series {
	return target.Series{From: fmt.Sprintf("generate_series(1, %d) as %s", n, col)}
}

func (dialect) IntDiv() string { return "/" }

func (dialect) Maintain(table string, m target.Maintenance) []string {
	switch m {
	case target.Vacuum:
		return []string{"vacuum " + table}
	case target.Vacuum | target.Analyze:
		return []string{"vacuum analyze " + table}
	case target.Analyze:
		return []string{"analyze " + table}
	}
	return nil
}

func (dialect) IndexHint(string) string { return "" }

// DeleteOne names the row by its ctid: PostgreSQL's DELETE takes no LIMIT.
func (dialect) DeleteOne(table, cond string) string {
	return "DELETE FROM " + table + " WHERE ctid = (SELECT ctid FROM " + table + " WHERE " + cond + " LIMIT 1)"
}

// TableExists looks for a table or partitioned table on the search path;
// unquoted names are folded to lower case.
func (dialect) TableExists(table string) string {
	return "SELECT 1 FROM pg_class WHERE relname = '" + strings.ToLower(table) + "' AND relkind IN ('r', 'p') AND pg_table_is_visible(oid)"
}

// TableBytes sums the table and its partitions: pg_partition_tree lists a
// partitioned table's partitions (and nothing for a plain table), and the
// table itself is added, its own size being 0 when it is partitioned.
func (dialect) TableBytes(ctx context.Context, c target.Conn, table string) (data, index int64, err error) {
	rels := "(SELECT '" + strings.ToLower(table) + "'::regclass AS relid UNION SELECT relid FROM pg_partition_tree('" +
		strings.ToLower(table) + "')) AS r"
	return target.TableBytes(ctx, c, table, "SELECT COALESCE(SUM(pg_table_size(relid)), 0) FROM "+rels,
		"SELECT COALESCE(SUM(pg_indexes_size(relid)), 0) FROM "+rels)
}

// Explain asks for the plan of q.
func (dialect) Explain(q string) string { return "EXPLAIN " + target.TrimStatement(q) }

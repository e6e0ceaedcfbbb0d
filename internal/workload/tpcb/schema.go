package tpcb

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// pgbench's sizes per scale unit (pgbench.c: nbranches, ntellers, naccounts).
const (
	branchesPerScale = 1
	tellersPerScale  = 10
	accountsPerScale = 100_000
	// bigIDScale is pgbench's SCALE_32BIT_THRESHOLD: from this scale on,
	// account ids no longer fit in an int and aid becomes bigint.
	bigIDScale = 20_000
)

// Tables in the order pgbench creates them.
var tableNames = []string{"pgbench_history", "pgbench_tellers", "pgbench_accounts", "pgbench_branches"}

// table is one of pgbench's table definitions: its columns when account
// ids are 32 bits and when they are 64 bits, and whether it takes the
// fill factor (history does not: it is only ever appended to).
type table struct {
	name           string
	small, big     string
	withFillfactor bool
}

// pgbench's ddlinfo, column for column. The filler columns of history,
// tellers and branches stay NULL, as in pgbench, whose tables therefore do
// not reach TPC-B's 100 bytes a row.
var tables = []table{
	{"pgbench_history", "tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22)",
		"tid int,bid int,aid bigint,delta int,mtime timestamp,filler char(22)", false},
	{"pgbench_tellers", "tid int not null,bid int,tbalance int,filler char(84)",
		"tid int not null,bid int,tbalance int,filler char(84)", true},
	{"pgbench_accounts", "aid    int not null,bid int,abalance int,filler char(84)",
		"aid bigint not null,bid int,abalance int,filler char(84)", true},
	{"pgbench_branches", "bid int not null,bbalance int,filler char(88)",
		"bid int not null,bbalance int,filler char(88)", true},
}

// primaryKeys are pgbench's initCreatePKeys statements.
var primaryKeys = []struct{ table, col string }{
	{"pgbench_branches", "bid"}, {"pgbench_tellers", "tid"}, {"pgbench_accounts", "aid"},
}

// foreignKeys are pgbench's initCreateFKeys constraints.
var foreignKeys = []struct{ table, name, col, ref, refCol string }{
	{"pgbench_tellers", "pgbench_tellers_bid_fkey", "bid", "pgbench_branches", "bid"},
	{"pgbench_accounts", "pgbench_accounts_bid_fkey", "bid", "pgbench_branches", "bid"},
	{"pgbench_history", "pgbench_history_bid_fkey", "bid", "pgbench_branches", "bid"},
	{"pgbench_history", "pgbench_history_tid_fkey", "tid", "pgbench_tellers", "tid"},
	{"pgbench_history", "pgbench_history_aid_fkey", "aid", "pgbench_accounts", "aid"},
}

// schema renders the DDL for one engine kind ("postgres", "mysql", "sqlite").
type schema struct {
	kind       string
	scale      int64
	fillfactor int
	unlogged   bool
	partitions int
	method     string // "range" or "hash" when partitions > 0
	// PostgreSQL's tablespaces for the tables and for the primary keys'
	// indexes ("": the database's default).
	tablespace, indexTablespace string
}

func (s *schema) columns(t table) string {
	cols := t.small
	if s.scale >= bigIDScale {
		cols = t.big
	}
	if s.kind == "mysql" {
		// MariaDB's timestamp has whole seconds and ends in 2038; datetime(6)
		// is what PostgreSQL's timestamp is.
		cols = strings.Replace(cols, "mtime timestamp", "mtime datetime(6)", 1)
	}
	return cols
}

// createTables is pgbench's initCreateTables, per engine.
func (s *schema) createTables() []string {
	var out []string
	for _, t := range tables {
		accounts := t.name == "pgbench_accounts"
		var b strings.Builder
		b.WriteString("create")
		if s.unlogged {
			b.WriteString(" unlogged")
		}
		fmt.Fprintf(&b, " table %s(%s)", t.name, s.columns(t))
		switch {
		case accounts && s.partitions > 0 && s.kind == "postgres":
			fmt.Fprintf(&b, " partition by %s (aid)", s.method)
		case accounts && s.partitions > 0 && s.kind == "mysql":
			b.WriteString(s.mysqlPartitions())
		case t.withFillfactor && s.kind == "postgres":
			fmt.Fprintf(&b, " with (fillfactor=%d)", s.fillfactor)
		}
		if s.tablespace != "" {
			b.WriteString(" tablespace " + pgx.Identifier{s.tablespace}.Sanitize())
		}
		out = append(out, b.String())
		if accounts && s.partitions > 0 && s.kind == "postgres" {
			out = append(out, s.pgPartitions()...)
		}
	}
	return out
}

// accountCount is the number of accounts at the scale.
func (s *schema) accountCount() int64 { return accountsPerScale * s.scale }

// partSize is pgbench's range partition size, rounded up.
func (s *schema) partSize() int64 {
	return (s.accountCount() + int64(s.partitions) - 1) / int64(s.partitions)
}

// pgPartitions is pgbench's createPartitions: open-ended first and last
// range partitions, or hash partitions by modulus and remainder.
func (s *schema) pgPartitions() []string {
	var out []string
	unlogged := ""
	if s.unlogged {
		unlogged = " unlogged"
	}
	for p := 1; p <= s.partitions; p++ {
		var b strings.Builder
		fmt.Fprintf(&b, "create%s table pgbench_accounts_%d\n  partition of pgbench_accounts\n  for values ", unlogged, p)
		if s.method == "range" {
			b.WriteString("from (")
			if p == 1 {
				b.WriteString("minvalue")
			} else {
				b.WriteString(strconv.FormatInt(int64(p-1)*s.partSize()+1, 10))
			}
			b.WriteString(") to (")
			if p < s.partitions {
				b.WriteString(strconv.FormatInt(int64(p)*s.partSize()+1, 10))
			} else {
				b.WriteString("maxvalue")
			}
			b.WriteString(")")
		} else {
			fmt.Fprintf(&b, "with (modulus %d, remainder %d)", s.partitions, p-1)
		}
		fmt.Fprintf(&b, " with (fillfactor=%d)", s.fillfactor)
		out = append(out, b.String())
	}
	return out
}

// mysqlPartitions declares the same partitions in MariaDB's syntax, which
// names them with the table: pgbench_accounts_1 and so on are partitions
// p1, p2, ... of pgbench_accounts. MariaDB's HASH is the key modulo N, not
// PostgreSQL's hash, so rows spread differently.
func (s *schema) mysqlPartitions() string {
	if s.method == "hash" {
		return fmt.Sprintf(" partition by hash (aid) partitions %d", s.partitions)
	}
	var b strings.Builder
	b.WriteString(" partition by range (aid) (")
	for p := 1; p <= s.partitions; p++ {
		if p > 1 {
			b.WriteString(", ")
		}
		if p < s.partitions {
			fmt.Fprintf(&b, "partition p%d values less than (%d)", p, int64(p)*s.partSize()+1)
		} else {
			fmt.Fprintf(&b, "partition p%d values less than maxvalue", p)
		}
	}
	b.WriteString(")")
	return b.String()
}

// dropTables is pgbench's initDropTables.
func (s *schema) dropTables() []string {
	if s.kind == "sqlite" {
		// One table per statement; children first, for foreign keys.
		return []string{
			"drop table if exists pgbench_history", "drop table if exists pgbench_accounts",
			"drop table if exists pgbench_tellers", "drop table if exists pgbench_branches",
		}
	}
	drop := "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers"
	if s.kind == "mysql" {
		// InnoDB checks foreign keys table by table even within one DROP.
		return []string{"set foreign_key_checks = 0", drop, "set foreign_key_checks = 1"}
	}
	return []string{drop}
}

// truncateTables empties the tables before data generation.
func (s *schema) truncateTables() []string {
	switch s.kind {
	case "postgres":
		return []string{"truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers"}
	case "mysql":
		return []string{"truncate table pgbench_history", "truncate table pgbench_accounts",
			"truncate table pgbench_tellers", "truncate table pgbench_branches"}
	}
	return []string{"delete from pgbench_history", "delete from pgbench_accounts",
		"delete from pgbench_tellers", "delete from pgbench_branches"}
}

// vacuum is pgbench's initVacuum; the other engines refresh their
// statistics, which is the part of it they have.
func (s *schema) vacuum() []string {
	var out []string
	for _, t := range []string{"pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"} {
		switch s.kind {
		case "postgres":
			out = append(out, "vacuum analyze "+t)
		case "mysql":
			out = append(out, "analyze table "+t)
		default:
			out = append(out, "analyze "+t)
		}
	}
	return out
}

// primaryKeyDDL is pgbench's initCreatePKeys. SQLite cannot add a primary
// key to a table, so it gets the unique index PostgreSQL builds for one,
// under the same name.
func (s *schema) primaryKeyDDL() []string {
	var out []string
	for _, pk := range primaryKeys {
		if s.kind == "sqlite" {
			out = append(out, fmt.Sprintf("create unique index %s_pkey on %s (%s)", pk.table, pk.table, pk.col))
			continue
		}
		ddl := fmt.Sprintf("alter table %s add primary key (%s)", pk.table, pk.col)
		if s.indexTablespace != "" {
			ddl += " using index tablespace " + pgx.Identifier{s.indexTablespace}.Sanitize()
		}
		out = append(out, ddl)
	}
	return out
}

// foreignKeyDDL is pgbench's initCreateFKeys. MariaDB wants the referenced
// column named.
func (s *schema) foreignKeyDDL() []string {
	var out []string
	for _, fk := range foreignKeys {
		ref := fk.ref
		if s.kind == "mysql" {
			ref += " (" + fk.refCol + ")"
		}
		out = append(out, fmt.Sprintf("alter table %s add constraint %s foreign key (%s) references %s", fk.table, fk.name, fk.col, ref))
	}
	return out
}

// serverSide is pgbench's initGenerateDataServerSide: generate_series on
// PostgreSQL, a recursive common table expression elsewhere.
func (s *schema) serverSide() []string {
	div := "/"
	if s.kind == "mysql" {
		div = "div"
	}
	series := func(col string, n int64) (with, from string) {
		if s.kind == "postgres" {
			return "", fmt.Sprintf("generate_series(1, %d) as %s", n, col)
		}
		return fmt.Sprintf("with recursive s(%s) as (select 1 union all select %s + 1 from s where %s < %d) ", col, col, col, n), "s"
	}
	w1, f1 := series("bid", branchesPerScale*s.scale)
	w2, f2 := series("tid", tellersPerScale*s.scale)
	w3, f3 := series("aid", s.accountCount())
	var pre []string
	if s.kind == "mysql" {
		// MariaDB stops a recursive CTE after 1000 rounds by default.
		pre = []string{fmt.Sprintf("set session max_recursive_iterations = %d", s.accountCount()+1)}
	}
	return append(pre,
		fmt.Sprintf("insert into pgbench_branches(bid,bbalance) %sselect bid, 0 from %s", w1, f1),
		fmt.Sprintf("insert into pgbench_tellers(tid,bid,tbalance) %sselect tid, (tid - 1) %s %d + 1, 0 from %s", w2, div, tellersPerScale, f2),
		fmt.Sprintf("insert into pgbench_accounts(aid,bid,abalance,filler) %sselect aid, (aid - 1) %s %d + 1, 0, '' from %s", w3, div, accountsPerScale, f3),
	)
}

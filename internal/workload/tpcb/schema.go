package tpcb

import (
	"fmt"
	"strings"

	"github.com/dbmark/dbmark/internal/target"
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

// schema renders the DDL in the engine's dialect.
type schema struct {
	d          target.Dialect
	scale      int64
	fillfactor int
	unlogged   bool
	partitions int
	method     string // "range" or "hash" when partitions > 0
	// Tablespaces for the tables and for the primary keys' indexes ("":
	// the database's default).
	tablespace, indexTablespace string
}

// layout is pgbench's: lower case, a partition's clauses on lines of
// their own.
var layout = target.Layout{Break: "\n  "}

func (s *schema) columns(t table) string {
	cols := t.small
	if s.scale >= bigIDScale {
		cols = t.big
	}
	return strings.Replace(cols, "mtime timestamp", "mtime "+s.d.Type(target.Timestamp), 1)
}

// createTables is pgbench's initCreateTables, in the engine's dialect.
func (s *schema) createTables() ([]string, error) {
	var out []string
	for _, t := range tables {
		spec := target.Table{Name: t.name, Unlogged: s.unlogged, Tablespace: s.tablespace, Layout: layout}
		if t.withFillfactor {
			spec.FillFactor = s.fillfactor
		}
		if t.name == "pgbench_accounts" && s.partitions > 0 {
			spec.Partitions = s.accountPartitions()
		}
		ddl, err := s.d.CreateTable(spec)
		if err != nil {
			return nil, fmt.Errorf("create table %s: %w", t.name, err)
		}
		out = append(out, fmt.Sprintf("%s %s(%s)%s", ddl.Head, t.name, s.columns(t), ddl.Tail))
		out = append(out, ddl.After...)
	}
	return out, nil
}

// accountCount is the number of accounts at the scale.
func (s *schema) accountCount() int64 { return accountsPerScale * s.scale }

// partSize is pgbench's range partition size, rounded up.
func (s *schema) partSize() int64 {
	return (s.accountCount() + int64(s.partitions) - 1) / int64(s.partitions)
}

// accountPartitions is pgbench's createPartitions: open-ended first and
// last range partitions of partSize accounts, or hash partitions.
// Partitions that are tables are pgbench_accounts_1 and so on; those
// named within the table are p1, p2, ...
func (s *schema) accountPartitions() *target.Partitioning {
	p := &target.Partitioning{Hash: s.method == "hash", Column: "aid", Count: s.partitions,
		Name: func(i int, table bool) string {
			if table {
				return fmt.Sprintf("pgbench_accounts_%d", i+1)
			}
			return fmt.Sprintf("p%d", i+1)
		}}
	for i := 1; i < s.partitions; i++ {
		p.Bounds = append(p.Bounds, int64(i)*s.partSize()+1)
	}
	return p
}

// childrenFirst are the tables, each before those it references.
var childrenFirst = []string{"pgbench_history", "pgbench_accounts", "pgbench_tellers", "pgbench_branches"}

// dropTables is pgbench's initDropTables.
func (s *schema) dropTables() []string { return s.d.DropTables(childrenFirst...) }

// truncateTables empties the tables before data generation.
func (s *schema) truncateTables() []string { return s.d.Truncate(childrenFirst...) }

// vacuum is pgbench's initVacuum; the other engines refresh their
// statistics, which is the part of it they have.
func (s *schema) vacuum() []string {
	var out []string
	for _, t := range []string{"pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"} {
		out = append(out, s.d.Maintain(t, target.Vacuum|target.Analyze)...)
	}
	return out
}

// primaryKeyDDL is pgbench's initCreatePKeys.
func (s *schema) primaryKeyDDL() ([]string, error) {
	var out []string
	for _, pk := range primaryKeys {
		ddl, err := s.d.AddPrimaryKey(pk.table, pk.col, s.indexTablespace)
		if err != nil {
			return nil, fmt.Errorf("primary key of %s: %w", pk.table, err)
		}
		out = append(out, ddl)
	}
	return out, nil
}

// foreignKeyDDL is pgbench's initCreateFKeys.
func (s *schema) foreignKeyDDL() ([]string, error) {
	var out []string
	for _, fk := range foreignKeys {
		ddl, err := s.d.AddForeignKey(target.ForeignKey{Table: fk.table, Name: fk.name, Column: fk.col, Ref: fk.ref, RefColumn: fk.refCol})
		if err != nil {
			return nil, fmt.Errorf("foreign key %s: %w", fk.name, err)
		}
		out = append(out, ddl)
	}
	return out, nil
}

// serverSide is pgbench's initGenerateDataServerSide, with the engine's
// series of integers.
func (s *schema) serverSide() []string {
	div := s.d.IntDiv()
	b := s.d.Series("bid", branchesPerScale*s.scale)
	t := s.d.Series("tid", tellersPerScale*s.scale)
	a := s.d.Series("aid", s.accountCount())
	return append(a.Setup, // the largest series' setup serves all three
		fmt.Sprintf("insert into pgbench_branches(bid,bbalance) %sselect bid, 0 from %s", b.With, b.From),
		fmt.Sprintf("insert into pgbench_tellers(tid,bid,tbalance) %sselect tid, (tid - 1) %s %d + 1, 0 from %s", t.With, div, tellersPerScale, t.From),
		fmt.Sprintf("insert into pgbench_accounts(aid,bid,abalance,filler) %sselect aid, (aid - 1) %s %d + 1, 0, '' from %s", a.With, div, accountsPerScale, a.From),
	)
}

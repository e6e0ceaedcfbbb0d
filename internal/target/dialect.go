package target

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Dialect is an engine's SQL vocabulary: everything a workload writes
// differently from one engine to another is asked of it, so that no code
// outside the engine packages compares engine names. Statements it
// renders are complete; a feature the engine lacks is an
// *UnsupportedError naming the engine and the feature. Every engine
// implements every method.
type Dialect interface {
	// Name is the engine's name in messages: "PostgreSQL", "MariaDB and
	// MySQL", "SQLite".
	Name() string
	// Embedded says the engine runs inside this process on a file named by
	// the URL, with no server.
	Embedded() bool
	// Supports returns nil when the engine has the feature, and an
	// *UnsupportedError otherwise.
	Supports(f Feature) error

	// Placeholder is the n-th (1-based) parameter marker: "$1" or "?".
	Placeholder(n int) string
	// Begin is the statement that starts a transaction; write says whether
	// it will write (SQLite takes the write lock up front then, instead of
	// failing on the upgrade).
	Begin(write bool) string
	// ScriptStatement is a statement of a script (pgbench's) as the engine
	// prepares it: the text as written where the engine takes it so, with
	// a transaction's start and end in the engine's own words and no
	// trailing semicolon elsewhere.
	ScriptStatement(text string, txn Txn) string
	// DefaultIgnoredErrors are the error codes (as Classify reports them)
	// that sysbench's driver for the engine ignores unless told otherwise.
	DefaultIgnoredErrors() []string

	// Type is the engine's (lower-case) spelling of a column type.
	Type(t Type) string
	// AutoIncrementPK is the column definition of an auto-incrementing
	// integer primary key named col.
	AutoIncrementPK(col string) string
	// IntPK is the column definition of a plain integer primary key.
	IntPK(col string) string
	// AutoIncrement is the type of an integer column whose values the
	// engine assigns (64 bits with big; never reusing a deleted row's
	// value with monotonic). keyed says the type already makes the column
	// the primary key, so the table must not declare one.
	AutoIncrement(big, monotonic bool) (def string, keyed bool)
	// NextID is the value an INSERT gives an auto-increment column to have
	// the engine assign it, or "" when the column must be left out.
	NextID() string
	// InlineIndex is a non-unique index declared inside CREATE TABLE, or
	// "" when the engine creates its indexes with CREATE INDEX only.
	InlineIndex(name string, cols ...string) string
	// CreateTable renders the engine's parts of a CREATE TABLE.
	CreateTable(t Table) (TableDDL, error)
	// AddPrimaryKey makes col the primary key of a table created without
	// one, its index in tablespace when that is not "".
	AddPrimaryKey(table, col, tablespace string) (string, error)
	// AddForeignKey adds a foreign key to a table.
	AddForeignKey(fk ForeignKey) (string, error)
	// DropTables drops those of the tables that exist. tables lists
	// children (referencing tables) before their parents, the order of
	// engines that drop one table at a time.
	DropTables(tables ...string) []string
	// Truncate empties the tables, listed as for DropTables.
	Truncate(tables ...string) []string

	// Reload is what surrounds emptying tables and loading them again in
	// bulk: one transaction where the engine can truncate and load in one,
	// foreign-key checks off where truncating a referenced table is refused.
	Reload() Bracket
	// Series generates the integers 1..n as column col of a query's FROM.
	Series(col string, n int64) Series
	// IntDiv is the operator of integer division.
	IntDiv() string
	// Explain is the statement that shows the plan the engine would run
	// query by, without running it: its rows, as text, are the plan.
	Explain(query string) string
	// Maintain is the statements of maintenance m on a table; those of
	// it the engine does not have (or does by itself) are left out.
	Maintain(table string, m Maintenance) []string

	// IndexHint makes a SELECT use the named index, placed after its
	// table name; "" where the planner takes no hint.
	IndexHint(index string) string
	// DeleteOne is a DELETE of one row of table, any one, among those
	// where cond holds: what deletes one of several identical rows of a
	// table without a key.
	DeleteOne(table, cond string) string
	// TableExists is a query that returns a row when the table exists.
	TableExists(table string) string
	// TableBytes reads the size of a table's data and of its indexes
	// (partitions included), -1 for what the engine cannot say.
	TableBytes(ctx context.Context, c Conn, table string) (data, index int64, err error)
}

// Feature is something an engine may lack, named as a message says it.
type Feature string

// The features workloads ask about.
const (
	Unlogged                Feature = "unlogged tables"
	FillFactor              Feature = "per-table fill factor"
	Tablespaces             Feature = "tablespaces"
	Partitions              Feature = "partitioned tables"
	ForeignKeysOnPartitions Feature = "foreign keys on partitioned tables"
	AddedForeignKeys        Feature = "foreign keys added to existing tables"
)

// UnsupportedError says an engine lacks a feature; Why, when set, is the
// engine's hint (where the setting lives instead, or why).
type UnsupportedError struct {
	Engine  string
	Feature Feature
	Why     string
}

func (e *UnsupportedError) Error() string {
	verb := "has"
	if strings.Contains(e.Engine, " and ") { // "MariaDB and MySQL"
		verb = "have"
	}
	msg := e.Engine + " " + verb + " no " + string(e.Feature)
	if e.Why != "" {
		msg += " (" + e.Why + ")"
	}
	return msg
}

// Txn marks a script statement that starts or ends a transaction.
type Txn uint8

const (
	NoTxn    Txn = iota
	TxnBegin     // BEGIN as the script writes it
	TxnEnd       // END or COMMIT as the script writes it
)

// Type is a column type whose spelling differs between engines.
type Type uint8

const (
	// Timestamp is a date and time to the microsecond.
	Timestamp Type = iota
	// DateTime is a date and time as the engine's DATETIME-like type
	// keeps it (whole seconds where it has such a type).
	DateTime
	// Float32 is a single-precision floating-point number.
	Float32
)

// Table is what a workload asks of an engine's CREATE TABLE beyond its
// name and columns, which it writes itself.
type Table struct {
	Name     string
	Unlogged bool
	// FillFactor is the percentage of a page filled on insert; 0 leaves
	// it out. An engine without the setting takes 100, what it does anyway.
	FillFactor int
	// StorageEngine is the table's storage engine where the engine has
	// several (MySQL's ENGINE); the others ignore it.
	StorageEngine string
	// Tablespace is where the table is stored ("": the default).
	Tablespace string
	// Partitions, when set, splits the table.
	Partitions *Partitioning
	Layout     Layout
}

// Partitioning splits a table by one integer column.
type Partitioning struct {
	Hash   bool // by hash; by range otherwise
	Column string
	Count  int
	// Bounds are the exclusive upper bounds of the range partitions but
	// the last, which is unbounded; the first is unbounded below.
	Bounds []int64
	// Name is partition i's (0-based) name; table says the engine makes
	// each partition a table of its own, whose name must be unique.
	Name func(i int, table bool) string
}

// Layout is how a workload writes its SQL, so that what an engine renders
// for it reads as the workload's own statements (and as those of the tool
// whose statements the workload repeats). It never changes their meaning.
type Layout struct {
	Upper    bool   // keywords in upper case
	Break    string // between the clauses of a partition's own statement; "" is a space
	Assign   string // between an option's name and its value; "" is "="
	ParenMax bool   // an open upper bound in parentheses, as the others are
}

// KW is the keywords kw (written in lower case) in the layout's case.
func (l Layout) KW(kw string) string {
	if l.Upper {
		return strings.ToUpper(kw)
	}
	return kw
}

// Sep is the layout's separator between a statement's clauses.
func (l Layout) Sep() string {
	if l.Break == "" {
		return " "
	}
	return l.Break
}

// Eq is the layout's assignment of an option.
func (l Layout) Eq() string {
	if l.Assign == "" {
		return "="
	}
	return l.Assign
}

// TableDDL is an engine's parts of a CREATE TABLE: the workload writes
// Head, a space, the table's name and its parenthesised columns, then
// Tail; After are statements to run next, in order (a partition that is
// a table of its own).
type TableDDL struct {
	Head, Tail string
	After      []string
}

// ForeignKey is a named constraint: Column references Ref's RefColumn.
type ForeignKey struct {
	Table, Name, Column, Ref, RefColumn string
}

// Bracket is statements run before and after a piece of work, and Abort
// instead of After when the work fails.
type Bracket struct {
	Before, After, Abort []string
}

// Series is a generated integer sequence: Setup runs first, With is a
// common table expression that precedes the SELECT ("" if none) and From
// is what it selects from.
type Series struct {
	Setup      []string
	With, From string
}

// Maintenance is a set of table maintenance operations.
type Maintenance uint8

const (
	// Vacuum reclaims dead rows' space where the engine leaves that to
	// the user.
	Vacuum Maintenance = 1 << iota
	// Analyze refreshes the planner's statistics.
	Analyze
)

// QueryInt runs a one-value query; no row or NULL is 0. A decimal value
// ("123.0", as some engines return sums) is truncated.
func QueryInt(ctx context.Context, c Conn, sql string) (int64, error) {
	v, ok, err := c.QueryRow(ctx, sql)
	if err != nil || !ok || v == "" {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil {
			return 0, fmt.Errorf("%q is not a number: %w", v, err)
		}
		n = int64(f)
	}
	return n, nil
}

// TrimStatement removes a trailing semicolon and the blanks around it,
// for engines whose prepare takes one statement without it.
func TrimStatement(text string) string {
	return strings.TrimRight(strings.TrimSuffix(strings.TrimRight(text, " \t\r\n"), ";"), " \t\r\n")
}

// ScriptTxn is ScriptStatement for engines that prepare a script's
// statements without their semicolon and spell a transaction's start
// with d.Begin.
func ScriptTxn(d Dialect, text string, txn Txn) string {
	switch txn {
	case TxnBegin:
		return d.Begin(true)
	case TxnEnd:
		return "COMMIT"
	}
	return TrimStatement(text)
}

// RangeBound is partition i's range in p: its lower bound ("" when
// unbounded) and upper bound ("" when unbounded).
func (p *Partitioning) RangeBound(i int) (lo, hi string) {
	if i > 0 {
		lo = strconv.FormatInt(p.Bounds[i-1], 10)
	}
	if i < p.Count-1 {
		hi = strconv.FormatInt(p.Bounds[i], 10)
	}
	return lo, hi
}

// PathIsFile says whether a URL of this scheme names a file by its path
// (an embedded engine's database, or a file: URL) rather than a database
// on a server. The sqlite engine's tests keep it in step with the
// schemes that engine registers.
func PathIsFile(scheme string) bool {
	switch strings.ToLower(scheme) {
	case "sqlite", "sqlite3", "file":
		return true
	}
	return false
}

// ProtocolTarget is a Target whose connections are ProtocolConns: the
// engine has several protocols (pgbench's -M) and Protocol is the one in use.
type ProtocolTarget interface {
	Target
	Protocol() string
}

// TableBytes runs an engine's two size queries for TableBytes: the data's
// size, then the indexes'; -1 for a size not read.
func TableBytes(ctx context.Context, c Conn, table, dataQuery, indexQuery string) (data, index int64, err error) {
	if data, err = QueryInt(ctx, c, dataQuery); err != nil {
		return -1, -1, fmt.Errorf("read the size of %s: %w", table, err)
	}
	if index, err = QueryInt(ctx, c, indexQuery); err != nil {
		return data, -1, fmt.Errorf("read the index size of %s: %w", table, err)
	}
	return data, index, nil
}

// RecursiveSeries is a Series written as a recursive common table
// expression, for engines without a series function.
func RecursiveSeries(col string, n int64) Series {
	return Series{With: fmt.Sprintf("with recursive s(%s) as (select 1 union all select %s + 1 from s where %s < %d) ", col, col, col, n), From: "s"}
}

// LibpqScheme says whether a URL of this scheme is read by libpq's rules
// (a socket directory or port as query parameters), as pgbench's
// connection options fill one in.
func LibpqScheme(scheme string) bool {
	return scheme == "postgres" || scheme == "postgresql"
}

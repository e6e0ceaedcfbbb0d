package iibench

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbmark/dbmark/internal/target"
)

// index is one secondary index and the range scan that uses it.
type index struct {
	name string   // without the table prefix: marketsegment, registersegment, pdc
	cols []string // the index's columns; the query selects and orders by them
	op   string   // the predicate on the first column: >= or >
}

// indexes are the secondary indexes of a style, in the order
// --secondary-indexes takes them.
func indexes(style string) []index {
	if style == StyleNew {
		return []index{
			{"marketsegment", []string{"productid", "customerid", "price"}, ">="},
			{"registersegment", []string{"cashregisterid", "customerid", "price"}, ">"},
			{"pdc", []string{"price", "dateandtime", "customerid"}, ">="},
		}
	}
	return []index{
		{"marketsegment", []string{"price", "customerid"}, ">="},
		{"registersegment", []string{"cashregisterid", "price", "customerid"}, ">"},
		{"pdc", []string{"price", "dateandtime", "customerid"}, ">="},
	}
}

// indexName is the index's name in the database: prefixed with the table,
// since PostgreSQL's index names are per schema, not per table.
func (o *Options) indexName(ix index) string { return o.Table + "_" + ix.name }

// createTable is the CREATE TABLE statement (and, on PostgreSQL, the
// partitions) for the engine kind.
func (o *Options) createTable(kind string, maxRows int64) []string {
	price := "FLOAT NOT NULL"
	if o.IndexStyle == StyleNew {
		price = "INT NOT NULL"
	}
	cols := func(pk, ts, priceType string) string {
		return fmt.Sprintf("%s, dateandtime %s, cashregisterid INT NOT NULL, customerid INT NOT NULL, "+
			"productid INT NOT NULL, price %s, data VARCHAR(4000)", pk, ts, priceType)
	}
	per := int64(o.RowsPerPartition)
	if per == 0 && o.Partitions > 0 {
		per = max(1, maxRows/int64(o.Partitions))
	}
	switch kind {
	case "mysql":
		sql := "CREATE TABLE " + o.Table + " (" + cols("transactionid BIGINT NOT NULL AUTO_INCREMENT", "DATETIME", price) +
			", PRIMARY KEY (transactionid)) ENGINE=" + o.MySQLEngine
		if o.Partitions > 0 {
			parts := make([]string, o.Partitions)
			for i := range parts {
				bound := "MAXVALUE"
				if i < o.Partitions-1 {
					bound = strconv.FormatInt(int64(i+1)*per, 10)
				}
				parts[i] = fmt.Sprintf("PARTITION p%d VALUES LESS THAN (%s)", i, bound)
			}
			sql += " PARTITION BY RANGE (transactionid) (" + strings.Join(parts, ", ") + ")"
		}
		return []string{sql}
	case "postgres":
		if o.IndexStyle != StyleNew {
			price = "REAL NOT NULL"
		}
		sql := "CREATE TABLE " + o.Table + " (" + cols("transactionid BIGSERIAL", "TIMESTAMP", price) + ", PRIMARY KEY (transactionid))"
		if o.Partitions == 0 {
			return []string{sql}
		}
		out := []string{sql + " PARTITION BY RANGE (transactionid)"}
		for i := 0; i < o.Partitions; i++ {
			hi := "MAXVALUE"
			if i < o.Partitions-1 {
				hi = strconv.FormatInt(int64(i+1)*per, 10)
			}
			lo := "MINVALUE"
			if i > 0 {
				lo = strconv.FormatInt(int64(i)*per, 10)
			}
			out = append(out, fmt.Sprintf("CREATE TABLE %s_p%d PARTITION OF %s FOR VALUES FROM (%s) TO (%s)", o.Table, i, o.Table, lo, hi))
		}
		return out
	default: // sqlite: AUTOINCREMENT keeps ids increasing after deletes, as the others do
		if o.IndexStyle != StyleNew {
			price = "REAL NOT NULL"
		}
		return []string{"CREATE TABLE " + o.Table + " (" + cols("transactionid INTEGER PRIMARY KEY AUTOINCREMENT", "DATETIME", price) + ")"}
	}
}

// createIndex is the statement that builds one secondary index.
func (o *Options) createIndex(ix index) string {
	return "CREATE INDEX " + o.indexName(ix) + " ON " + o.Table + " (" + strings.Join(ix.cols, ", ") + ")"
}

// tableExists reports whether the table is there.
func tableExists(ctx context.Context, c target.Conn, kind, table string) (bool, error) {
	var sql string
	switch kind {
	case "mysql":
		sql = "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" + table + "'"
	case "postgres":
		sql = "SELECT 1 FROM pg_class WHERE relname = '" + strings.ToLower(table) + "' AND relkind IN ('r', 'p') AND pg_table_is_visible(oid)"
	default:
		sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '" + table + "'"
	}
	_, ok, err := c.QueryRow(ctx, sql)
	if err != nil {
		return false, fmt.Errorf("look for table %s: %w", table, err)
	}
	return ok, nil
}

// queryInt runs a one-value query; no row or NULL is 0.
func queryInt(ctx context.Context, c target.Conn, sql string) (int64, error) {
	v, ok, err := c.QueryRow(ctx, sql)
	if err != nil || !ok || v == "" {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		// Some engines hand back sums as decimals ("123.0").
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil {
			return 0, fmt.Errorf("%q is not a number: %w", v, err)
		}
		n = int64(f)
	}
	return n, nil
}

// sizeQueries are the statements that read the table's data and index
// size as the engine reports them. On SQLite, dbstat reads every page, so
// the caller spaces its calls out.
func sizeQueries(kind, table string) (data, idx string) {
	switch kind {
	case "mysql":
		w := " FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" + table + "'"
		return "SELECT DATA_LENGTH" + w, "SELECT INDEX_LENGTH" + w
	case "postgres":
		// pg_partition_tree lists a partitioned table's partitions (and
		// nothing for a plain table); the table itself is added, its own
		// size being 0 when it is partitioned.
		rels := "(SELECT '" + strings.ToLower(table) + "'::regclass AS relid UNION SELECT relid FROM pg_partition_tree('" +
			strings.ToLower(table) + "')) AS r"
		return "SELECT COALESCE(SUM(pg_table_size(relid)), 0) FROM " + rels,
			"SELECT COALESCE(SUM(pg_indexes_size(relid)), 0) FROM " + rels
	default:
		return "SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name = '" + table + "'",
			"SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '" + table + "')"
	}
}

// sizes reads the table's data and index bytes; -1 for what the engine
// cannot say. SQLite built without the dbstat table (the sqlite_dbstat
// build tag) can say only how much of the file is in use: that is the
// table's size, indexes included, when the file holds nothing else, and
// unknown when it does.
func sizes(ctx context.Context, c target.Conn, kind, table string) (data, idx int64, err error) {
	dq, iq := sizeQueries(kind, table)
	if data, err = queryInt(ctx, c, dq); err != nil {
		if kind != "sqlite" {
			return -1, -1, fmt.Errorf("read the size of %s: %w", table, err)
		}
		return sqliteFileSize(ctx, c, table)
	}
	if idx, err = queryInt(ctx, c, iq); err != nil {
		return data, -1, fmt.Errorf("read the index size of %s: %w", table, err)
	}
	return data, idx, nil
}

// sqliteFileSize is the file's pages in use when table and its indexes
// are all the file holds; -1 otherwise.
func sqliteFileSize(ctx context.Context, c target.Conn, table string) (data, idx int64, err error) {
	others, err := queryInt(ctx, c, "SELECT COUNT(*) FROM sqlite_master WHERE tbl_name <> '"+table+"' AND name NOT LIKE 'sqlite_%'")
	if err != nil {
		return -1, -1, fmt.Errorf("read the size of %s: %w", table, err)
	}
	if others > 0 {
		return -1, -1, nil
	}
	var n [3]int64
	for i, q := range []string{"PRAGMA page_count", "PRAGMA freelist_count", "PRAGMA page_size"} {
		if n[i], err = queryInt(ctx, c, q); err != nil {
			return -1, -1, fmt.Errorf("read the size of %s: %w", table, err)
		}
	}
	return (n[0] - n[1]) * n[2], -1, nil
}

package iibench

import (
	"context"
	"fmt"
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

// layout is iibench's: upper case, a partition's statement on one line,
// bounds in parentheses.
var layout = target.Layout{Upper: true, ParenMax: true}

// createTable is the CREATE TABLE statement, and the partitions' own
// statements where they are tables, in the engine's dialect.
func (o *Options) createTable(d target.Dialect, maxRows int64) ([]string, error) {
	price := "INT NOT NULL"
	if o.IndexStyle != StyleNew {
		price = strings.ToUpper(d.Type(target.Float32)) + " NOT NULL"
	}
	id, keyed := d.AutoIncrement(true, true)
	cols := fmt.Sprintf("transactionid %s, dateandtime %s, cashregisterid INT NOT NULL, customerid INT NOT NULL, "+
		"productid INT NOT NULL, price %s, data VARCHAR(4000)", id, strings.ToUpper(d.Type(target.DateTime)), price)
	if !keyed {
		cols += ", PRIMARY KEY (transactionid)"
	}
	t := target.Table{Name: o.Table, StorageEngine: o.MySQLEngine, Layout: layout}
	if o.Partitions > 0 {
		per := int64(o.RowsPerPartition)
		if per == 0 {
			per = max(1, maxRows/int64(o.Partitions))
		}
		t.Partitions = &target.Partitioning{Column: "transactionid", Count: o.Partitions,
			Name: func(i int, table bool) string {
				if table {
					return fmt.Sprintf("%s_p%d", o.Table, i)
				}
				return fmt.Sprintf("p%d", i)
			}}
		for i := 1; i < o.Partitions; i++ {
			t.Partitions.Bounds = append(t.Partitions.Bounds, int64(i)*per)
		}
	}
	ddl, err := d.CreateTable(t)
	if err != nil {
		return nil, err
	}
	return append([]string{ddl.Head + " " + o.Table + " (" + cols + ")" + ddl.Tail}, ddl.After...), nil
}

// createIndex is the statement that builds one secondary index.
func (o *Options) createIndex(ix index) string {
	return "CREATE INDEX " + o.indexName(ix) + " ON " + o.Table + " (" + strings.Join(ix.cols, ", ") + ")"
}

// tableExists reports whether the table is there.
func tableExists(ctx context.Context, c target.Conn, d target.Dialect, table string) (bool, error) {
	_, ok, err := c.QueryRow(ctx, d.TableExists(table))
	if err != nil {
		return false, fmt.Errorf("look for table %s: %w", table, err)
	}
	return ok, nil
}

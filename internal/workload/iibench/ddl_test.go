package iibench

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/enginetest"
)

var update = flag.Bool("update", false, "rewrite the golden files of the statements each engine receives")

// queryRecorder is a connection that records the queries it is given and
// finds no rows.
type queryRecorder struct {
	target.Conn
	sql []string
}

func (r *queryRecorder) QueryRow(_ context.Context, sql string) (string, bool, error) {
	r.sql = append(r.sql, sql+";\n")
	return "", false, nil
}

// TestStatementsPerEngine pins the text of the table, index and size
// statements iibench sends each engine, for both index styles, with and
// without partitions.
func TestStatementsPerEngine(t *testing.T) {
	enginetest.EachGolden(t, *update, func(t *testing.T, tg target.Target) string {
		var b strings.Builder
		for _, c := range []struct {
			name    string
			o       Options
			maxRows int64
		}{
			{"classic", Options{Table: "purchases_index", IndexStyle: StyleClassic, MySQLEngine: "InnoDB"}, 0},
			{"new", Options{Table: "purchases_index", IndexStyle: StyleNew, MySQLEngine: "MyRocks"}, 0},
			{"partitions-max-rows", Options{Table: "pi", IndexStyle: StyleClassic, MySQLEngine: "InnoDB", Partitions: 3}, 1000},
			{"partitions-per", Options{Table: "pi", IndexStyle: StyleNew, MySQLEngine: "InnoDB", Partitions: 2, RowsPerPartition: 500}, 0},
		} {
			o := c.o
			fmt.Fprintf(&b, "## %s\n", c.name)
			stmts, err := o.createTable(tg.Dialect(), c.maxRows)
			if err != nil {
				b.WriteString("invalid\n")
				continue
			}
			for _, s := range stmts {
				fmt.Fprintf(&b, "%s;\n", s)
			}
			for _, ix := range indexes(o.IndexStyle) {
				fmt.Fprintf(&b, "%s;\n", o.createIndex(ix))
			}
			rc := &queryRecorder{}
			if _, err := tableExists(context.Background(), rc, tg.Dialect(), o.Table); err != nil {
				t.Fatal(err)
			}
			if _, _, err := tg.Dialect().TableBytes(context.Background(), rc, o.Table); err != nil {
				t.Fatal(err)
			}
			b.WriteString(strings.Join(rc.sql, ""))
		}
		return b.String()
	})
}

package tpcb

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/enginetest"
)

// sqlRecorder is a connection that records the SQL it is given.
type sqlRecorder struct {
	target.Conn
	sql []string
}

func (r *sqlRecorder) Exec(_ context.Context, sql string) error {
	r.sql = append(r.sql, sql+";\n")
	return nil
}

var update = flag.Bool("update", false, "rewrite the golden files of the statements each engine receives")

// ddlCases are representative init options: the default, 64-bit ids with
// a fill factor, unlogged tables and tablespaces, and both partition
// methods.
var ddlCases = []struct {
	name string
	o    Options
}{
	{"default", Options{Scale: 1, Fillfactor: 100}},
	{"big-fillfactor", Options{Scale: bigIDScale, Fillfactor: 90}},
	{"unlogged-tablespaces", Options{Scale: 2, Fillfactor: 100, Unlogged: true, Tablespace: "Fast", IndexTablespace: "idx"}},
	{"range", Options{Scale: 3, Fillfactor: 100, Partitions: 3, PartitionMethod: "range"}},
	{"range-fillfactor", Options{Scale: 3, Fillfactor: 80, Partitions: 2, PartitionMethod: "range"}},
	{"hash", Options{Scale: 1, Fillfactor: 100, Partitions: 4, PartitionMethod: "hash"}},
}

// TestStatementsPerEngine pins the text of every statement tpcb's
// initialization and pre-run vacuum send to each engine.
func TestStatementsPerEngine(t *testing.T) {
	enginetest.EachGolden(t, *update, func(t *testing.T, tg target.Target) string {
		var b strings.Builder
		for _, c := range ddlCases {
			fmt.Fprintf(&b, "## %s\n", c.name)
			o := c.o
			if errs := o.validateInit(tg.Dialect()); len(errs) > 0 {
				fmt.Fprintf(&b, "invalid (%d)\n", len(errs))
				continue
			}
			sc := o.schema(tg.Dialect())
			for _, part := range []struct {
				name  string
				stmts []string
			}{
				{"drop", sc.dropTables()}, {"create", must(t)(sc.createTables())}, {"truncate", sc.truncateTables()},
				{"server-side", sc.serverSide()}, {"vacuum", sc.vacuum()}, {"primary keys", must(t)(sc.primaryKeyDDL())},
				{"foreign keys", fks(sc)}, {"before run", vacuumBeforeRun(tg.Dialect(), false)},
				{"before run -v", vacuumBeforeRun(tg.Dialect(), true)},
			} {
				fmt.Fprintf(&b, "# %s\n", part.name)
				for _, s := range part.stmts {
					fmt.Fprintf(&b, "%s;\n", s)
				}
			}
			for _, fail := range []bool{false, true} {
				rc := &sqlRecorder{}
				_ = inTx(context.Background(), rc, sc, func() error {
					if fail {
						return errors.New("load failed")
					}
					return nil
				})
				fmt.Fprintf(&b, "# reload (failing %v)\n%s", fail, strings.Join(rc.sql, ""))
			}
		}
		return b.String()
	})
}

// must fails the test on an error and returns the statements.
func must(t *testing.T) func([]string, error) []string {
	return func(s []string, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// fks is the foreign keys' statements, or the error's text where the
// engine cannot add them.
func fks(sc *schema) []string {
	s, err := sc.foreignKeyDDL()
	if err != nil {
		return []string{"-- " + err.Error()}
	}
	return s
}

package wisconsin_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/enginetest"
	"github.com/dbmark/dbmark/internal/workload/wisconsin"
)

var update = flag.Bool("update", false, "rewrite the golden files of the statements each engine receives")

// TestStatementsPerEngine pins the CREATE TABLEs and the 32 queries each
// engine receives at the paper's scale.
func TestStatementsPerEngine(t *testing.T) {
	enginetest.EachGolden(t, *update, func(t *testing.T, tg target.Target) string {
		var b strings.Builder
		for _, keyed := range []bool{true, false} {
			sql, err := wisconsin.CreateTable(tg.Dialect(), "tenktup1", keyed)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "## create, clustered on unique2: %v\n%s;\n", keyed, sql)
		}
		qs, err := wisconsin.Suite(tg.Dialect(), wisconsin.Data{Scale: 10_000, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			fmt.Fprintf(&b, "## %s\n%s;\n", q.Label, q.SQL)
		}
		return b.String()
	})
}

package oltp

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/enginetest"
)

var update = flag.Bool("update", false, "rewrite the golden files of the statements each engine receives")

// TestStatementsPerEngine pins the CREATE TABLE each engine receives for
// sysbench's table options, and the errors ignored by default.
func TestStatementsPerEngine(t *testing.T) {
	enginetest.EachGolden(t, *update, func(t *testing.T, tg target.Target) string {
		var b strings.Builder
		for _, c := range []struct {
			name string
			w    string
			set  func(o *Options)
		}{
			{"default", "oltp_read_write", func(*Options) {}},
			{"no-auto-inc", "oltp_read_write", func(o *Options) { o.AutoInc = false }},
			{"secondary", "oltp_read_only", func(o *Options) { o.Secondary = true }},
			{"secondary-no-auto-inc", "oltp_read_only", func(o *Options) { o.Secondary, o.AutoInc = true, false }},
			{"engine-options", "oltp_insert", func(o *Options) { o.MySQLStorageEngine, o.CreateTableOptions = "MyISAM", "COMMENT 'x'" }},
			{"bulk", "bulk_insert", func(*Options) {}},
		} {
			w := New(c.w)
			c.set(&w.opt)
			sql, err := w.createSQL(tg.Dialect(), 3)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "## %s\n%s;\n", c.name, sql)
		}
		fmt.Fprintf(&b, "## ignored\n%q\n", New("oltp_insert").DefaultIgnoreErrors(tg.Dialect()))
		return b.String()
	})
}

package target_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/enginetest"
)

// TestUnsupportedNamesEngineAndFeature: what an engine lacks is an
// *UnsupportedError whose message names the engine and the feature, and
// CreateTable refuses the table options Supports refuses.
func TestUnsupportedNamesEngineAndFeature(t *testing.T) {
	tables := map[target.Feature]target.Table{
		target.Unlogged:    {Name: "t", Unlogged: true},
		target.FillFactor:  {Name: "t", FillFactor: 90},
		target.Tablespaces: {Name: "t", Tablespace: "fast"},
		target.Partitions: {Name: "t", Partitions: &target.Partitioning{Column: "id", Count: 2, Bounds: []int64{10},
			Name: func(int, bool) string { return "p" }}},
	}
	for _, tg := range enginetest.Offline(t) {
		d := tg.Dialect()
		for _, f := range []target.Feature{target.Unlogged, target.FillFactor, target.Tablespaces, target.Partitions,
			target.ForeignKeysOnPartitions, target.AddedForeignKeys} {
			err := d.Supports(f)
			if err != nil {
				var ue *target.UnsupportedError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), d.Name()) || !strings.Contains(err.Error(), string(f)) {
					t.Errorf("%s: Supports(%s) = %v: want an *UnsupportedError naming the engine and the feature", tg.Kind(), f, err)
				}
			}
			if spec, ok := tables[f]; ok {
				if _, cerr := d.CreateTable(spec); (cerr != nil) != (err != nil) {
					t.Errorf("%s: CreateTable with %s: error %v, but Supports says %v", tg.Kind(), f, cerr, err)
				}
			}
		}
	}
}

func TestUnsupportedErrorText(t *testing.T) {
	for _, c := range []struct {
		e    target.UnsupportedError
		want string
	}{
		{target.UnsupportedError{Engine: "SQLite", Feature: target.Partitions}, "SQLite has no partitioned tables"},
		{target.UnsupportedError{Engine: "MariaDB and MySQL", Feature: target.Unlogged, Why: "x"}, "MariaDB and MySQL have no unlogged tables (x)"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

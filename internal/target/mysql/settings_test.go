package mysql

import (
	"testing"

	"github.com/dbmark/dbmark/internal/target"
)

// SELECT @@GLOBAL shows a boolean as 1 or 0, SET takes ON and OFF.
func TestSettingsSame(t *testing.T) {
	c := &settingsConn{}
	for _, x := range []struct {
		want, got string
		same      bool
	}{
		{"2", "2", true}, {"2", "1", false}, {"ON", "1", true}, {"off", "0", true}, {"ON", "0", false},
		{"O_DIRECT", "o_direct", true}, {"134217728", "134217728", true}, {"1000000", "134217728", false},
	} {
		if got := c.Same(target.Setting{}, x.want, x.got); got != x.same {
			t.Errorf("%q read back as %q: Same %v, want %v", x.want, x.got, got, x.same)
		}
	}
	if sqlValue("2") != "2" || sqlValue("O_DIRECT") != "'O_DIRECT'" || sqlValue("it's") != "'it''s'" {
		t.Errorf("values written as %s %s %s", sqlValue("2"), sqlValue("O_DIRECT"), sqlValue("it's"))
	}
}

package sqlite

import (
	"testing"

	"github.com/dbmark/dbmark/internal/target"
)

// PRAGMA reads some values back as numbers that are set by name.
func TestSettingsSame(t *testing.T) {
	c := &settingsConn{}
	for _, x := range []struct {
		name, want, got string
		same            bool
	}{
		{"synchronous", "OFF", "0", true}, {"synchronous", "normal", "1", true}, {"synchronous", "FULL", "1", false},
		{"temp_store", "memory", "2", true}, {"cache_size", "-4000", "-4000", true}, {"cache_size", "-4000", "-2000", false},
		{"journal_mode", "WAL", "wal", true}, {"foreign_keys", "on", "1", true},
	} {
		if got := c.Same(target.Setting{Name: x.name}, x.want, x.got); got != x.same {
			t.Errorf("%s: %q read back as %q: Same %v, want %v", x.name, x.want, x.got, got, x.same)
		}
	}
}

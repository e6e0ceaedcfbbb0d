package postgres

import (
	"testing"

	"github.com/dbmark/dbmark/internal/target"
)

// A value read back is the value given whatever the spelling: units,
// PostgreSQL's base units, boolean words.
func TestSettingsSame(t *testing.T) {
	c := &settingsConn{}
	for _, x := range []struct {
		kind, unit, want, got string
		same                  bool
	}{
		{"integer", "kB", "64MB", "64MB", true},
		{"integer", "kB", "65536kB", "64MB", true},
		{"integer", "kB", "65536", "64MB", true},
		{"integer", "kB", "64MB", "4MB", false},
		{"integer", "8kB", "16384", "128MB", true},
		{"integer", "8kB", "1GB", "128MB", false},
		{"integer", "ms", "1min", "60s", true},
		{"integer", "s", "300", "5min", true},
		{"real", "", "0.9", "0.9", true},
		{"real", "", "0.5", "0.9", false},
		{"bool", "", "off", "off", true},
		{"bool", "", "false", "off", true},
		{"bool", "", "1", "on", true},
		{"bool", "", "on", "off", false},
		{"enum", "", "LOCAL", "local", true},
		{"enum", "", "remote_apply", "local", false},
	} {
		s := target.Setting{Kind: x.kind, Unit: x.unit}
		if got := c.Same(s, x.want, x.got); got != x.same {
			t.Errorf("%s %s: %q read back as %q: Same %v, want %v", x.kind, x.unit, x.want, x.got, got, x.same)
		}
	}
}

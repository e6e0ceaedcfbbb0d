package sqlite

import (
	"strings"

	"github.com/dbmark/dbmark/internal/target"
)

// Unsafe is SQLite's durability rule (target.DurabilityRule): settings as
// the PRAGMAs read them (synchronous as a number, 0 for OFF).
func Unsafe(settings map[string]string) []target.Unsafe {
	if v, ok := settings["synchronous"]; ok && (v == "0" || strings.EqualFold(v, "off")) {
		return []target.Unsafe{{Setting: "synchronous", Value: "OFF", Risk: "nothing is synced: a power loss can lose commits or corrupt the file"}}
	}
	return nil
}

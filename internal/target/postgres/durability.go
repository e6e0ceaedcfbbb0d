package postgres

import (
	"strings"

	"github.com/dbmark/dbmark/internal/target"
)

// Unsafe is PostgreSQL's durability rule (target.DurabilityRule): settings
// as pg_settings gives them.
func Unsafe(settings map[string]string) []target.Unsafe {
	var out []target.Unsafe
	off := func(name, risk string) {
		if v, ok := settings[name]; ok && strings.EqualFold(v, "off") {
			out = append(out, target.Unsafe{Setting: name, Value: v, Risk: risk})
		}
	}
	off("fsync", "nothing is flushed to disk: a crash can corrupt the database")
	off("full_page_writes", "a crash during a page write can corrupt it")
	// "local" and "remote_write" still flush the local WAL; only "off"
	// acknowledges a commit before it is on disk.
	off("synchronous_commit", "a commit is acknowledged before its WAL is on disk")
	return out
}

package mysql

import (
	"strings"

	"github.com/dbmark/dbmark/internal/target"
)

// Unsafe is MySQL's and MariaDB's durability rule (target.DurabilityRule):
// settings as SHOW GLOBAL VARIABLES gives them.
func Unsafe(settings map[string]string) []target.Unsafe {
	var out []target.Unsafe
	switch v := settings["innodb_flush_log_at_trx_commit"]; v {
	case "0":
		out = append(out, target.Unsafe{Setting: "innodb_flush_log_at_trx_commit", Value: v, Risk: "the redo log is written and flushed once a second, not at commit"})
	case "2":
		out = append(out, target.Unsafe{Setting: "innodb_flush_log_at_trx_commit", Value: v, Risk: "the redo log is flushed once a second, not at commit"})
	}
	// The binary log's sync matters only when there is a binary log: a
	// server without one (MariaDB's default) is not less durable for it.
	if v := settings["sync_binlog"]; v == "0" && strings.EqualFold(settings["log_bin"], "ON") {
		out = append(out, target.Unsafe{Setting: "sync_binlog", Value: v, Risk: "the binary log is left to the OS to flush"})
	}
	return out
}

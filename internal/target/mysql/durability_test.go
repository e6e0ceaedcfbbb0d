package mysql

import (
	"fmt"
	"testing"
)

// TestUnsafe: the binary log's sync counts only with a binary log (the
// test server runs without one, and log_bin needs a restart), and every
// flush mode but 1 is flagged.
func TestUnsafe(t *testing.T) {
	for _, c := range []struct {
		settings map[string]string
		want     string
	}{
		{map[string]string{"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "0", "log_bin": "OFF"}, "[]"},
		{map[string]string{"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "0", "log_bin": "ON"}, "[sync_binlog=0]"},
		{map[string]string{"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "1", "log_bin": "ON"}, "[]"},
		{map[string]string{"innodb_flush_log_at_trx_commit": "0", "sync_binlog": "0", "log_bin": "ON"}, "[innodb_flush_log_at_trx_commit=0 sync_binlog=0]"},
		{map[string]string{"innodb_flush_log_at_trx_commit": "2"}, "[innodb_flush_log_at_trx_commit=2]"},
	} {
		if got := fmt.Sprint(Unsafe(c.settings)); got != c.want {
			t.Errorf("%v: %s, want %s", c.settings, got, c.want)
		}
	}
}

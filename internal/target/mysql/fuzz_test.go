package mysql_test

import (
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/targettest"
)

func FuzzOpen(f *testing.F) {
	targettest.FuzzOpen(f, "mysql", []string{"root:pw@127.0.0.1:3306/sbtest?tls=false&timeout=3s", "u@localhost/db?socket=/run/mysqld/mysqld.sock",
		"u@h/a/b", "u:p@h/db?timeout=notaduration", "u@[::1]:3307/db?charset=utf8mb4&collation=utf8mb4_bin", "u@h/db?tls=skip-verify&readTimeout=1s",
		"u@h/db?maxAllowedPacket=-5", "u@h:port/db", ""},
		mysql.Open, target.Options{}, target.Options{PSMode: "auto"}, target.Options{PSMode: "disable"}, target.Options{PSMode: "bogus"})
}

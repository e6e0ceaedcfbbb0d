package postgres_test

import (
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/targettest"
)

func FuzzOpen(f *testing.F) {
	targettest.FuzzOpen(f, "postgres", []string{"dbmark:secret@127.0.0.1:5432/dbmark?sslmode=disable", "u@localhost/db?connect_timeout=3",
		"u:p%40ss@[::1]:5433/db", "/db?host=/run/postgresql", "u@h/db?password=hunter22", "u:p@h:99999/db", "u@h/db?sslmode=bogus",
		"u@h/db?connect_timeout=-1", "u@h1:1,h2:2/db?target_session_attrs=read-write", "%zz@h/db", ""},
		postgres.Open, target.Options{}, target.Options{PGMode: "simple"}, target.Options{PGMode: "extended"},
		target.Options{PGMode: "prepared"}, target.Options{PGMode: "bogus"})
}

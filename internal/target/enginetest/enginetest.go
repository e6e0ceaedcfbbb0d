// Package enginetest gives tests every engine's target without a server:
// the engines open their URLs without connecting, so a test can read a
// target's kind and dialect offline.
package enginetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/sqlite"
)

// Offline returns one unconnected target per engine, in a fixed order.
// Nothing may connect through them: the servers' addresses are unused.
func Offline(t testing.TB) []target.Target {
	t.Helper()
	reg := target.NewRegistry()
	postgres.Register(reg)
	mysql.Register(reg)
	var out []target.Target
	for _, raw := range []string{"postgres://bench@127.0.0.1:1/bench", "mysql://bench@127.0.0.1:1/bench"} {
		tg, err := reg.Open(context.Background(), raw, target.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tg)
	}
	return append(out, sqlite.New(filepath.Join(t.TempDir(), "offline.db")))
}

// Golden compares got with the file at path or, with update, rewrites the
// file: what the statements rendered for each engine are pinned by.
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("statements differ from %s (-update rewrites it):\n%s", path, got)
	}
}

// EachGolden renders statements for every engine and compares them with
// testdata/statements-KIND.golden (Golden).
func EachGolden(t *testing.T, update bool, render func(t *testing.T, tg target.Target) string) {
	for _, tg := range Offline(t) {
		t.Run(tg.Kind(), func(t *testing.T) {
			Golden(t, filepath.Join("testdata", "statements-"+tg.Kind()+".golden"), render(t, tg), update)
		})
	}
}

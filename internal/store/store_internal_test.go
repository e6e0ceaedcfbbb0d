package store

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDSN(t *testing.T) {
	for _, c := range []struct {
		dsn  string
		kind backendKind
		loc  string
	}{
		{"", kindSQLite, ""},
		{"  ", kindSQLite, ""},
		{"results.db", kindSQLite, "results.db"},
		{"/var/lib/dbmark/results.db", kindSQLite, "/var/lib/dbmark/results.db"},
		{"./a:b.db", kindSQLite, "./a:b.db"},
		{"sqlite:///abs/results.db", kindSQLite, "/abs/results.db"},
		{"sqlite://rel/results.db", kindSQLite, "rel/results.db"},
		{"sqlite:rel.db", kindSQLite, "rel.db"},
		{"SQLITE:///abs.db", kindSQLite, "/abs.db"},
		{"file:/abs/results.db", kindSQLite, "/abs/results.db"},
		{"file:///abs/my%20results.db", kindSQLite, "/abs/my results.db"},
		{"file://localhost/abs.db", kindSQLite, "/abs.db"},
		{"file:rel.db", kindSQLite, "rel.db"},
		{"postgres://u:p@h:5432/db?sslmode=disable", kindPostgres, "postgres://u:p@h:5432/db?sslmode=disable"},
		{"postgresql://h/db", kindPostgres, "postgresql://h/db"},
		{"PostgreSQL://h/db", kindPostgres, "PostgreSQL://h/db"},
	} {
		kind, loc, err := parseDSN(c.dsn)
		if err != nil || kind != c.kind || loc != c.loc {
			t.Errorf("parseDSN(%q) = %v, %q, %v; want %v, %q", c.dsn, kind, loc, err, c.kind, c.loc)
		}
	}
}

func TestParseDSNRejects(t *testing.T) {
	for _, c := range []struct{ dsn, want string }{
		{"mysql://root:secret@h/db", `scheme "mysql"`},
		{"http://example.com/results", `scheme "http"`},
		{"postgres:host=h", "not a PostgreSQL URL"},
		{"sqlite://", "does not name a file"},
		{"sqlite:///x.db?_busy_timeout=1", "without ?options"},
		{"file:/x.db?mode=ro", "options in a file: URI"},
		{"file://otherhost/x.db", "local file"},
		{":memory:", "in-memory"},
	} {
		_, _, err := parseDSN(c.dsn)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseDSN(%q): err = %v, want one containing %q", c.dsn, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("parseDSN(%q): error shows the password: %v", c.dsn, err)
		}
	}
	// An unknown scheme's error says what is accepted.
	_, _, err := parseDSN("mysql://h/db")
	for _, want := range []string{"sqlite://", "file:", "postgres://", "postgresql://", "file path"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not list %q", err, want)
		}
	}
}

func TestDataDir(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("$HOME is not defined") }
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	rel, _ := filepath.Abs("rel")
	for _, c := range []struct {
		name   string
		getenv func(string) string
		home   func() (string, error)
		want   string
	}{
		{"DBMARK_HOME wins", env("DBMARK_HOME", "/srv/dbmark", "XDG_DATA_HOME", "/xdg"), home, "/srv/dbmark"},
		{"DBMARK_HOME made absolute", env("DBMARK_HOME", "rel"), home, rel},
		{"XDG_DATA_HOME", env("XDG_DATA_HOME", "/xdg"), home, "/xdg/dbmark"},
		{"relative XDG_DATA_HOME is ignored", env("XDG_DATA_HOME", "xdg"), home, "/home/u/.local/share/dbmark"},
		{"home", env(), home, "/home/u/.local/share/dbmark"},
		{"DBMARK_HOME needs no home", env("DBMARK_HOME", "/srv/dbmark"), noHome, "/srv/dbmark"},
	} {
		got, err := dataDir(c.getenv, c.home)
		if err != nil || got != c.want {
			t.Errorf("%s: dataDir = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := dataDir(env(), noHome); err == nil || !strings.Contains(err.Error(), "DBMARK_HOME") {
		t.Errorf("no home: err = %v, want one suggesting DBMARK_HOME", err)
	}
}

func TestRebind(t *testing.T) {
	q := "SELECT a FROM t WHERE b = ? AND c IN (?, ?)"
	if got := dialectSQLite.rebind(q); got != q {
		t.Errorf("sqlite rebind = %q", got)
	}
	if got, want := dialectPostgres.rebind(q), "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)"; got != want {
		t.Errorf("postgres rebind = %q, want %q", got, want)
	}
}

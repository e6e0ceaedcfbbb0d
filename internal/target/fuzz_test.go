package target_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/sqlite"
)

// urlSeeds are target URLs of every engine, good and bad.
var urlSeeds = []string{
	"postgres://dbmark:secret@127.0.0.1:5432/dbmark?sslmode=disable",
	"postgresql://u@localhost/db?connect_timeout=3&application_name=x",
	"pgsql://u:p%40ss@[::1]:5433/db",
	"postgres:///db?host=/run/postgresql",
	"postgres://u@h/db?password=hunter22",
	"mysql://root:pw@127.0.0.1:3306/sbtest?tls=false&timeout=3s",
	"mariadb://u@localhost/db?socket=/run/mysqld/mysqld.sock",
	"mysql://u@h/a/b",
	"sqlite:///tmp/x.db?_busy_timeout=5000",
	"sqlite://rel.db",
	"file:x.db",
	"sqlite3://",
	"redis://h",
	"://nothing",
	"postgres://u:p@h:99999/db",
	"postgres://u:p@h/db?sslmode=bogus",
	"mysql://u:p@h/db?timeout=notaduration",
	"postgres://%zz@h/db",
	"",
}

// unsafeURL is a URL whose parsing could read a device (a certificate or
// password file in /dev/zero), which a fuzzer must not ask for.
func unsafeURL(raw string) bool {
	dec, err := url.PathUnescape(raw)
	if err != nil {
		dec = raw
	}
	for _, s := range []string{raw, dec} {
		if strings.Contains(s, "dev/") || strings.Contains(s, "proc/") {
			return true
		}
	}
	return false
}

// withPassword returns raw with a password no part of raw holds, in its
// user information and as a password parameter, or false when raw is no
// URL.
func withPassword(raw string) (string, string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", false
	}
	const secret = "Zq7vXw9Kp2"
	if strings.Contains(raw, secret) {
		return "", "", false
	}
	name := "dbmark"
	if u.User != nil {
		name = u.User.Username()
	}
	u.User = url.UserPassword(name, secret)
	q := u.Query()
	q.Set("password", secret)
	u.RawQuery = q.Encode()
	return u.String(), secret, true
}

func checkLine(t *testing.T, what, s string) {
	t.Helper()
	if strings.ContainsAny(s, "\n\r") {
		t.Fatalf("%s spans lines: %q", what, s)
	}
}

func registry() *target.Registry {
	r := target.NewRegistry()
	postgres.Register(r)
	mysql.Register(r)
	sqlite.Register(r)
	return r
}

// FuzzRegistryOpen opens any string as a target URL: Open parses and never
// connects, never panics, gives one line when it refuses, and never shows
// a password, neither in its error nor in the target's redacted URL.
func FuzzRegistryOpen(f *testing.F) {
	for _, s := range urlSeeds {
		f.Add(s)
	}
	r := registry()
	f.Fuzz(func(t *testing.T, raw string) {
		if unsafeURL(raw) {
			t.Skip()
		}
		for _, pm := range []string{"", "simple", "bogus"} {
			tg, err := r.Open(context.Background(), raw, target.Options{PGMode: pm, PSMode: pm})
			if err != nil {
				checkLine(t, "Open's error", err.Error())
				continue
			}
			checkLine(t, "Redacted", tg.Redacted())
		}
		withPw, secret, ok := withPassword(raw)
		if !ok || unsafeURL(withPw) {
			return
		}
		tg, err := r.Open(context.Background(), withPw, target.Options{})
		if err != nil {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("Open(%q): the error shows the password: %v", withPw, err)
			}
			return
		}
		if strings.Contains(tg.Redacted(), secret) {
			t.Fatalf("Open(%q): Redacted %q shows the password", withPw, tg.Redacted())
		}
	})
}

// FuzzRedact: Redact never panics, gives one line, is idempotent, keeps
// a parseable URL parseable and never shows a password.
func FuzzRedact(f *testing.F) {
	for _, s := range urlSeeds {
		f.Add(s)
	}
	f.Add("a\nb://x%zz")
	f.Add("user:secret@host://x%zz")
	f.Fuzz(func(t *testing.T, raw string) {
		red := target.Redact(raw)
		checkLine(t, "Redact", red)
		if again := target.Redact(red); again != red {
			t.Fatalf("Redact is not idempotent: %q -> %q -> %q", raw, red, again)
		}
		if _, err := url.Parse(raw); err == nil {
			if _, err := url.Parse(red); err != nil {
				t.Fatalf("Redact(%q) = %q, which does not parse: %v", raw, red, err)
			}
		}
		withPw, secret, ok := withPassword(raw)
		if !ok {
			// An unparseable URL keeps at most its scheme.
			if strings.Count(red, "(unparseable)") != 1 {
				t.Fatalf("Redact(%q) = %q: want the scheme and (unparseable)", raw, red)
			}
			return
		}
		if red := target.Redact(withPw); strings.Contains(red, secret) {
			t.Fatalf("Redact(%q) = %q shows the password", withPw, red)
		}
	})
}

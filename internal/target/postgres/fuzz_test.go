package postgres_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/postgres"
)

// FuzzOpen parses any postgres:// URL: Open parses and never connects,
// never panics, refuses in one line, and its redacted URL is one line
// without the password.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{"dbmark:secret@127.0.0.1:5432/dbmark?sslmode=disable", "u@localhost/db?connect_timeout=3", "u:p%40ss@[::1]:5433/db", "/db?host=/run/postgresql", "u@h/db?password=hunter22", "u:p@h:99999/db", "u@h/db?sslmode=bogus", "u@h/db?connect_timeout=-1", "u@h1:1,h2:2/db?target_session_attrs=read-write", "%zz@h/db", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		raw := "postgres://" + rest
		if dec, err := url.PathUnescape(raw); strings.Contains(raw, "dev/") || strings.Contains(raw, "proc/") ||
			err == nil && (strings.Contains(dec, "dev/") || strings.Contains(dec, "proc/")) {
			t.Skip() // a certificate or password file under /dev could block the parser
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Skip()
		}
		const secret = "Zq7vXw9Kp2"
		for _, mode := range []string{"", "simple", "extended", "prepared", "bogus"} {
			tg, err := postgres.Open(context.Background(), u, target.Options{PGMode: mode})
			if err != nil {
				if strings.ContainsAny(err.Error(), "\n\r") {
					t.Fatalf("Open(%q): the error spans lines: %q", raw, err)
				}
				if p, ok := u.User.Password(); ok && p == secret && strings.Contains(err.Error(), secret) {
					t.Fatalf("Open(%q): the error shows the password: %v", raw, err)
				}
				continue
			}
			if r := tg.Redacted(); strings.ContainsAny(r, "\n\r") || strings.Contains(r, secret) {
				t.Fatalf("Open(%q): Redacted %q spans lines or shows the password", raw, r)
			}
		}
		if strings.Contains(raw, secret) {
			return
		}
		// The same URL with a password: it must never show.
		name := "dbmark"
		if u.User != nil {
			name = u.User.Username()
		}
		u.User = url.UserPassword(name, secret)
		if tg, err := postgres.Open(context.Background(), u, target.Options{}); err == nil {
			if r := tg.Redacted(); strings.Contains(r, secret) {
				t.Fatalf("Open(%q): Redacted %q shows the password", u.String(), r)
			}
		} else if strings.Contains(err.Error(), secret) {
			t.Fatalf("Open(%q): the error shows the password: %v", u.String(), err)
		}
	})
}

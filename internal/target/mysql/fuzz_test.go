package mysql_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
)

// FuzzOpen parses any mysql:// URL: Open parses and never connects,
// never panics, refuses in one line, and its redacted URL is one line
// without the password.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{"root:pw@127.0.0.1:3306/sbtest?tls=false&timeout=3s", "u@localhost/db?socket=/run/mysqld/mysqld.sock", "u@h/a/b", "u:p@h/db?timeout=notaduration", "u@[::1]:3307/db?charset=utf8mb4&collation=utf8mb4_bin", "u@h/db?tls=skip-verify&readTimeout=1s", "u@h/db?maxAllowedPacket=-5", "u@h:port/db", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		raw := "mysql://" + rest
		if dec, err := url.PathUnescape(raw); strings.Contains(raw, "dev/") || strings.Contains(raw, "proc/") ||
			err == nil && (strings.Contains(dec, "dev/") || strings.Contains(dec, "proc/")) {
			t.Skip() // a certificate or password file under /dev could block the parser
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Skip()
		}
		const secret = "Zq7vXw9Kp2"
		for _, mode := range []string{"", "auto", "disable", "bogus"} {
			tg, err := mysql.Open(context.Background(), u, target.Options{PSMode: mode})
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
		if tg, err := mysql.Open(context.Background(), u, target.Options{}); err == nil {
			if r := tg.Redacted(); strings.Contains(r, secret) {
				t.Fatalf("Open(%q): Redacted %q shows the password", u.String(), r)
			}
		} else if strings.Contains(err.Error(), secret) {
			t.Fatalf("Open(%q): the error shows the password: %v", u.String(), err)
		}
	})
}

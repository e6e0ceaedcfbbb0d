package sqlite_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/sqlite"
)

// FuzzOpen parses any sqlite:// URL: Open parses and never connects,
// never panics, refuses in one line, and its redacted URL is one line
// without the password, and neither is its error.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{"/tmp/x.db?_busy_timeout=5000", "rel.db", "", "/a/b.db?_journal_mode=WAL&cache=shared", "u:p@host/x.db", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		raw := "sqlite://" + rest
		if dec, err := url.PathUnescape(raw); strings.Contains(raw, "dev/") || strings.Contains(raw, "proc/") ||
			err == nil && (strings.Contains(dec, "dev/") || strings.Contains(dec, "proc/")) {
			t.Skip() // a certificate or password file under /dev could block the parser
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Skip()
		}
		const secret = "Zq7vXw9Kp2"
		for range 1 {
			tg, err := sqlite.Open(context.Background(), u, target.Options{})
			if err != nil {
				if strings.ContainsAny(err.Error(), "\n\r") {
					t.Fatalf("Open(%q): the error spans lines: %q", raw, err)
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
		tg, err := sqlite.Open(context.Background(), u, target.Options{})
		if err != nil {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("Open(%q): the error shows the password: %v", u.String(), err)
			}
		} else if r := tg.Redacted(); strings.Contains(r, secret) {
			t.Fatalf("Open(%q): Redacted %q shows the password", u.String(), r)
		}
	})
}

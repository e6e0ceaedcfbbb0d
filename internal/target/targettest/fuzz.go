package targettest

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
)

// Opener is an engine's Open.
type Opener func(ctx context.Context, u *url.URL, o target.Options) (target.Target, error)

// FuzzOpen fuzzes open with any scheme:// URL, seeded with seeds, under
// each of variants (the engine's modes; none: the zero Options). Open
// parses and never connects, never panics, refuses in one line, and
// neither its error nor its redacted URL shows the password.
func FuzzOpen(f *testing.F, scheme string, seeds []string, open Opener, variants ...target.Options) {
	for _, s := range seeds {
		f.Add(s)
	}
	if len(variants) == 0 {
		variants = []target.Options{{}}
	}
	f.Fuzz(func(t *testing.T, rest string) {
		raw := scheme + "://" + rest
		if dec, err := url.PathUnescape(raw); strings.Contains(raw, "dev/") || strings.Contains(raw, "proc/") ||
			err == nil && (strings.Contains(dec, "dev/") || strings.Contains(dec, "proc/")) {
			t.Skip() // a certificate or password file under /dev could block the parser
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Skip()
		}
		const secret = "Zq7vXw9Kp2"
		for _, o := range variants {
			tg, err := open(context.Background(), u, o)
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
		if tg, err := open(context.Background(), u, target.Options{}); err == nil {
			if r := tg.Redacted(); strings.Contains(r, secret) {
				t.Fatalf("Open(%q): Redacted %q shows the password", u.String(), r)
			}
		} else if strings.Contains(err.Error(), secret) {
			t.Fatalf("Open(%q): the error shows the password: %v", u.String(), err)
		}
	})
}

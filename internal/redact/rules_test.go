package redact

import (
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/secret"
)

// ruleSamples match the patterns in each of their forms, and a few that
// only look as if they might.
var ruleSamples = []string{
	"postgres://u:pw@db.example.org:5432/x", "PASSWORD=hunter2", "api-key: abc", "to\u212aen=abc", "pa\u017f\u017fword: x",
	"Secret : s3", "a@b.co", "0f8fad5b-d9cb-469f-a165-70867728950e", "AA:bb:cc:dd:ee:ff", "10.1.2.3", "fe80::1", "::1",
	"2001:db8:0:0:0:0:2:1", "a:b:c", "/home/alice/x", "/Users/bob", "/var/home/c/d", "/root", "/rooted", "12:30",
	"2026-11-27T23:35:44.123Z", "6.8.0-45-generic", "AAAA/+b==", "on", "", "token", "api_key=1",
	"C:\\Users\\alice\\x", `\\Users\\bob`, "d:/users/carol", "AKIAIOSFODNN7EXAMPLE", "ghp_" + strings.Repeat("a", 36),
	"mysql -uroot -pSECRET", "PGPASSWORD=x pgbench", "sb:pw@tcp(h:1)/db", "--password x", "Bearer " + strings.Repeat("b", 20),
}

// A rule's test must never skip text its pattern matches: the test only
// saves time, it may not change what is redacted or found.
func checkRules(t *testing.T, v string) {
	for i, r := range rules {
		// A rule of several patterns (re nil) is held to what it changes.
		matches := r.re != nil && r.re.MatchString(v) || r.re == nil && r.apply(v) != v
		if matches && !r.may(v) {
			t.Errorf("rule %d (%v) skips %q, which it matches", i, r.re, v)
		}
	}
	if !strings.ContainsAny(v, patternChars) && !secret.May(v) && Text(v) != v {
		t.Errorf("%q skips the rules, which change it to %q", v, Text(v))
	}
}

func TestRulesSkipOnlyWhatCannotMatch(t *testing.T) {
	for _, v := range ruleSamples {
		checkRules(t, v)
		checkRules(t, strings.ToUpper(v))
	}
}

func FuzzRules(f *testing.F) {
	for _, v := range ruleSamples {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) { checkRules(t, v) })
}

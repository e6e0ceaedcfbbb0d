package secret_test

import (
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/secret"
)

// textCases hold a secret ({PW}) in every form the policy knows, and what
// must stay of the rest.
var textCases = []struct{ in, keep string }{
	{"postgres://u:{PW}@h/db?sslmode=require&sslpassword={PW}", "sslmode=require"},
	{"postgres://u@h/db?sslinline=true&sslkey=-----BEGIN%20PRIVATE%20KEY-----{PW}", "sslinline=true"},
	{"mysql://u@h/db?password={PW}&tls=true", "tls=true"},
	{"sb:{PW}@tcp(127.0.0.1:3306)/sbtest", "@tcp(127.0.0.1:3306)/sbtest"},
	{"sb:{PW}@/sbtest?timeout=5s", "timeout=5s"},
	{"host=h user=u password={PW} dbname=x", "dbname=x"},
	{"host=h password='P W {PW}' dbname=x", "dbname=x"},
	{"PGPASSWORD={PW} pgbench -c 4 sbtest", "pgbench -c 4"},
	{"export MYSQL_PWD={PW}; sysbench run", "sysbench run"},
	{"mysql -uroot -p{PW} sbtest", "-uroot"},
	{"mysqladmin -h db -u root -p'{PW}' status", "status"},
	{"mysqldump --password={PW} db", "db"},
	{"sysbench --mysql-password={PW} --pgsql-password={PW} run", "run"},
	{"psql --password {PW}", "psql"},
	{"token: {PW}", "token"},
	{`{"api_key": "{PW}"}`, "api_key"},
	{"aws_secret_access_key = {PW}", "aws_secret_access_key"},
	{"AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""},
	{"key AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "key"},
	{"ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 and github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv", "and"},
	{"-----BEGIN OPENSSH PRIVATE KEY-----\n{PW}\n-----END OPENSSH PRIVATE KEY-----\nafter", "after"},
	{`{"type": "service_account", "private_key_id": "{PW}", "private_key": "-----BEGIN PRIVATE KEY-----\n{PW}\n"}`, "service_account"},
	{"Authorization: Basic {PW}", "Authorization"},
	{"curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.{PW}'", "curl"},
	{"to\u212aen={PW}", "="},
}

func TestScrubMasksEveryForm(t *testing.T) {
	for _, c := range textCases {
		for _, pw := range []string{"hunter2", "p@ss:w/rd"} {
			in := strings.ReplaceAll(c.in, "{PW}", pw)
			out := secret.Text(in)
			if strings.Contains(out, pw) || !strings.Contains(out, c.keep) {
				t.Errorf("Text(%q) = %q: want no %q, and %q kept", in, out, pw, c.keep)
			}
			if again := secret.Text(out); again != out {
				t.Errorf("Text is not idempotent: %q -> %q -> %q", in, out, again)
			}
		}
	}
}

// What only looks like a secret stays.
func TestScrubKeepsWhatIsNotSecret(t *testing.T) {
	for _, s := range []string{
		"password_encryption=scram-sha-256", "allowNativePasswords=true", "tokens=5", "sslkey=/etc/ssl/client.key",
		"pgbench -p 5432 -c 4", "basic latency statistics", "the key: primary", "12:30:45", "AAAA/+b==",
		"mysql://u@h/db?socket=/run/mysqld/mysqld.sock", "ls -pa",
	} {
		if out := secret.Text(s); out != s {
			t.Errorf("Text(%q) = %q, want it unchanged", s, out)
		}
	}
}

func TestTargetAndArgs(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:PW@h/db?sslmode=require&sslpassword=PW": "postgres://u:xxxxx@h/db?sslmode=require&sslpassword=xxxxx",
		"sb:PW@tcp(127.0.0.1:3306)/sbtest?tls=PW":             "sb:xxxxx@tcp(127.0.0.1:3306)/sbtest?tls=PW",
		"host=h password=PW dbname=x":                         "host=h password=xxxxx dbname=x",
		"postgres://u:P%zzW@h/db":                             "postgres://(unparseable)",
	} {
		if got := secret.Target(in); got != want {
			t.Errorf("Target(%q) = %q, want %q", in, got, want)
		}
	}
	args := []string{"dbmark", "run", "--target", "postgres://u:PW@h/db?sslpassword=PW", "--password", "PW",
		"--mysql-password=PW", "-D", "n=mysql -uroot -pPW", "--target=sb:PW@tcp(h:1)/db", "-p", "5432"}
	got := strings.Join(secret.Args(args), " ")
	if strings.Contains(got, "PW") || !strings.Contains(got, "-p 5432") {
		t.Errorf("Args: %s", got)
	}
}

// FuzzScrub: Scrub never panics, is idempotent, changes only what May lets
// through, and masks a password planted in a form it knows.
func FuzzScrub(f *testing.F) {
	for _, c := range textCases {
		f.Add(c.in, "Zq7vXw9Kp2")
	}
	f.Fuzz(func(t *testing.T, text, pw string) {
		out := secret.Text(text)
		if !secret.May(text) && out != text {
			t.Fatalf("May(%q) is false, and Text changes it to %q", text, out)
		}
		if again := secret.Text(out); again != out {
			t.Fatalf("Text is not idempotent: %q -> %q -> %q", text, out, again)
		}
		if len(pw) < 6 || strings.ContainsAny(pw, " \t\r\n\v\f&;,\"'\\") || strings.Contains(text, pw) ||
			strings.Contains(secret.Mask, pw) || strings.HasPrefix(pw, secret.Mask) || pw[0] == '=' {
			return
		}
		for _, c := range textCases[:14] {
			in := text + " " + strings.ReplaceAll(c.in, "{PW}", pw) + " " + text
			if out := secret.Text(in); strings.Contains(out, pw) {
				t.Fatalf("Text(%q) = %q shows %q", in, out, pw)
			}
		}
	})
}

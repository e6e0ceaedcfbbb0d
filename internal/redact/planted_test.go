package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/secret"
)

// plantForms are the forms a secret ({S}) or a home directory's user ({U})
// takes in free text.
var plantForms = []string{
	"postgres://u:{S}@db.example.org/x", "postgres://u@h/db?sslmode=require&sslpassword={S}", "mysql://u@h/db?password={S}",
	"host=h user=u password={S} dbname=x", "host=h password='{S} x' dbname=x", "sb:{S}@tcp(127.0.0.1:3306)/sbtest",
	"PGPASSWORD={S} pgbench -c 4", "export MYSQL_PWD={S}", "mysql -uroot -p{S} sbtest", "mysqldump --password={S} db",
	"--password {S}", "token: {S}", "api_key={S}", `{"private_key_id": "{S}"}`,
	"-----BEGIN RSA PRIVATE KEY-----\n{S}\n-----END RSA PRIVATE KEY-----", "Authorization: Bearer {S}",
	"/home/{U}/bench", "/Users/{U}/x.sql", `C:\Users\{U}\x.sql`,
}

// plantField puts text in one of the fields free text reaches.
func plantField(r *result.Result, field uint8, text string) {
	switch field % 6 {
	case 0:
		r.Warnings = append(r.Warnings, text)
	case 1:
		r.Error = text
	case 2:
		r.Command = append(r.Command, "-D", "v="+text)
	case 3:
		r.Target.Settings["init_connect"] = text
	case 4:
		r.Workload.Options["define"] = text
	default:
		r.Environment.MachineFacts.Unknown["note"] = text
	}
}

// FuzzPlantedSecret plants a marker secret, in each form, in a random
// place of a result among random text, and fails if it survives Result
// (what leaves the machine), if Find does not report the document (the
// site's check), or, for a credential, if it survives Secrets (what the
// store keeps).
func FuzzPlantedSecret(f *testing.F) {
	f.Add("a note", "", uint8(0), uint8(0), "Zq7vXw9Kp2")
	f.Add("x=", "'", uint8(3), uint8(8), "p@ss:w/rd")
	f.Fuzz(func(t *testing.T, before, after string, form, field uint8, marker string) {
		if len(marker) < 6 || strings.ContainsAny(marker, " \t\r\n\v\f&;,\"'\\<>#?/@%") || marker[0] == '=' ||
			strings.Contains(before+after, marker) || strings.Contains(Mask+secret.Mask, marker) {
			return
		}
		tmpl := plantForms[int(form)%len(plantForms)]
		personal := strings.Contains(tmpl, "{U}")
		user := "u" + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, marker)
		if personal && len(user) < 6 {
			return
		}
		planted := strings.NewReplacer("{S}", marker, "{U}", user).Replace(tmpl)
		want := marker
		if personal {
			want = user
		}
		r := realistic()
		r.Workload.Options = map[string]string{}
		plantField(r, field, before+" "+planted+" "+after)

		red, err := Result(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(red)
		if strings.Contains(string(b), want) {
			t.Fatalf("%q survives redaction of %q", want, planted)
		}
		if f, err := Find(r); err != nil || f == "" {
			t.Fatalf("Find does not report %q: %q %v", planted, f, err)
		}
		if personal {
			return
		}
		if b, err = Secrets(r); err != nil || strings.Contains(string(b), want) {
			t.Fatalf("%q survives Secrets (%v)", planted, err)
		}
	})
}

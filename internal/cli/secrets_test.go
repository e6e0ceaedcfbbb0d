package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretInput is one way a secret reaches dbmark, and the secret in it.
type secretInput struct {
	in, secret string
	// personal is what only must not leave the machine (a home path's
	// user): the terminal and the local store keep it.
	personal bool
	// target is a --target form: given alone, its error must not show it.
	target bool
}

// pad makes s n characters long, for keys of a fixed shape.
func pad(s string, n int) string { return s + strings.Repeat("Q", n-len(s)) }

// secretInputs are the secret-bearing inputs tried: every URL and DSN form
// the engines take, every parameter that carries a secret, command lines,
// variables, home paths of every OS and keys of a well-known format.
var secretInputs = []secretInput{
	{in: "postgres://u:PWa01xq@127.0.0.1:1/db", secret: "PWa01xq", target: true},
	{in: "postgres://u@127.0.0.1:1/db?sslmode=require&sslpassword=PWa02xq", secret: "PWa02xq", target: true},
	{in: "postgresql://u@127.0.0.1:1/db?password=PWa03xq&sslmode=disable", secret: "PWa03xq", target: true},
	{in: "postgres://u@127.0.0.1:1/db?sslinline=true&sslkey=-----BEGIN%20PRIVATE%20KEY-----PWa04xq", secret: "PWa04xq", target: true},
	{in: "mysql://sb:PWa05xq@127.0.0.1:1/sbtest", secret: "PWa05xq", target: true},
	{in: "mysql://sb@127.0.0.1:1/sbtest?password=PWa06xq", secret: "PWa06xq", target: true},
	{in: "mariadb://sb:p%40ss%2FPWa07xq@127.0.0.1:1/sbtest", secret: "PWa07xq", target: true},
	{in: "sb:PWa08xq@tcp(127.0.0.1:3306)/sbtest", secret: "PWa08xq", target: true},
	{in: "sb:PWa09xq@unix(/run/mysqld/mysqld.sock)/sbtest?tls=true", secret: "PWa09xq", target: true},
	{in: "host=127.0.0.1 port=1 user=u password=PWa10xq dbname=x", secret: "PWa10xq", target: true},
	{in: "host=127.0.0.1 password='PWa11xq with space' dbname=x", secret: "PWa11xq", target: true},
	{in: "postgres://u:p@ss/PWa12xq@127.0.0.1:1/db", secret: "PWa12xq", target: true},
	{in: "postgres://u@127.0.0.1:1/db?token=PWa13xq&application_name=x", secret: "PWa13xq", target: true},
	{in: "postgres://u@127.0.0.1:1/db?sslpassword=PWa14xq#frag", secret: "PWa14xq", target: true},
	{in: "mysql://sb:PWa15xq@127.0.0.1:1/sbtest?tls=skip-verify&api_key=PWa15xq", secret: "PWa15xq", target: true},

	{in: "PGPASSWORD=PWb16xq pgbench -c 4 sbtest", secret: "PWb16xq"},
	{in: "export PGPASSWORD='PWb17xq'", secret: "PWb17xq"},
	{in: "MYSQL_PWD=PWb18xq sysbench oltp_read_write run", secret: "PWb18xq"},
	{in: "mysql -uroot -pPWb19xq sbtest", secret: "PWb19xq"},
	{in: "mysql -u root -p'PWb20xq' -h db", secret: "PWb20xq"},
	{in: "mysqldump --password=PWb21xq sbtest", secret: "PWb21xq"},
	{in: "mysqladmin --password PWb22xq status", secret: "PWb22xq"},
	{in: "sysbench --mysql-password=PWb23xq --mysql-user=sb run", secret: "PWb23xq"},
	{in: "sysbench --pgsql-password=PWb24xq run", secret: "PWb24xq"},
	{in: `pgbench "host=h password=PWb25xq dbname=x" -T 10`, secret: "PWb25xq"},
	{in: "psql postgresql://u:PWb26xq@db.example.org/x", secret: "PWb26xq"},
	{in: "set PGPASSWORD=PWb27xq && pgbench", secret: "PWb27xq"},
	{in: `$env:PGPASSWORD="PWb28xq"`, secret: "PWb28xq"},
	{in: "DATABASE_URL=postgres://app:PWb29xq@db/app", secret: "PWb29xq"},
	{in: "--password=PWb30xq", secret: "PWb30xq"},
	{in: "password: PWb31xq", secret: "PWb31xq"},
	{in: "passphrase=PWb32xq", secret: "PWb32xq"},
	{in: "api_key=PWb33xq", secret: "PWb33xq"},
	{in: "X-Api-Key: PWb34xq", secret: "PWb34xq"},
	{in: "auth_token=PWb35xq", secret: "PWb35xq"},
	{in: "client_secret: PWb36xq", secret: "PWb36xq"},
	{in: "sslpassword=PWb37xq", secret: "PWb37xq"},
	{in: "DSN=sb:PWb38xq@tcp(db:3306)/sbtest", secret: "PWb38xq"},
	{in: "SECRET_KEY=PWb39xq", secret: "PWb39xq"},

	{in: "aws_access_key_id = AKIAQ7ZX40SECRETKEY1", secret: "AKIAQ7ZX40SECRETKEY1"},
	{in: "aws_secret_access_key = " + pad("Wb41xqJalrXUtnFEMIK7MDENG", 40), secret: "Wb41xqJalrXUtnFEMIK7MDENG"},
	{in: "AKIAQ7ZX42SECRETKEY2 " + pad("wJalrXUtnFEMI/K7MDENG/b42xq", 40), secret: "wJalrXUtnFEMI/K7MDENG/b42xq"},
	{in: "AWS_SESSION_TOKEN=FwoGZXIvYXdzEPb43xq", secret: "FwoGZXIvYXdzEPb43xq"},
	{in: "key=" + pad("AIzaSyPb44xq", 39), secret: "AIzaSyPb44xq"},
	{in: `{"type":"service_account","private_key_id":"Pb45xqid","private_key":"-----BEGIN PRIVATE KEY-----\nMIIEvPb45xq\n-----END PRIVATE KEY-----\n"}`, secret: "Pb45xq"},
	{in: "GITHUB_TOKEN " + pad("ghp_Pb46xq", 40), secret: "ghp_Pb46xq"},
	{in: "push with " + pad("github_pat_11Pb47xq", 60), secret: "Pb47xq"},
	{in: "-----BEGIN RSA PRIVATE KEY-----\nPb48xqMIIEow\n-----END RSA PRIVATE KEY-----", secret: "Pb48xq"},
	{in: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlPb49xq", secret: "Pb49xq"},
	{in: "curl -H 'Authorization: Bearer Pb50xqeyJhbGciOiJIUzI1NiJ9abc'", secret: "Pb50xq"},
	{in: "slack xoxb-1234-Pb51xq-abcdef", secret: "Pb51xq"},
	{in: "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJQYjUyeHEifQ.Pb52xqsig", secret: "Pb52xq"},
	{in: "oauth " + pad("GOCSPX-Pb53xq", 35), secret: "Pb53xq"},

	{in: "/home/hzq54alice/bench/run.json", secret: "hzq54alice", personal: true},
	{in: "/Users/hzq55bob/Documents/x.sql", secret: "hzq55bob", personal: true},
	{in: `C:\Users\hzq56carol\AppData\x.sql`, secret: "hzq56carol", personal: true},
	{in: "C:/Users/hzq57dave/x", secret: "hzq57dave", personal: true},
	{in: "/root/.pgpass", secret: "/root/", personal: true},
	{in: "cd /var/home/hzq59erin && pgbench", secret: "hzq59erin", personal: true},
}

// TestSecretsSurfaceNowhere gives each secret-bearing input to a real run
// (as its target, or as the value of -D in its command line) and looks
// for its secret in every place a string surfaces: the terminal, the
// results store (its file, results show and list), the redacted export,
// submit --dry-run, and each page and API of a results site the run is
// published on. A credential must be nowhere; what is merely personal
// must not leave the machine. The site's own check must refuse a
// submission that holds any of them unredacted.
func TestSecretsSurfaceNowhere(t *testing.T) {
	if len(secretInputs) < 50 {
		t.Fatalf("%d inputs: the table must hold at least 50", len(secretInputs))
	}
	dir := home(t)
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "x.db")
	runTarget := secretInput{in: "sqlite://" + db + "?sslpassword=PWc60xq&token=PWc60xq&api_key=PWc60xq", secret: "PWc60xq"}
	inputs := append([]secretInput{runTarget}, secretInputs...)
	args := []string{"run", "tpcb", "-n", "-f", selectOne(t), "--time", "1", "--target", runTarget.in}
	for i, in := range secretInputs {
		args = append(args, "-D", fmt.Sprintf("v%d=%s", i, in.in))
	}
	run := dbmark(t, ctx, args...)
	if run.code != 0 {
		t.Fatalf("run: exit %d: %s", run.code, run.stderr)
	}
	if !strings.Contains(run.stdout, "sslpassword=xxxxx") {
		t.Errorf("the run header does not show the masked target:\n%s", run.stdout)
	}

	local := map[string]string{"terminal (run)": run.stdout + run.stderr}
	for _, cmd := range [][]string{{"results", "show", "1"}, {"results", "list"}, {"results", "export", "1", "--no-redact"}} {
		o := dbmark(t, ctx, cmd...)
		if o.code != 0 {
			t.Fatalf("%v: exit %d: %s", cmd, o.code, o.stderr)
		}
		local[strings.Join(cmd, " ")] = o.stdout + o.stderr
	}
	local["the store's files"] = storeFiles(t, dir)
	for _, in := range inputs {
		if !in.target {
			continue
		}
		o := dbmark(t, ctx, "run", "tpcb", "--target", in.in, "--time", "1")
		if o.code == 0 {
			t.Fatalf("run --target %q succeeded", in.in)
		}
		local["terminal (run --target "+in.secret+")"] = o.stdout + o.stderr
	}

	leaving := map[string]string{}
	for _, cmd := range [][]string{{"results", "export", "1"}, {"submit", "1", "--dry-run"}} {
		o := dbmark(t, ctx, cmd...)
		if o.code != 0 {
			t.Fatalf("%v: exit %d: %s", cmd, o.code, o.stderr)
		}
		leaving[strings.Join(cmd, " ")] = o.stdout
	}
	url, _ := serve(t, "--store", filepath.Join(t.TempDir(), "site.db"), "--submit-per-minute", "1000")
	if o := dbmark(t, ctx, "submit", "1", "--server", url); o.code != 0 {
		// The other places are still looked at: the test names them all.
		t.Errorf("submit: exit %d: %s", o.code, o.stderr)
	} else {
		link := strings.TrimSpace(o.stdout)
		id := link[strings.LastIndex(link, "/")+1:]
		for _, p := range []string{"/r/" + id, "/r/" + id + ".json", "/r/" + id + ".csv", "/api/v1/results/" + id,
			"/api/v1/results", "/", "/results", "/feed.atom", "/leaderboard"} {
			code, body := get(t, url+p)
			if code != http.StatusOK {
				t.Errorf("GET %s: %d", p, code)
			}
			leaving["site "+p] = unescape.Replace(body)
		}
	}

	for _, in := range inputs {
		places := leaving
		if !in.personal {
			places = merged(local, leaving)
		}
		for place, text := range places {
			if strings.Contains(text, in.secret) {
				t.Errorf("%q of %q surfaces in %s", in.secret, in.in, place)
			}
		}
	}
	refusesUnredacted(t, url, []byte(leaving["submit 1 --dry-run"]), inputs)
}

// refusesUnredacted posts the redacted submission, cleared of the run's
// command and options (where the inputs stand, redacted), with each input
// put back in its note and in a warning of its run: the site must take the
// cleared one and refuse each other.
func refusesUnredacted(t *testing.T, url string, dry []byte, inputs []secretInput) {
	t.Helper()
	post := func(note string, warnings ...any) (int, string) {
		var sub map[string]any
		if err := json.Unmarshal(dry, &sub); err != nil {
			t.Fatalf("the dry run's submission: %v", err)
		}
		sub["note"] = note
		run := sub["runs"].([]any)[0].(map[string]any)
		run["command"] = []any{"dbmark", "run", "tpcb"}
		run["workload"].(map[string]any)["options"] = map[string]any{}
		run["warnings"] = warnings
		b, _ := json.Marshal(sub)
		res, err := http.Post(url+"/api/v1/results", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	if code, body := post("cleared"); code != http.StatusOK && code != http.StatusCreated {
		t.Fatalf("the site refuses the cleared submission: %d %s", code, body)
	}
	for _, in := range inputs {
		if code, body := post("see "+in.in, in.in); code != http.StatusBadRequest || !strings.Contains(body, "personal data") {
			t.Errorf("the site took a submission holding %q: %d %s", in.in, code, body)
		}
	}
}

// storeFiles is every byte of the results store's files under dir (the
// database, its journal and write-ahead log).
func storeFiles(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(filepath.Base(p), ".db") {
			return err
		}
		data, err := os.ReadFile(p)
		b.Write(data)
		return err
	})
	if err != nil || b.Len() == 0 {
		t.Fatalf("read the store under %s: %v (%d bytes)", dir, err, b.Len())
	}
	return b.String()
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func merged(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

package cli_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/testsrv"
)

// pgExec runs sql on the server at raw.
func pgExec(t *testing.T, raw string, sqls ...string) {
	t.Helper()
	c := connectTo(t, postgres.Open, raw)
	for _, sql := range sqls {
		if err := c.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
}

// A reproduction on a server configured otherwise than the original's
// names the settings that differ before it runs, says after it which may
// explain its ratio, and with --apply-settings runs with the original's
// values and puts the server's own back afterwards.
func TestReproduceComparesServerSettings(t *testing.T) {
	srv := testsrv.Start(t, testsrv.Postgres)
	home(t)
	ctx := context.Background()
	site, _ := serve(t)
	data := []string{"--target", srv.TCP, "--tables", "1", "--table-size", "1000"}
	prepared(t, "oltp_point_select", data...)
	orig := pgSetting(t, srv, "work_mem")
	if o := dbmark(t, ctx, append([]string{"run", "oltp_point_select", "--events", "300", "--time", "0"}, data...)...); o.code != 0 {
		t.Fatalf("run: exit %d: %s", o.code, o.stderr)
	}
	sub := dbmark(t, ctx, "submit", "1", "--server", site)
	if sub.code != 0 {
		t.Fatalf("submit: exit %d: %s\n%s", sub.code, sub.stderr, dbmark(t, ctx, "results", "export", "1").stdout)
	}
	link := strings.TrimSpace(sub.stdout)

	// This server now has another work_mem than the published run's.
	pgExec(t, srv.TCP, "ALTER SYSTEM SET work_mem = '64MB'", "SELECT pg_reload_conf()")
	t.Cleanup(func() { pgExec(t, srv.TCP, "ALTER SYSTEM RESET work_mem", "SELECT pg_reload_conf()") })
	here := pgSetting(t, srv, "work_mem")

	rep := dbmark(t, ctx, "reproduce", link, "--target", srv.TCP)
	if rep.code != 0 {
		t.Fatalf("reproduce: exit %d\n%s\n%s", rep.code, rep.stdout, rep.stderr)
	}
	for _, want := range []string{
		`(?m)^engine settings that differ from the original's \(here -> original\):$`,
		`(?m)^  work_mem: 65536 -> 4096  \(a size that matters for performance\)$`,
		`(?m)^the reproduction: \d+\.\d\dx the original's tps \(`,
		`(?m)^publish it with: dbmark submit 2 --server `,
	} {
		if !regexp.MustCompile(want).MatchString(rep.stdout) {
			t.Errorf("reproduce's output lacks %s:\n%s", want, rep.stdout)
		}
	}

	app := dbmark(t, ctx, "reproduce", link, "--target", srv.TCP, "--apply-settings")
	if app.code != 0 {
		t.Fatalf("reproduce --apply-settings: exit %d\n%s\n%s", app.code, app.stdout, app.stderr)
	}
	if !strings.Contains(app.stdout, "--server-set=work_mem=4096") || !strings.Contains(app.stdout, "set for the run (--apply-settings)") {
		t.Errorf("--apply-settings did not set the original's work_mem:\n%s", app.stdout)
	}
	show := dbmark(t, ctx, "results", "export", "3")
	if !strings.Contains(show.stdout, `"server.work_mem": "4096"`) {
		t.Errorf("the reproduction with the original's settings does not record them:\n%.2000s", show.stdout)
	}
	if got := pgSetting(t, srv, "work_mem"); got != here {
		t.Errorf("work_mem is %s after the reproduction, was %s here (the original's: %s)", got, here, orig)
	}
}

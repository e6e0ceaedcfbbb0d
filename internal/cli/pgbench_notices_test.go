package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPgbenchNoticesAndTrace: the server's notices on stderr as libpq
// prints them (pgbench -i's for the tables it drops, a script's RAISE
// with its DETAIL and HINT, no CONTEXT), with a secret of the command line
// masked; -d's lines for a prepared statement; and dbmark's own "run tpcb
// -i", which initializes as pgbench -i does, or refuses a run option in
// one line.
func TestPgbenchNoticesAndTrace(t *testing.T) {
	home(t)
	pgEnv(t)
	ctx := context.Background()
	admin := connect(t, os.Getenv("DBMARK_TEST_POSTGRES"))
	const db = "dbmark_notices"
	for _, s := range []string{"DROP DATABASE IF EXISTS " + db + " WITH (FORCE)", "CREATE DATABASE " + db} {
		if err := admin.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)") })
	t.Setenv("PGDATABASE", db)

	o := dbmark(t, ctx, "pgbench", "-i", "-q")
	want := "dropping old tables...\n" +
		"NOTICE:  table \"pgbench_accounts\" does not exist, skipping\nNOTICE:  table \"pgbench_branches\" does not exist, skipping\n" +
		"NOTICE:  table \"pgbench_history\" does not exist, skipping\nNOTICE:  table \"pgbench_tellers\" does not exist, skipping\n" +
		"creating tables...\n"
	if o.code != 0 || !strings.HasPrefix(o.stderr, want) {
		t.Fatalf("pgbench -i on an empty database: exit %d, stderr:\n%s\nwant it to start:\n%s", o.code, o.stderr, want)
	}

	script := filepath.Join(t.TempDir(), "notice.sql")
	body := "DO $$ BEGIN RAISE NOTICE 'hello %', 1 USING DETAIL = 'token hunter2xyzzy', HINT = 'a hint'; RAISE WARNING 'careful'; END $$;\n"
	if err := os.WriteFile(script, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	o = dbmark(t, ctx, "pgbench", "-n", "-t", "1", "-D", "password=hunter2xyzzy", "-f", script, "--no-store")
	want = "NOTICE:  hello 1\nDETAIL:  token xxxxx\nHINT:  a hint\nWARNING:  careful\n"
	if o.code != 0 || o.stderr != want {
		t.Errorf("a script's notices: exit %d, stderr %q, want %q", o.code, o.stderr, want)
	}

	o = dbmark(t, ctx, "pgbench", "-d", "-n", "-t", "2", "-S", "-M", "prepared", "--no-store")
	want = "pgbench: client 0 executing \\set aid\npgbench: client 0 preparing P_0\npgbench: client 0 sending P_0\n" +
		"pgbench: client 0 receiving\npgbench: client 0 receiving\npgbench: client 0 executing script \"<builtin: select only>\"\n" +
		"pgbench: client 0 executing \\set aid\npgbench: client 0 sending P_0\npgbench: client 0 receiving\npgbench: client 0 receiving\n"
	if o.code != 0 || !strings.Contains(o.stderr, want) {
		t.Errorf("-d -M prepared: exit %d, stderr:\n%s\nwant it to hold:\n%s", o.code, o.stderr, want)
	}

	// dbmark's own command: -i is the prepare.
	o = dbmark(t, ctx, "run", "tpcb", "-i", "-s", "1", "--foreign-keys")
	if o.code != 0 || !strings.Contains(o.stdout, "prepared tpcb on ") || !strings.Contains(o.stderr, "creating foreign keys...") {
		t.Errorf("run tpcb -i: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if o = dbmark(t, ctx, "check", "tpcb"); o.code != 0 {
		t.Errorf("check tpcb after run tpcb -i: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	oneLineError(t, dbmark(t, ctx, "run", "tpcb", "-i", "-T", "5"), "-T is an option of the run (leave out -i to run)")
}

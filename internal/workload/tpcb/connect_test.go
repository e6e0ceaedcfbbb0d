package tpcb_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/workload/workloadtest"
	"github.com/jackc/pgx/v5"
)

// TestConnectKeepsGset: under -C (a new connection per transaction) a
// script still stores a row into variables with \gset, on every engine,
// and on every new connection after the first.
func TestConnectKeepsGset(t *testing.T) {
	for name, tg := range engines(t) {
		t.Run(name, func(t *testing.T) {
			dir := home(t)
			f := filepath.Join(dir, "gset.sql")
			os.WriteFile(f, []byte("SELECT 7 AS x, :client_id + 1 AS y \\gset\n"+
				"\\if :x != 7 or :y != :client_id + 1\n\\set fail 1 / 0\n\\endif\n"), 0o644)
			o := dbmark(t, "run", "tpcb", "--target", tg, "-C", "-n", "-f", f, "-c", "2", "-t", "3", "--no-store", "-q")
			if o.code != 0 || !strings.Contains(o.stdout, "number of transactions actually processed: 6/6") {
				t.Fatalf("-C with \\gset: exit %d\n%s%s", o.code, o.stdout, o.stderr)
			}
		})
	}
}

// TestConnectKeepsProtocol: under -C on PostgreSQL, -M simple pastes the
// variables into the SQL text (the script's SQL works only so) and
// refuses a pipeline, as pgbench does; -M prepared prepares on the server
// and -M extended does not.
func TestConnectKeepsProtocol(t *testing.T) {
	tg := pgTarget(t)
	dir := home(t)
	simple := filepath.Join(dir, "simple.sql")
	// As a parameter :expr is the text '2+3'; pasted in it is 5.
	os.WriteFile(simple, []byte("SELECT :expr AS v \\gset\n\\if :v != 5\n\\set fail 1 / 0\n\\endif\n"), 0o644)
	o := dbmark(t, "run", "tpcb", "--target", tg, "-C", "-n", "-M", "simple", "-D", "expr=2+3", "-f", simple, "-c", "2", "-t", "3", "--no-store", "-q")
	if o.code != 0 || !strings.Contains(o.stdout, "number of transactions actually processed: 6/6") {
		t.Errorf("-C -M simple: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}

	pipe := filepath.Join(dir, "pipe.sql")
	os.WriteFile(pipe, []byte("\\startpipeline\nSELECT 1;\n\\endpipeline\n"), 0o644)
	o = dbmark(t, "run", "tpcb", "--target", tg, "-C", "-n", "-M", "simple", "-f", pipe, "-t", "1", "--no-store", "-q")
	if o.code == 0 || !strings.Contains(o.stderr, "cannot use pipeline mode with the simple query protocol") {
		t.Errorf("-C -M simple with a pipeline: exit %d, want its refusal\n%s%s", o.code, o.stdout, o.stderr)
	}

	prep := filepath.Join(dir, "prepared.sql")
	os.WriteFile(prep, []byte("SELECT count(*) AS n FROM pg_prepared_statements \\gset\n"+
		"\\if :mode = 1 and :n = 0 or :mode = 0 and :n > 0\n\\set fail 1 / 0\n\\endif\n"), 0o644)
	for mode, named := range map[string]string{"prepared": "1", "extended": "0"} {
		o := dbmark(t, "run", "tpcb", "--target", tg, "-C", "-n", "-M", mode, "-D", "mode="+named, "-f", prep, "-c", "2", "-t", "3", "--no-store", "-q")
		if o.code != 0 || !strings.Contains(o.stdout, "number of transactions actually processed: 6/6") {
			t.Errorf("-C -M %s: exit %d\n%s%s", mode, o.code, o.stdout, o.stderr)
		}
	}
}

// TestConnectKeepsPipeline: under -C on PostgreSQL, the statements
// between \startpipeline and \endpipeline are pipelined, so those before
// a sync share one implicit transaction, and they commit, in -M extended
// and -M prepared.
func TestConnectKeepsPipeline(t *testing.T) {
	tg := pgTarget(t)
	dir := home(t)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("DROP TABLE IF EXISTS dbmark_connect_pipe")
	exec("CREATE TABLE dbmark_connect_pipe (client int, tx bigint)")
	t.Cleanup(func() { c.Exec(context.Background(), "DROP TABLE IF EXISTS dbmark_connect_pipe") })

	f := filepath.Join(dir, "pipe.sql")
	ins := "INSERT INTO dbmark_connect_pipe (client, tx) VALUES (:client_id, txid_current());\n"
	os.WriteFile(f, []byte("\\startpipeline\n"+ins+ins+"\\syncpipeline\n"+ins+ins+"\\endpipeline\n"), 0o644)
	for _, mode := range []string{"extended", "prepared"} {
		exec("TRUNCATE dbmark_connect_pipe")
		o := dbmark(t, "run", "tpcb", "--target", tg, "-C", "-n", "-M", mode, "-f", f, "-c", "2", "-t", "3", "--no-store", "-q")
		if o.code != 0 || !strings.Contains(o.stdout, "number of transactions actually processed: 6/6") {
			t.Fatalf("-C -M %s with a pipeline: exit %d\n%s%s", mode, o.code, o.stdout, o.stderr)
		}
		var rows, txs int
		if err := c.QueryRow(ctx, "SELECT count(*), count(DISTINCT tx) FROM dbmark_connect_pipe").Scan(&rows, &txs); err != nil {
			t.Fatal(err)
		}
		// 2 clients x 3 transactions x 2 syncs x 2 rows.
		if rows != 24 || txs != 12 {
			t.Fatalf("-C -M %s: %d rows committed in %d transactions, want 24 in 12 (two per sync)", mode, rows, txs)
		}
	}
}

// pgTarget is the tests' PostgreSQL database, or skips the test.
func pgTarget(t *testing.T) string {
	t.Helper()
	raw := os.Getenv("DBMARK_TEST_POSTGRES")
	if raw == "" {
		t.Skip("DBMARK_TEST_POSTGRES is not set")
	}
	return workloadtest.PostgresDB(t, raw, testDB)
}

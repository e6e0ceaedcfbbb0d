package script

import (
	"bytes"
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/targettest"
)

// These tests run scripts whose SQL behaves differently in pgbench's -M
// modes (variables pasted into the text or sent as parameters, pipelines)
// with pgbench and with this package on the same PostgreSQL database, and
// compare what the scripts saw (debug() lines), the server's errors and
// what they left in the tables.

const modesDB = "dbmark_script"

var pgModes = []string{postgres.ModeSimple, postgres.ModeExtended, postgres.ModePrepared}

// scriptDB returns the URL of modesDB, creating the database if missing.
func scriptDB(t *testing.T) string {
	t.Helper()
	_, raw := pgbench(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	c := pgConn(t, u.String(), postgres.ModeSimple)
	if err := c.Exec(context.Background(), "CREATE DATABASE "+modesDB); err != nil && !strings.Contains(err.Error(), "exists") {
		t.Fatalf("create database: %v", err)
	}
	u.Path = "/" + modesDB
	return u.String()
}

func pgConn(t *testing.T, raw, mode string) target.Conn {
	c, _ := pgConnDialect(t, raw, mode)
	return c
}

func pgConnDialect(t *testing.T, raw, mode string) (target.Conn, target.Dialect) {
	t.Helper()
	tg, c := targettest.Dial(t, postgres.Open, raw, target.Options{PGMode: mode})
	return c, tg.Dialect()
}

// runOn runs script text once as client 0 on a new connection in mode
// and returns its debug() lines and error.
func runOn(t *testing.T, db, mode, name, text string, vars map[string]string) ([]string, error) {
	t.Helper()
	s, err := Parse(name, text)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	var dbg bytes.Buffer
	conn, d := pgConnDialect(t, db, mode)
	c, err := NewClient(&Shared{Scale: 1, Clients: 1, Vars: vars, Debug: &dbg}, 0, conn, d)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Run(context.Background(), s, nil)
	return debugLines(dbg.String()), err
}

var (
	pgbenchSQLError = regexp.MustCompile(`(?m)ERROR:  (.*)$`)
	stmtName        = regexp.MustCompile(`statement "[^"]*"`)
)

// serverError is pgbench's server error message, or "" if none, with
// prepared statement names (which differ) removed.
func serverError(out string) string {
	m := pgbenchSQLError.FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return stmtName.ReplaceAllString(m[1], "statement")
}

// compareModes runs text in every mode with pgbench and here, and checks
// that both print the same debug() lines and fail with the same server
// error or client message; want holds, per mode, what pgbench must do, so
// that the test also says what the case is about.
func compareModes(t *testing.T, db, name, text string, vars map[string]string, want map[string]string) {
	t.Helper()
	var dargs []string
	for k, v := range vars {
		dargs = append(dargs, "-D", k+"="+v)
	}
	for _, mode := range pgModes {
		out := runPgbenchAt(t, db, name, text, append([]string{"-t", "1", "-M", mode}, dargs...)...)
		wantLines := debugLines(out)
		got, err := runOn(t, db, mode, name, text, vars)
		pgErr := serverError(out)
		if pgErr == "" && strings.Contains(out, "aborted") {
			pgErr = out[strings.LastIndex(out[:strings.Index(out, "aborted")], "\n")+1:]
			pgErr = strings.TrimSpace(pgErr[strings.Index(pgErr, ";")+1:])
			pgErr = strings.SplitN(pgErr, "\n", 2)[0]
		}
		summary := strings.Join(wantLines, "|")
		if pgErr != "" {
			summary = "error: " + pgErr
		}
		if w := want[mode]; !strings.Contains(summary, w) {
			t.Errorf("%s -M %s: pgbench gave %q; the test expects %q", name, mode, summary, w)
		}
		if strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
			t.Errorf("%s -M %s: debug lines\n  pgbench: %q\n  dbmark:  %q", name, mode, wantLines, got)
		}
		switch {
		case pgErr == "" && err != nil:
			t.Errorf("%s -M %s: dbmark failed (%v); pgbench did not", name, mode, err)
		case pgErr != "" && err == nil:
			t.Errorf("%s -M %s: pgbench failed (%s); dbmark did not", name, mode, pgErr)
		case pgErr != "" && !strings.Contains(stmtName.ReplaceAllString(err.Error(), "statement"), pgErr):
			t.Errorf("%s -M %s: dbmark error %q; pgbench's %q", name, mode, err, pgErr)
		}
	}
}

func TestVariablesInSQLMatchPgbench(t *testing.T) {
	db := scriptDB(t)
	cases := []struct {
		name, text string
		vars       map[string]string
		want       map[string]string // per mode
	}{
		{"quoted.sql", "\\set i 5\nSELECT length(':i') AS q \\gset\n\\set c debug(:q)\n", nil, map[string]string{
			"simple": "int 1", "extended": "bind message supplies 1 parameters", "prepared": "bind message supplies 1 parameters"}},
		{"undefined.sql", "SELECT (:nosuch::text IS NULL)::int AS u \\gset\n\\set b debug(:u)\n", nil, map[string]string{
			"simple": `syntax error at or near ":"`, "extended": "int 1", "prepared": "int 1"}},
		{"table.sql", "CREATE TEMP TABLE :tbl (x int);\nINSERT INTO :tbl VALUES (1), (2);\nSELECT count(*) AS n FROM :tbl \\gset\n\\set c debug(:n)\n",
			map[string]string{"tbl": "dbm_vars"}, map[string]string{
				"simple": "int 2", "extended": `syntax error at or near "$1"`, "prepared": `syntax error at or near "$1"`}},
		{"casts.sql", "\\set i 5\nSELECT :i::int + 1 AS a, length('x::y') AS b, \\:i AS c, :i2::int AS d \\gset\n\\set x debug(:a + :b * 10 + :c * 100)\n\\set y debug(:d)\n",
			map[string]string{"i2": "7"}, map[string]string{"simple": "int 546", "extended": "int 546", "prepared": "int 546"}},
		{"null.sql", "\\set n null\nSELECT (:n::text IS NULL)::int AS a \\gset\n\\set x debug(:a)\n", nil, map[string]string{
			"simple": "int 1", "extended": "int 0", "prepared": "int 0"}},
		{"comment.sql", "\\set i 5\nSELECT 1 AS a -- :i\n\\gset\n\\set x debug(:a)\n", nil, map[string]string{
			"simple": "int 1", "extended": "bind message supplies 1 parameters", "prepared": "bind message supplies 1 parameters"}},
	}
	for _, tc := range cases {
		compareModes(t, db, tc.name, tc.text, tc.vars, tc.want)
	}
}

func TestPipelinesMatchPgbench(t *testing.T) {
	db := scriptDB(t)
	ctx := context.Background()
	admin := pgConn(t, db, postgres.ModeSimple)
	for _, q := range []string{"DROP TABLE IF EXISTS script_pipe", "CREATE TABLE script_pipe (id int PRIMARY KEY, v bigint)"} {
		if err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	table := func() string {
		t.Helper()
		v, _, err := admin.QueryRow(ctx, "SELECT coalesce(string_agg(id || '=' || v, ',' ORDER BY id), '') FROM script_pipe")
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.Exec(ctx, "TRUNCATE script_pipe"); err != nil {
			t.Fatal(err)
		}
		return v
	}
	pipelined := `\set a 1
\startpipeline
INSERT INTO script_pipe VALUES (:a, :a * 10);
INSERT INTO script_pipe VALUES (:a + 1, 20);
UPDATE script_pipe SET v = v + 1 WHERE id = :a;
\endpipeline
SELECT sum(v) AS s, count(*) AS n FROM script_pipe \gset
\set x debug(:s * 100 + :n)
`
	plain := strings.NewReplacer("\\startpipeline\n", "", "\\endpipeline\n", "").Replace(pipelined)
	for _, mode := range []string{postgres.ModeExtended, postgres.ModePrepared} {
		want := debugLines(runPgbenchAt(t, db, "pipe.sql", pipelined, "-t", "1", "-M", mode))
		wantRows := table()
		for i, text := range []string{pipelined, plain} {
			got, err := runOn(t, db, mode, "pipe.sql", text, nil)
			if i == 1 && len(got) == 1 { // two commands fewer
				got[0] = strings.Replace(got[0], "command=6", "command=8", 1)
			}
			if err != nil || strings.Join(got, "|") != strings.Join(want, "|") || len(want) != 1 {
				t.Errorf("-M %s: dbmark %q, %v; pgbench %q", mode, got, err, want)
			}
			if rows := table(); rows != wantRows || rows != "1=11,2=20" {
				t.Errorf("-M %s: rows %q; pgbench left %q", mode, rows, wantRows)
			}
		}

		// One implicit transaction, so one Sync: both statements see the
		// same transaction id, which two round trips would not.
		xid := "\\startpipeline\nINSERT INTO script_pipe VALUES (1, pg_current_xact_id()::text::bigint);\nINSERT INTO script_pipe VALUES (2, pg_current_xact_id()::text::bigint);\n\\endpipeline\n"
		sameXact := func() string {
			v, _, err := admin.QueryRow(ctx, "SELECT count(DISTINCT v) FROM script_pipe")
			if err != nil {
				t.Fatal(err)
			}
			table()
			return v
		}
		runPgbenchAt(t, db, "xid.sql", xid, "-t", "1", "-M", mode)
		if n := sameXact(); n != "1" {
			t.Fatalf("-M %s: pgbench's pipeline ran in %s transactions; the test expects 1", mode, n)
		}
		if _, err := runOn(t, db, mode, "xid.sql", xid, nil); err != nil {
			t.Fatal(err)
		}
		if n := sameXact(); n != "1" {
			t.Errorf("-M %s: dbmark's pipeline ran in %s transactions, want 1 (one Sync)", mode, n)
		}
		if _, err := runOn(t, db, mode, "xid.sql", strings.NewReplacer("\\startpipeline\n", "", "\\endpipeline\n", "").Replace(xid), nil); err != nil {
			t.Fatal(err)
		}
		if n := sameXact(); n != "2" {
			t.Errorf("-M %s: without a pipeline the inserts ran in %s transactions, want 2", mode, n)
		}

		// An error aborts the client and rolls back the pipeline's
		// implicit transaction; the error names the failing statement.
		failing := "\\startpipeline\nINSERT INTO script_pipe VALUES (1, 1);\nSELECT 1/0;\nINSERT INTO script_pipe VALUES (2, 2);\n\\endpipeline\n"
		out := runPgbenchAt(t, db, "fail.sql", failing, "-t", "1", "-M", mode)
		if !strings.Contains(out, "division by zero") || table() != "" {
			t.Fatalf("-M %s: pgbench on a failing pipeline: %s", mode, out)
		}
		_, err := runOn(t, db, mode, "fail.sql", failing, nil)
		if err == nil || !strings.Contains(err.Error(), "division by zero") || !strings.Contains(err.Error(), "line 3") {
			t.Errorf("-M %s: failing pipeline: %v; want division by zero at line 3", mode, err)
		}
		if info := postgres.Classify(err); info.Code != "22012" {
			t.Errorf("-M %s: Classify = %v %q; want 22012", mode, info.Class, info.Code)
		}
		if rows := table(); rows != "" {
			t.Errorf("-M %s: a failed pipeline left rows %q", mode, rows)
		}

		// \syncpipeline (pgbench 17) ends an implicit transaction: the
		// error rolls back only its own.
		synced := "\\startpipeline\nINSERT INTO script_pipe VALUES (1, 1);\n\\syncpipeline\nSELECT 1/0;\nINSERT INTO script_pipe VALUES (2, 2);\n\\syncpipeline\nINSERT INTO script_pipe VALUES (3, 3);\n\\endpipeline\n"
		if _, err := runOn(t, db, mode, "sync.sql", synced, nil); err == nil || !strings.Contains(err.Error(), "line 4") {
			t.Errorf("-M %s: synced pipeline: %v; want the error of line 4", mode, err)
		}
		if rows := table(); rows != "1=1,3=3" {
			t.Errorf("-M %s: synced pipeline left rows %q; want 1=1,3=3", mode, rows)
		}

		// An error of the script's own inside a pipeline rolls back what
		// was not synced, as pgbench's abort does.
		if _, err := runOn(t, db, mode, "abort.sql", "\\startpipeline\nINSERT INTO script_pipe VALUES (1, 1);\n\\set x 1/0\n\\endpipeline\n", nil); err == nil {
			t.Errorf("-M %s: division by zero in \\set inside a pipeline succeeded", mode)
		}
		if rows := table(); rows != "" {
			t.Errorf("-M %s: an aborted pipeline left rows %q", mode, rows)
		}
	}

	// What pgbench refuses, dbmark refuses with the same words.
	for _, tc := range []struct{ name, text, mode, msg string }{
		{"simple.sql", "\\startpipeline\nSELECT 1;\n\\endpipeline\n", "simple", "cannot use pipeline mode with the simple query protocol"},
		{"gset.sql", "\\startpipeline\nSELECT 1 AS a \\gset\n\\endpipeline\n", "extended", `\gset is not allowed in pipeline mode`},
		{"aset.sql", "\\startpipeline\nSELECT 1 AS a \\aset\n\\endpipeline\n", "prepared", `\aset is not allowed in pipeline mode`},
		{"nested.sql", "\\startpipeline\n\\startpipeline\n\\endpipeline\n", "extended", "already in pipeline mode"},
		{"noend.sql", "\\endpipeline\n", "extended", "not in pipeline mode"},
		{"open.sql", "\\startpipeline\nSELECT 1;\n", "extended", "end of script reached with pipeline open"},
	} {
		out := runPgbenchAt(t, db, tc.name, tc.text, "-t", "1", "-M", tc.mode)
		if !strings.Contains(out, tc.msg) {
			t.Errorf("%s: pgbench said %q; the test expects %q", tc.name, out, tc.msg)
		}
		_, err := runOn(t, db, tc.mode, tc.name, tc.text, nil)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s -M %s: dbmark %v; want %q", tc.name, tc.mode, err, tc.msg)
		}
	}
}

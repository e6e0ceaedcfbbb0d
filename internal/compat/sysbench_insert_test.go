package compat

import (
	"context"
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dbmark/dbmark/internal/testsrv"
)

// TestSysbenchInsertStatementMariaDB reads, in the general log of a private
// MariaDB server (the shared one's log is not the test's to switch on), the
// INSERTs oltp_insert sends with each tool, with --auto_inc on and off, and
// requires the same statements up to their values.
func TestSysbenchInsertStatementMariaDB(t *testing.T) {
	if _, err := sysbenchPath(); err != nil {
		t.Skipf("sysbench not found (%v): install the sysbench package to run the compatibility tests", err)
	}
	t.Setenv("DBMARK_HOME", t.TempDir())
	srv := testsrv.Start(t, testsrv.MariaDB)
	u, err := url.Parse(srv.TCP)
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := u.User.Password()
	db := dbOf(t, srv.TCP)
	e := &engine{name: "MariaDB (private)", target: srv.TCP,
		sysbench: []string{"--db-driver=mysql", "--mysql-host=" + u.Hostname(), "--mysql-port=" + u.Port(),
			"--mysql-user=" + u.User.Username(), "--mysql-password=" + pass, "--mysql-db=" + db}}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = u.User.Username(), pass, "tcp", net.JoinHostPort(u.Hostname(), u.Port()), db
	ctx := t.Context()
	c, err := openSQL(ctx, "mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mustExec(t, c, "SET GLOBAL log_output = 'TABLE'")
	mustExec(t, c, "SET GLOBAL general_log = ON")

	sizes := []string{"--tables=1", "--table-size=100"}
	sysbench(t, ctx, e, "oltp_insert", append(sizes, "prepare")...)
	for _, autoInc := range []string{"on", "off"} {
		t.Run("auto_inc="+autoInc, func(t *testing.T) {
			args := append(slices.Clone(sizes), "--events=5", "--time=0", "--auto_inc="+autoInc)
			sb := loggedInserts(t, ctx, c, func() { sysbench(t, ctx, e, "oltp_insert", append(args, "run")...) })
			dbm := loggedInserts(t, ctx, c, func() {
				dbmark(t, ctx, append([]string{"run", "oltp_insert", "--target", e.target, "--no-store", "-q"}, args...)...)
			})
			t.Logf("sysbench sent %q", sb)
			t.Logf("dbmark sent   %q", dbm)
			if len(sb) != 1 || !slices.Equal(sb, dbm) {
				t.Errorf("--auto_inc=%s: sysbench sent %q, dbmark %q", autoInc, sb, dbm)
			}
		})
	}
}

// loggedInserts runs run and returns the INSERTs the general log recorded
// meanwhile, in the form of normalStatement.
func loggedInserts(t *testing.T, ctx context.Context, c conn, run func()) []string {
	t.Helper()
	mustExec(t, c, "TRUNCATE TABLE mysql.general_log")
	run()
	rows, err := c.Rows(ctx, `SELECT CONVERT(argument USING utf8mb4) FROM mysql.general_log
		WHERE command_type IN ('Query', 'Execute') AND argument LIKE 'INSERT INTO sbtest%'`)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[normalStatement(r[0])] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

var (
	reQuoted = regexp.MustCompile(`'[^']*'`)
	reTable  = regexp.MustCompile(`\bsbtest\d+\b`)
	reNumber = regexp.MustCompile(`-?\b\d+\b`)
)

// normalStatement is a statement with its strings made 'S', its tables
// sbtestN and its numbers N, except 0, kept (an id of 0 asks MySQL for the
// next AUTO_INCREMENT value). $1 becomes $N.
func normalStatement(s string) string {
	s = reQuoted.ReplaceAllString(s, "'S'")
	s = reTable.ReplaceAllString(s, "sbtestN")
	return reNumber.ReplaceAllStringFunc(s, func(n string) string {
		if n == "0" {
			return n
		}
		return "N"
	})
}

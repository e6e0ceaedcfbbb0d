package compat

import (
	"net"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbmark/dbmark/internal/testsrv"
)

// TestSysbenchHostListMariaDB runs one command line with a port list
// (--mysql-port=A,B) through sysbench and through dbmark sysbench, on two
// private MariaDB servers, with three threads: each server sees the same
// connections run the workload from both tools, two on the first and one
// on the second.
func TestSysbenchHostListMariaDB(t *testing.T) {
	if _, err := sysbenchPath(); err != nil {
		t.Skipf("sysbench not found (%v): install the sysbench package to run the compatibility tests", err)
	}
	t.Setenv("DBMARK_HOME", t.TempDir())
	srvs := []*testsrv.Server{testsrv.Start(t, testsrv.MariaDB), testsrv.Start(t, testsrv.MariaDB)}
	ctx := t.Context()
	var ports []string
	var conns []conn
	var host, user, pass, db string
	for _, srv := range srvs {
		u, err := url.Parse(srv.TCP)
		if err != nil {
			t.Fatal(err)
		}
		host, user, db = u.Hostname(), u.User.Username(), dbOf(t, srv.TCP)
		pass, _ = u.User.Password()
		ports = append(ports, u.Port())
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, pass, "tcp", net.JoinHostPort(host, u.Port()), db
		c, err := openSQL(ctx, "mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns = append(conns, c)
	}
	opts := func(ports string) []string {
		return []string{"--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + ports,
			"--mysql-user=" + user, "--mysql-password=" + pass, "--mysql-db=" + db}
	}
	size := []string{"--tables=1", "--table-size=1000"}
	for _, p := range ports { // each server its own data: two servers, not a cluster
		sysbench(t, ctx, &engine{sysbench: opts(p)}, "oltp_point_select", append(size, "prepare")...)
	}
	// clients are the connections each server saw run the workload's
	// statements during run: a connection caught at it in two polls or
	// more (a check before the run lasts too little to be caught twice).
	clients := func(run func()) []int {
		seen := []map[string]int{{}, {}}
		done := make(chan struct{})
		polled := make(chan struct{})
		go func() {
			defer close(polled)
			for {
				select {
				case <-done:
					return
				case <-time.After(10 * time.Millisecond):
				}
				for i, c := range conns {
					rows, err := c.Rows(ctx, "SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND INFO LIKE '%sbtest1%'")
					if err != nil {
						t.Errorf("processlist: %v", err)
						return
					}
					for _, r := range rows {
						seen[i][r[0]]++
					}
				}
			}
		}()
		run()
		close(done)
		<-polled
		out := make([]int, len(seen))
		for i, ids := range seen {
			for _, n := range ids {
				if n >= 2 {
					out[i]++
				}
			}
		}
		return out
	}
	args := append(append(opts(ports[0]+","+ports[1]), size...), "--threads=3", "--time=3", "run")
	sb := clients(func() { sysbench(t, ctx, &engine{}, "oltp_point_select", args...) })
	dbm := clients(func() { dbmark(t, ctx, append([]string{"sysbench", "oltp_point_select"}, args...)...) })
	t.Logf("connections each server saw run the workload: sysbench %v, dbmark %v", sb, dbm)
	if !slices.Equal(sb, []int{2, 1}) || !slices.Equal(dbm, sb) {
		t.Errorf("connections each server saw run the workload: sysbench %v, dbmark %v; want 2 on the first and 1 on the second from each", sb, dbm)
	}
}

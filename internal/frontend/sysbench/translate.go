package sysbench

import (
	"maps"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// endless is the time limit of sysbench's endless test (--time=0 with no
// event limit): dbmark needs a limit, and this one is never reached.
const endless = 100 * 365 * 24 * time.Hour

// DefaultMySQLSocket is where libmysqlclient on Debian looks for the
// server when the host is localhost and no socket is given.
const DefaultMySQLSocket = "/run/mysqld/mysqld.sock"

func (c *Command) set(name, value string) { c.Flags = append(c.Flags, [2]string{name, value}) }

// copyOpt passes sysbench's option on to dbmark's flag when given.
func (c *Command) copyOpt(sysbenchName, dbmarkName string) {
	if c.opts.given(sysbenchName) {
		c.set(dbmarkName, c.onOff(sysbenchName))
	}
}

// onOff is the option's value, a boolean's given bare as on.
func (c *Command) onOff(name string) string {
	if c.opts.bare[key(name)] {
		return "on"
	}
	return c.opts.v[key(name)]
}

// common passes the options every test shares.
func (c *Command) common() {
	c.set("threads", strconv.Itoa(c.Threads))
	limit := time.Duration(c.Time) * time.Second
	if c.Time == 0 && c.Events == 0 {
		limit = endless
	}
	c.set("time", limit.String())
	c.set("events", strconv.FormatInt(c.Events, 10))
	c.set("rate", strconv.Itoa(c.Rate))
	c.set("report-interval", strconv.Itoa(c.ReportInterval))
	if c.Seed != 0 {
		c.set("seed", strconv.Itoa(c.Seed))
	}
	p := c.Percentile
	if p == 0 {
		p = 95 // sysbench computes none: the lines print no figure
	}
	c.set("percentiles", strconv.Itoa(p))
}

// oltp builds the OLTP tests' options and target.
func (c *Command) oltp(topts []option) error {
	if c.Verb == "run" {
		c.common()
	} else {
		c.set("threads", strconv.Itoa(c.Threads))
		if c.Seed != 0 {
			c.set("seed", strconv.Itoa(c.Seed))
		}
	}
	if v := c.drv.variant; v != "" && c.opts.get(v, "") == "redshift" {
		c.Log.Printf(Fatal, "dbmark does not run sysbench's Redshift variant (--%s=redshift)", v)
		return &Exit{Code: 1}
	}
	for _, o := range topts {
		if o.name == "pgsql_variant" {
			continue
		}
		c.copyOpt(o.name, strings.ReplaceAll(o.name, "_", "-"))
	}
	for _, n := range []string{"rand-type", "rand-spec-iter", "rand-spec-pct", "rand-spec-res", "rand-pareto-h"} {
		c.copyOpt(n, n)
	}
	if c.Verb == "run" {
		c.copyOpt("db-ps-mode", "db-ps-mode")
		if c.Histogram {
			c.set("histogram", "on")
		}
		if c.drv.ignoreErrors != "" {
			c.copyOpt(c.drv.ignoreErrors, "ignore-errors")
		}
	}
	if c.drv.dryRun != "" && c.opts.flag(c.drv.dryRun, false) {
		c.Log.Printf(Fatal, "dbmark does not pretend to run statements (--%s): give it a server", c.drv.dryRun)
		return &Exit{Code: 1}
	}
	return nil
}

// Target is the database URL sysbench's driver options describe, with
// sysbench's defaults (localhost, user and database sbtest): the first of
// Targets.
func (c *Command) Target() string { return c.Targets()[0] }

// Targets are the servers sysbench's driver options describe, in the
// order sysbench hands them to its connections, each in turn: every port
// of the first host, then of the next (--mysql-host=h1,h2
// --mysql-port=p1,p2 is h1:p1, h1:p2, h2:p1, h2:p2), or each socket of
// --mysql-socket. dbmark reads --pgsql-host and --pgsql-port the same way
// (sysbench 1.0.20's pgsql driver hands its one host string to libpq,
// which takes a list as servers to try in turn, not to share).
func (c *Command) Targets() []string { return c.drv.targets(c.opts) }

// checkTargets refuses a port in a list that is not a port, before
// anything connects.
func (c *Command) checkTargets() error {
	for _, name := range []string{"mysql-port", "pgsql-port"} {
		for _, p := range list(c.opts.get(name, "")) {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				c.Log.Printf(Fatal, "Invalid value for --%s: '%s' is not a port (a number from 1 to 65535; several separated by commas)", name, p)
				return &Exit{Code: 1}
			}
		}
	}
	return nil
}

// list is a comma-separated option's items (none for "").
func list(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// pairs are the host and port of each server a host list and a port list
// make, in sysbench's order: each port of a host before the next host.
func pairs(hosts, ports string) [][2]string {
	var out [][2]string
	for _, h := range list(hosts) {
		for _, p := range list(ports) {
			out = append(out, [2]string{h, p})
		}
	}
	return out
}

// pgsqlTargets are the URLs of sysbench's pgsql options.
func pgsqlTargets(o *values) []string {
	var out []string
	for _, hp := range pairs(o.get("pgsql-host", "localhost"), o.get("pgsql-port", "5432")) {
		u := url.URL{Scheme: "postgres", Path: "/" + o.get("pgsql-db", "sbtest")}
		u.User = userinfo(o.get("pgsql-user", "sbtest"), o.get("pgsql-password", ""))
		if strings.HasPrefix(hp[0], "/") { // a socket directory, as libpq takes it
			u.RawQuery = url.Values{"host": {hp[0]}, "port": {hp[1]}}.Encode()
		} else {
			u.Host = net.JoinHostPort(hp[0], hp[1])
		}
		out = append(out, u.String())
	}
	return out
}

// mysqlTargets are the URLs of sysbench's mysql options: each socket of
// --mysql-socket, else each host and port.
func mysqlTargets(o *values) []string {
	q := url.Values{}
	if o.flag("mysql-ssl", false) {
		q.Set("tls", "skip-verify") // encrypted, as sysbench's without its certificate files
	}
	one := func(host, port, socket string) string {
		u := url.URL{Scheme: "mysql", Path: "/" + o.get("mysql-db", "sbtest")}
		u.User = userinfo(o.get("mysql-user", "sbtest"), o.get("mysql-password", ""))
		q := maps.Clone(q)
		if socket == "" && host == "localhost" {
			// libmysqlclient reaches localhost through its socket.
			if _, err := os.Stat(DefaultMySQLSocket); err == nil {
				socket = DefaultMySQLSocket
			}
		}
		if socket != "" {
			u.Host = "localhost"
			q.Set("socket", socket)
		} else {
			u.Host = net.JoinHostPort(host, port)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	var out []string
	if sockets := list(o.get("mysql-socket", "")); len(sockets) > 0 {
		for _, s := range sockets {
			out = append(out, one("localhost", "", s))
		}
		return out
	}
	for _, hp := range pairs(o.get("mysql-host", "localhost"), o.get("mysql-port", "3306")) {
		out = append(out, one(hp[0], hp[1], ""))
	}
	return out
}

func userinfo(user, password string) *url.Userinfo {
	if password == "" {
		return url.User(user)
	}
	return url.UserPassword(user, password)
}

// fileio builds fileio's options; its files are in the current directory,
// as sysbench's.
func (c *Command) fileio() error {
	if c.Verb == "run" {
		c.common()
	} else {
		c.set("threads", strconv.Itoa(c.Threads))
	}
	c.set("dir", ".")
	for _, p := range [][2]string{{"file-num", "file-num"}, {"file-block-size", "block-size"}, {"file-total-size", "file-total-size"},
		{"file-extra-flags", "file-extra-flags"}, {"file-fsync-freq", "fsync-freq"}, {"file-fsync-all", "fsync-all"},
		{"file-fsync-end", "fsync-end"}, {"file-fsync-mode", "fsync-mode"}, {"file-rw-ratio", "rw-ratio"}} {
		c.copyOpt(p[0], p[1])
	}
	if c.opts.given("file-total-size") { // sysbench's reading of the size, not dbmark's
		for i, f := range c.Flags {
			if f[0] == "file-total-size" {
				c.Flags[i][1] = strconv.FormatUint(sizeOf(c.opts.get("file-total-size", "2G")), 10)
			}
		}
	}
	if c.Verb != "run" {
		return nil
	}
	mode := c.opts.get("file-test-mode", "")
	switch mode {
	case "":
		c.Log.Printf(Fatal, "Missing required argument: --file-test-mode\n")
		c.printTestHelp(c.Log.W, fileioOptions)
		return &Exit{Code: 1}
	case "seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw":
		c.set("mode", mode)
	default:
		c.Log.Printf(Fatal, "Invalid IO operations mode: %s.", mode)
		return &Exit{Code: 1}
	}
	switch io := c.opts.get("file-io-mode", "sync"); io {
	case "sync":
	case "async":
		c.set("engine", "io_uring") // queued requests, through io_uring rather than libaio
		c.set("iodepth", c.opts.get("file-async-backlog", "128"))
	default:
		c.Log.Printf(Fatal, "dbmark does not run --file-io-mode=%s (it runs sync and async)", io)
		return &Exit{Code: 1}
	}
	if n := c.opts.get("file-merged-requests", "0"); n != "0" {
		c.Log.Printf(Fatal, "dbmark does not merge requests (--file-merged-requests=%s): leave it at 0", n)
		return &Exit{Code: 1}
	}
	return nil
}

// sizeOf reads a size as sysbench does: digits and an optional K, M, G or
// T (powers of 1024); 0 for an unknown suffix.
func sizeOf(s string) uint64 {
	var n uint64
	i := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + uint64(s[i]-'0')
	}
	if i == len(s) || i == 0 {
		return n
	}
	mult := strings.IndexByte("KMGT", strings.ToUpper(s[i : i+1])[0])
	if mult < 0 {
		return 0
	}
	for ; mult >= 0; mult-- {
		n *= 1024
	}
	return n
}

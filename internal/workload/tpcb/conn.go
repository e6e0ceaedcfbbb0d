package tpcb

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/dbmark/dbmark/internal/target"
)

// Args takes pgbench's database name, given after the options
// (workload.TargetFiller).
func (w *Workload) Args(args []string) error {
	switch {
	case len(args) > 1:
		return fmt.Errorf("too many command-line arguments (first is %q): give at most a database name", args[1])
	case len(args) == 1:
		w.opt.DBName = args[0]
	}
	return nil
}

// FillTarget fills in the target from pgbench's connection options, as
// PGHOST, PGPORT, PGUSER and PGDATABASE fill in what a connection string
// leaves out: with no --target they make a postgres:// one (what they do
// not say comes from those variables, PGPASSWORD and the defaults, as
// for pgbench); a --target that says otherwise is refused. With neither
// --target nor those options, a PG* variable that is set makes the
// target postgres:// too, as pgbench would connect.
func (w *Workload) FillTarget(raw string) (string, error) {
	o := &w.opt
	if o.Host == "" && o.Port == "" && o.User == "" && o.DBName == "" {
		if raw == "" && libpqEnvSet() {
			// pgbench's way: PG* variables alone name the server. A
			// user who set them for PostgreSQL never gets the embedded
			// SQLite database instead.
			return "postgres:///", nil
		}
		return raw, nil
	}
	if raw == "" {
		raw = "postgres://"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw, nil // the target's own parser says what is wrong
	}
	if !target.LibpqScheme(u.Scheme) {
		return "", fmt.Errorf("-h, -p, -U and a database name are PostgreSQL's connection options, and --target is a %s URL: leave them out, or give a postgres:// target", u.Scheme)
	}
	if o.Port != "" {
		if n, err := strconv.Atoi(o.Port); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("-p %q: invalid port (a number from 1 to 65535)", o.Port)
		}
	}
	q := u.Query()
	conflict := func(opt, v, have string) error {
		if have != "" && have != v {
			return fmt.Errorf("%s %s: --target says %s; give one or the other", opt, v, have)
		}
		return nil
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = q.Get("host")
	}
	if port == "" {
		port = q.Get("port")
	}
	if o.Host != "" {
		if err := conflict("-h", o.Host, host); err != nil {
			return "", err
		}
		host = o.Host
	}
	if o.Port != "" {
		if err := conflict("-p", o.Port, port); err != nil {
			return "", err
		}
		port = o.Port
	}
	switch {
	case strings.HasPrefix(host, "/") || host == "":
		// A socket directory (or none: PGHOST or the default) goes in
		// the query, as does a port without a host.
		u.Host = ""
		setQuery(q, "host", host)
		setQuery(q, "port", port)
	default:
		q.Del("host")
		q.Del("port")
		u.Host = host
		if port != "" {
			u.Host = net.JoinHostPort(host, port)
		}
	}
	if o.User != "" {
		if err := conflict("-U", o.User, u.User.Username()); err != nil {
			return "", err
		}
		if pw, ok := u.User.Password(); ok {
			u.User = url.UserPassword(o.User, pw)
		} else {
			u.User = url.User(o.User)
		}
	}
	if o.DBName != "" {
		if err := conflict("database name", o.DBName, strings.TrimPrefix(u.Path, "/")); err != nil {
			return "", err
		}
		u.Path = "/" + o.DBName
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func setQuery(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

// libpqEnvSet says whether a libpq variable that names the server, the
// user, the database or the password is set (pgbench's connection comes
// from them).
func libpqEnvSet() bool {
	for _, v := range strings.Fields("PGHOST PGHOSTADDR PGPORT PGUSER PGDATABASE PGPASSWORD PGSERVICE") {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}

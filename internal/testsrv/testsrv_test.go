package testsrv_test

import (
	"context"
	"database/sql"
	"net/url"
	"testing"
	"time"

	my "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbmark/dbmark/internal/testsrv"
)

// pgQuery runs q on raw and returns the first column of its first row.
func pgQuery(raw, q string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, raw)
	if err != nil {
		return "", err
	}
	defer c.Close(ctx)
	res, err := c.Exec(ctx, q).ReadAll()
	if err != nil {
		return "", err
	}
	if len(res) == 0 || len(res[0].Rows) == 0 {
		return "", nil
	}
	return string(res[0].Rows[0][0]), nil
}

func myQuery(raw, q string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	cfg := my.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.DBName = u.Path[1:]
	cfg.Net, cfg.Addr, cfg.Timeout = "tcp", u.Host, 5*time.Second
	if sock := u.Query().Get("socket"); sock != "" {
		cfg.Net, cfg.Addr = "unix", sock
	}
	if u.Query().Get("tls") != "" {
		cfg.TLSConfig = u.Query().Get("tls")
	}
	c, err := my.NewConnector(cfg)
	if err != nil {
		return "", err
	}
	db := sql.OpenDB(c)
	defer db.Close()
	var v string
	if err := db.QueryRow(q).Scan(&v); err != nil && err != sql.ErrNoRows {
		return "", err
	}
	return v, nil
}

// TestKillAndStart: each server answers on all three URLs (TLS in use on
// the TLS one), refuses connections once killed, and answers again with
// its data after Start.
func TestKillAndStart(t *testing.T) {
	for _, c := range []struct {
		name     string
		start    testsrv.Starter
		query    func(raw, q string) (string, error)
		tlsQuery string
		tlsWant  string
	}{
		{"postgres", testsrv.Postgres, pgQuery, "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()", "true"},
		{"mariadb", testsrv.MariaDB, myQuery, "SELECT VARIABLE_VALUE <> '' FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_cipher'", "1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := testsrv.Start(t, c.start)
			for _, raw := range []string{s.TCP, s.Socket, s.TLS} {
				if v, err := c.query(raw, "SELECT 1"); err != nil || v != "1" {
					t.Fatalf("%s: %q, %v", raw, v, err)
				}
			}
			if v, err := c.query(s.TLS, c.tlsQuery); err != nil || v != c.tlsWant {
				t.Fatalf("TLS in use on %s: %q, %v; want %s", s.TLS, v, err, c.tlsWant)
			}
			if _, err := c.query(s.TCP, "CREATE TABLE kept (id INTEGER)"); err != nil {
				t.Fatal(err)
			}
			// A frozen server answers nothing until it is thawed.
			thaw, err := s.Freeze()
			if err != nil {
				t.Fatal(err)
			}
			thawed := time.AfterFunc(time.Second, thaw)
			defer thawed.Stop()
			asked := time.Now()
			if v, err := c.query(s.TCP, "SELECT 1"); err != nil || v != "1" {
				t.Fatalf("after a freeze: %q, %v", v, err)
			}
			if waited := time.Since(asked); waited < 900*time.Millisecond {
				t.Errorf("a frozen server answered in %v", waited)
			}
			if err := s.Kill(); err != nil {
				t.Fatal(err)
			}
			if _, err := c.query(s.TCP, "SELECT 1"); err == nil {
				t.Fatal("a killed server answered")
			}
			start := time.Now()
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			t.Logf("restarted in %v", time.Since(start).Round(time.Millisecond))
			if v, err := c.query(s.Socket, "SELECT COUNT(*) FROM kept"); err != nil || v != "0" {
				t.Fatalf("after the restart: %q, %v; want the table kept, empty", v, err)
			}
		})
	}
}

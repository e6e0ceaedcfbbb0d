package testsrv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	my "github.com/go-sql-driver/mysql"
)

// mariaDBBins are mariadb-install-db and mariadbd: on $PATH, in
// $DBMARK_TEST_MY_BINDIR (set by scripts/testenv.sh env) or in Debian's
// places.
func mariaDBBins() (install, server string, err error) {
	find := func(name string) string {
		if d := os.Getenv("DBMARK_TEST_MY_BINDIR"); d != "" {
			if p := filepath.Join(d, name); isExec(p) {
				return p
			}
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, d := range []string{"/usr/sbin", "/usr/bin"} {
			if p := filepath.Join(d, name); isExec(p) {
				return p
			}
		}
		return ""
	}
	install, server = find("mariadb-install-db"), find("mariadbd")
	if install == "" || server == "" {
		return "", "", fmt.Errorf("%w: mariadb-install-db and mariadbd not found (install mariadb-server)", ErrUnavailable)
	}
	return install, server, nil
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// MariaDB initialises and starts a MariaDB server with a database dbmark
// and a user dbmark (password dbmark) that may do anything.
func MariaDB(ctx context.Context) (*Server, error) {
	install, server, err := mariaDBBins()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := tempDir()
	if err != nil {
		return nil, err
	}
	s, err := setUpMariaDB(ctx, install, server, dir, port)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("private MariaDB: %w", err)
	}
	return s, nil
}

func setUpMariaDB(ctx context.Context, install, server, dir string, port int) (*Server, error) {
	data, sock, log := filepath.Join(dir, "data"), filepath.Join(dir, "mysqld.sock"), filepath.Join(dir, "server.log")
	crt, key := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := writeCert(crt, key); err != nil {
		return nil, err
	}
	// A temporary directory of its own: servers bootstrapping at once in
	// a shared one collide on their temporary tables' names.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, err
	}
	root := os.Geteuid() == 0
	args := []string{"--no-defaults", "--datadir=" + data, "--tmpdir=" + tmp, "--auth-root-authentication-method=normal", "--skip-test-db"}
	if root {
		args = append(args, "--user=root")
	}
	ictx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	if out, err := exec.CommandContext(ictx, install, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mariadb-install-db: %v\n%s", err, out)
	}

	args = []string{"--no-defaults", "--datadir=" + data, "--tmpdir=" + tmp, "--port=" + strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--socket=" + sock, "--pid-file=" + filepath.Join(dir, "mysqld.pid"), "--log-error=" + log,
		"--skip-name-resolve", "--skip-log-bin", "--max-connections=60", "--innodb-buffer-pool-size=32M",
		"--innodb-flush-log-at-trx-commit=2", "--ssl-cert=" + crt, "--ssl-key=" + key}
	if root {
		args = append(args, "--user=root")
	}
	const user = "dbmark"
	s := &Server{
		Kind:   "mysql",
		TCP:    fmt.Sprintf("mysql://%s:%s@127.0.0.1:%d/%s", user, user, port, user),
		Socket: fmt.Sprintf("mysql://%s:%s@localhost/%s?socket=%s", user, user, user, sock),
		TLS:    fmt.Sprintf("mysql://%s:%s@127.0.0.1:%d/%s?tls=skip-verify", user, user, port, user),
		dir:    dir,
	}
	var (
		proc *os.Process
		done chan struct{}
	)
	s.boot = func() error {
		out, err := os.OpenFile(filepath.Join(dir, "mysqld.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer out.Close()
		cmd := exec.Command(server, args...)
		cmd.Stdout, cmd.Stderr = out, out
		// Its own session: a ^C to the test does not reach it first.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("mariadbd: %w", err)
		}
		proc, done = cmd.Process, make(chan struct{})
		go func(d chan struct{}) { _ = cmd.Wait(); close(d) }(done)
		alive := func() bool {
			select {
			case <-done:
				return false
			default:
				return true
			}
		}
		return waitFor(func() error { return myPing(sock) }, alive, log)
	}
	s.pid = func() (int, error) { return proc.Pid, nil }
	s.kill = func() error {
		if err := proc.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("killing mariadbd: %w", err)
		}
		select {
		case <-done:
			return nil
		case <-time.After(startWait):
			return fmt.Errorf("mariadbd (pid %d) still runs %v after SIGKILL", proc.Pid, startWait)
		}
	}
	if err := s.boot(); err != nil {
		if proc != nil {
			_ = s.kill()
		}
		return nil, err
	}
	s.up = true
	if err := myProvision(sock, user); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// myRoot opens root's database handle over the socket.
func myRoot(sock string) (*sql.DB, error) {
	cfg := my.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.Timeout = "root", "unix", sock, 5*time.Second
	c, err := my.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

func myPing(sock string) error {
	db, err := myRoot(sock)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, "SELECT 1")
	return err
}

func myProvision(sock, user string) error {
	db, err := myRoot(sock)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE DATABASE " + user,
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", user, user),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON *.* TO '%s'@'%%'", user),
	} {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

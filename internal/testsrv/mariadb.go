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
	"strings"
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
	dir, err := tempDir("")
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

	args = []string{"--datadir=" + data, "--tmpdir=" + tmp, "--port=" + strconv.Itoa(port), "--bind-address=127.0.0.1",
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
	script, err := writeMariaDBScript(dir, server, args)
	if err != nil {
		return nil, err
	}
	s.RestartCmd = "sh '" + script + "'"
	launched := filepath.Join(dir, "launched.pid")
	s.pid = func() (int, error) { return pidFromFile(launched) }
	s.ping = func() error { return myPing(sock) }
	mine := filepath.Join(dir, "my.cnf")
	// alive while starting: launched.pid names the start script's
	// background child, which runs the script's shell (its command line
	// names the script, in dir) until it execs mariadbd (whose command
	// line names my.cnf, in dir); on a loaded machine a check may come
	// between the two.
	alive := func() bool {
		pid, err := s.pid()
		return err == nil && running(pid, dir)
	}
	s.boot = func() error {
		bctx, cancel := context.WithTimeout(context.Background(), startWait)
		defer cancel()
		if out, err := exec.CommandContext(bctx, "sh", script).CombinedOutput(); err != nil {
			return fmt.Errorf("start mariadbd: %v: %s", err, out)
		}
		return waitFor(func() error { return myPing(sock) }, alive, log)
	}
	s.kill = func() error {
		pid, err := s.pid()
		if err != nil {
			return fmt.Errorf("killing mariadbd: %w", err)
		}
		if !running(pid, mine) {
			return nil
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("killing mariadbd: %w", err)
		}
		for deadline := time.Now().Add(startWait); running(pid, mine); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				return fmt.Errorf("mariadbd (pid %d) still runs %v after SIGKILL", pid, startWait)
			}
		}
		return nil
	}
	if err := s.boot(); err != nil {
		if alive() {
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

// mariaDBScript starts the server from its option file, after stopping
// the one running (a clean shutdown): the test's Start, and the restart
// command a test gives dbmark's --restart-cmd. MariaDB has no SET
// PERSIST, so, as a user's command would, it first writes each
// DBMARK_SET_NAME=VALUE of its environment into the option file.
const mariaDBScript = `#!/bin/sh
set -e
cd "$(dirname "$0")"
env | grep '^DBMARK_SET_' | while IFS='=' read -r name value; do
	name=${name#DBMARK_SET_}
	grep -v "^$name=" my.cnf >my.cnf.new || true
	echo "$name=$value" >>my.cnf.new
	mv my.cnf.new my.cnf
done
# alive PID: PID is this directory's server (not a pid reused since), not
# a zombie.
alive() {
	[ -d /proc/$1 ] && [ "$(sed 's/.*) //' /proc/$1/stat | cut -c1)" != Z ] &&
		tr '\0' ' ' </proc/$1/cmdline | grep -qF "$PWD/my.cnf"
}
if [ -s launched.pid ] && alive "$(cat launched.pid)"; then
	pid=$(cat launched.pid)
	kill "$pid"
	i=0
	while alive "$pid"; do
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "mariadbd $pid did not stop" >&2; exit 1; }
		sleep 0.1
	done
fi
setsid %s --defaults-file="$PWD/my.cnf" >>mysqld.out 2>&1 </dev/null &
echo $! >launched.pid
`

// writeMariaDBScript writes the server's options (args, each --name or
// --name=value) to my.cnf and the start script beside it.
func writeMariaDBScript(dir, server string, args []string) (string, error) {
	var cnf strings.Builder
	cnf.WriteString("[mariadbd]\n")
	for _, a := range args {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		name = strings.ReplaceAll(name, "-", "_")
		if ok {
			name += "=" + value
		}
		cnf.WriteString(name + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "my.cnf"), []byte(cnf.String()), 0o644); err != nil {
		return "", err
	}
	script := filepath.Join(dir, "start.sh")
	return script, os.WriteFile(script, []byte(fmt.Sprintf(mariaDBScript, "'"+server+"'")), 0o755)
}

// running says whether pid is a process that has not exited (a zombie
// whose parent has not reaped it yet has) and whose command line names
// mark: the server, not a process that took its pid since. An empty
// command line counts as a match: the kernel shows one while the process
// is inside execve (its new memory has no arguments yet), as the start
// script's child is twice, execing setsid and then mariadbd.
func running(pid int, mark string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) || b[i+2] == 'Z' {
		return false
	}
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && (len(cmd) == 0 || strings.Contains(string(cmd), mark))
}

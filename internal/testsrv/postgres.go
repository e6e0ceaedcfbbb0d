package testsrv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// pgBinDir is where initdb and pg_ctl are: $DBMARK_TEST_PG_BINDIR (set by
// scripts/testenv.sh env), `pg_config --bindir`, or the newest Debian
// install.
func pgBinDir() (string, error) {
	has := func(d string) bool {
		_, err1 := os.Stat(filepath.Join(d, "initdb"))
		_, err2 := os.Stat(filepath.Join(d, "pg_ctl"))
		return d != "" && err1 == nil && err2 == nil
	}
	if d := os.Getenv("DBMARK_TEST_PG_BINDIR"); has(d) {
		return d, nil
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if d := strings.TrimSpace(string(out)); has(d) {
			return d, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgMajor(dirs[i]) > pgMajor(dirs[j]) })
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: PostgreSQL's initdb and pg_ctl not found (set DBMARK_TEST_PG_BINDIR or install postgresql)", ErrUnavailable)
}

// pgMajor is the major version in a /usr/lib/postgresql/N/bin path.
func pgMajor(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// pgRunner runs PostgreSQL's programs as the user that owns the data:
// initdb and the server refuse to run as root, so under root they run as
// postgres.
type pgRunner struct {
	bin      string
	asUser   string // "" : the current user
	uid, gid int
}

func newPGRunner() (pgRunner, error) {
	bin, err := pgBinDir()
	if err != nil {
		return pgRunner{}, err
	}
	r := pgRunner{bin: bin, uid: -1, gid: -1}
	if os.Geteuid() != 0 {
		return r, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return r, fmt.Errorf("%w: running as root and there is no user postgres to run PostgreSQL as", ErrUnavailable)
	}
	if _, err := exec.LookPath("runuser"); err != nil {
		return r, fmt.Errorf("%w: running as root and runuser is missing", ErrUnavailable)
	}
	r.asUser = u.Username
	r.uid, _ = strconv.Atoi(u.Uid)
	r.gid, _ = strconv.Atoi(u.Gid)
	return r, nil
}

// run runs one of PostgreSQL's programs, its output going to log (a
// file: a pipe would be held open by the server pg_ctl starts).
func (r pgRunner) run(ctx context.Context, log string, prog string, args ...string) error {
	path := filepath.Join(r.bin, prog)
	if r.asUser != "" {
		args = append([]string{"-u", r.asUser, "--", path}, args...)
		path = "runuser"
	}
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v%s", prog, strings.Join(args, " "), err, tail(log))
	}
	return nil
}

// command is the shell command that runs prog as run would; the paths
// are a temporary directory's and PostgreSQL's, which need no quoting
// beyond single quotes.
func (r pgRunner) command(prog string, args ...string) string {
	words := []string{filepath.Join(r.bin, prog)}
	if r.asUser != "" {
		words = append([]string{"runuser", "-u", r.asUser, "--"}, words...)
	}
	quoted := make([]string, 0, len(words)+len(args))
	for _, w := range append(words, args...) {
		quoted = append(quoted, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
	}
	return strings.Join(quoted, " ")
}

// chown gives path to the user the programs run as.
func (r pgRunner) chown(paths ...string) error {
	if r.asUser == "" {
		return nil
	}
	for _, p := range paths {
		if err := os.Chown(p, r.uid, r.gid); err != nil {
			return err
		}
	}
	return nil
}

// Postgres initialises and starts a PostgreSQL server (user postgres, no
// password, database postgres).
func Postgres(ctx context.Context) (*Server, error) {
	return startPostgres(ctx, pgSetup{})
}

// PostgresAlsoOn is a Starter of Postgres listening on addr as well as on
// loopback, on the same port, and trusting clients from network (a
// CIDR): for a test whose clients reach it from network namespaces
// bridged to addr. The address must be on an interface before the
// server starts.
func PostgresAlsoOn(addr, network string) Starter {
	return func(ctx context.Context) (*Server, error) {
		return startPostgres(ctx, pgSetup{addr: addr, network: network})
	}
}

// PostgresOn is Postgres with its files (data, WAL, log) on d.
func PostgresOn(d *SlowDisk) Starter {
	return func(ctx context.Context) (*Server, error) { return startPostgres(ctx, pgSetup{parent: d.Dir}) }
}

// pgSetup says where a server's files go (a new directory under parent;
// the system's temporary directory when "") and the address it listens
// on besides 127.0.0.1, with the network it trusts there ("": none).
type pgSetup struct{ parent, addr, network string }

func startPostgres(ctx context.Context, also pgSetup) (*Server, error) {
	r, err := newPGRunner()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := tempDir(also.parent)
	if err != nil {
		return nil, err
	}
	s, err := setUpPostgres(ctx, r, dir, port, also)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("private PostgreSQL: %w", err)
	}
	return s, nil
}

func setUpPostgres(ctx context.Context, r pgRunner, dir string, port int, also pgSetup) (*Server, error) {
	data, sock, log := filepath.Join(dir, "data"), filepath.Join(dir, "sock"), filepath.Join(dir, "server.log")
	for _, d := range []string{data, sock} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		return nil, err
	}
	if err := r.chown(data, sock, log); err != nil {
		return nil, err
	}
	ictx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	if err := r.run(ictx, log, "initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-locale", "-E", "UTF8", "--no-sync"); err != nil {
		return nil, err
	}
	crt, key := filepath.Join(data, "server.crt"), filepath.Join(data, "server.key")
	if err := writeCert(crt, key); err != nil {
		return nil, err
	}
	listen := "127.0.0.1"
	if also.addr != "" {
		listen += "," + also.addr
		if err := appendFile(filepath.Join(data, "pg_hba.conf"), fmt.Sprintf("host all all %s trust\n", also.network)); err != nil {
			return nil, err
		}
	}
	conf := fmt.Sprintf(`
listen_addresses = '%s'
port = %d
unix_socket_directories = '%s'
max_connections = 60
shared_buffers = 32MB
fsync = off
full_page_writes = off
ssl = on
`, listen, port, sock)
	if err := appendFile(filepath.Join(data, "postgresql.conf"), conf); err != nil {
		return nil, err
	}
	if err := r.chown(crt, key); err != nil {
		return nil, err
	}

	tcp := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	s := &Server{
		Kind:   "postgres",
		TCP:    tcp,
		Socket: fmt.Sprintf("postgres://postgres@/postgres?host=%s&port=%d&sslmode=disable", sock, port),
		TLS:    fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=require", port),
		dir:    dir,
	}
	s.RestartCmd = r.command("pg_ctl", "-D", data, "-l", log, "-w", "-t", strconv.Itoa(int(startWait/time.Second)), "-m", "fast", "restart")
	s.pid = func() (int, error) { return pidFromFile(filepath.Join(data, "postmaster.pid")) }
	s.ping = func() error { return pgPing(tcp) }
	s.boot = func() error {
		bctx, cancel := context.WithTimeout(context.Background(), startWait)
		defer cancel()
		// A killed server's lock file names a pid that is gone; pg_ctl
		// and the server check that themselves.
		if err := r.run(bctx, log, "pg_ctl", "-D", data, "-l", log, "-w", "-t", strconv.Itoa(int(startWait/time.Second)), "start"); err != nil {
			return err
		}
		return waitFor(func() error { return pgPing(tcp) }, nil, log)
	}
	s.kill = func() error {
		kctx, cancel := context.WithTimeout(context.Background(), startWait)
		defer cancel()
		return r.run(kctx, log, "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
	}
	if err := s.boot(); err != nil {
		return nil, err
	}
	s.up = true
	return s, nil
}

// pgPing connects to raw and runs a statement.
func pgPing(raw string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, raw)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "SELECT 1").ReadAll()
	return err
}

// appendFile adds text at the end of an existing file.
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Command probe is the bare-driver reference for bench/probe.sh: N
// goroutines, each on a driver connection of its own, run one prepared
// point select in a loop with random keys, and nothing else: no
// cancellation, no timing, no histogram, no counters but one per client.
// Its client CPU per statement is the floor dbmark's own work sits on.
//
//	probe -url mysql://sb:pw@127.0.0.1:3306/sbtest -clients 8 -n 200000
//	probe -url 'postgres://u:p@/db?host=/run/postgresql' -query 'SELECT abalance FROM pgbench_accounts WHERE aid = $1' -tables 0 -rows 1000000
//
// MySQL goes through go-sql-driver/mysql's driver.Conn and driver.Stmt
// (QueryContext with context.Background(), rows read to io.EOF);
// PostgreSQL through pgx's pgconn (a statement prepared once per
// connection, ExecPrepared with text parameters, rows read and the result
// closed). The URL is dbmark's --target form (mysql://...?socket=,tls=;
// postgres://...?host=,sslmode=). The program prints one line:
//
//	statements=N seconds=S user_s=U sys_s=Y cpu_us_per_stmt=C allocs_per_stmt=A
//
// where the CPU is the process's own (getrusage) from the first statement
// to the last, without connecting and preparing, and A the heap
// allocations (runtime.MemStats.Mallocs) over the same span.
package main

import (
	"context"
	"database/sql/driver"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	my "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbmark/dbmark/internal/target/transport"
)

func main() {
	rawURL := flag.String("url", "", "the server, as dbmark's --target (mysql://... or postgres://...)")
	clients := flag.Int("clients", 8, "goroutines, each with a connection of its own")
	n := flag.Int64("n", 100000, "statements in all, split evenly over the clients")
	query := flag.String("query", "", "the statement; %d, when present, is replaced by a table number from 1 to -tables (default: sysbench's point select on MySQL, pgbench's select-only on PostgreSQL)")
	tables := flag.Int("tables", 4, "tables the statement picks from at random (0: the statement names its table)")
	rows := flag.Int64("rows", 100000, "keys are drawn uniformly from 1 to this")
	lock := flag.Bool("lock-thread", false, "lock each client goroutine to its OS thread")
	tr := flag.String("transport", transport.Go, "go, poller or blocking, as dbmark's --transport")
	memProfile := flag.String("mem-profile", "", "write the allocation profile here at the end (with GODEBUG=memprofilerate=1, every allocation)")
	flag.Parse()
	err := transport.Check(*tr)
	if err == nil {
		err = run(*rawURL, *clients, *n, *query, *tables, *rows, *lock, *tr)
	}
	if err == nil && *memProfile != "" {
		err = writeProfile(*memProfile)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(1)
	}
}

func writeProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// client runs one statement with a key and reads its answer to the end.
type client interface {
	run(table int, key int64) error
	close()
}

func run(rawURL string, clients int, n int64, query string, tables int, rows int64, lock bool, tr string) error {
	u, err := url.Parse(rawURL)
	if err != nil || rawURL == "" {
		return fmt.Errorf("-url %q: not a URL (mysql://... or postgres://...)", rawURL)
	}
	if clients < 1 || n < int64(clients) || rows < 1 || tables < 0 {
		return fmt.Errorf("-clients, -n, -rows must be positive, -n at least -clients, -tables 0 or more")
	}
	driver, ok := drivers[u.Scheme]
	if !ok {
		return fmt.Errorf("-url %q: the scheme must be mysql or postgres", u.Scheme)
	}
	if query == "" {
		query, tables = driver.query, min(tables, driver.maxTables)
	}
	open, err := driver.opener(u, query, tables, tr)
	if err != nil {
		return fmt.Errorf("-url: %w", err)
	}
	ctx := context.Background()
	cs := make([]client, clients)
	for i := range cs {
		if cs[i], err = open(ctx); err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		defer cs[i].close()
	}
	var wg sync.WaitGroup
	errs := make([]error, clients)
	begin := make(chan struct{})
	for i, c := range cs {
		share := n / int64(clients)
		if int64(i) < n%int64(clients) {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if lock {
				runtime.LockOSThread()
			}
			rng := rand.New(rand.NewPCG(uint64(i), 0x9e3779b9))
			<-begin
			for range share {
				t := 0
				if tables > 0 {
					t = 1 + rng.IntN(tables)
				}
				if err := c.run(t, 1+rng.Int64N(rows)); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	var r0, r1 syscall.Rusage
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	t0 := time.Now()
	close(begin)
	wg.Wait()
	wall := time.Since(t0)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	runtime.ReadMemStats(&m1)
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
	}
	user := tv(r1.Utime) - tv(r0.Utime)
	sys := tv(r1.Stime) - tv(r0.Stime)
	fmt.Printf("statements=%d seconds=%.3f user_s=%.3f sys_s=%.3f cpu_us_per_stmt=%.3f allocs_per_stmt=%.2f\n",
		n, wall.Seconds(), user, sys, (user+sys)*1e6/float64(n), float64(m1.Mallocs-m0.Mallocs)/float64(n))
	return nil
}

// opener readies a driver's connections to u, each with query prepared
// (on each of tables tables).
type opener func(u *url.URL, query string, tables int, tr string) (func(ctx context.Context) (client, error), error)

// drivers are the probe's drivers by URL scheme, each with its default
// statement: sysbench's point select, pgbench's select-only (one table).
var drivers = map[string]struct {
	opener    opener
	query     string
	maxTables int
}{
	"mysql":      {mysqlOpener, "SELECT c FROM sbtest%d WHERE id=?", math.MaxInt},
	"postgres":   {postgresOpener, "SELECT abalance FROM pgbench_accounts WHERE aid = $1", 0},
	"postgresql": {postgresOpener, "SELECT abalance FROM pgbench_accounts WHERE aid = $1", 0},
}

func mysqlOpener(u *url.URL, query string, tables int, tr string) (func(ctx context.Context) (client, error), error) {
	cn, err := mysqlConnector(u, tr)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (client, error) { return openMySQL(ctx, cn, query, tables) }, nil
}

func postgresOpener(u *url.URL, query string, tables int, tr string) (func(ctx context.Context) (client, error), error) {
	cfg, err := pgconn.ParseConfig(u.String())
	if err != nil {
		return nil, err
	}
	cfg.DialFunc = transport.Wrap(tr, cfg.DialFunc, nil)
	return func(ctx context.Context) (client, error) { return openPostgres(ctx, cfg, query, tables) }, nil
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// mysqlConnector reads dbmark's mysql:// form: host:port or ?socket=,
// other query parameters passed on as the driver's DSN parameters.
func mysqlConnector(u *url.URL, tr string) (driver.Connector, error) {
	q := u.Query()
	network, addr := "unix", q.Get("socket")
	q.Del("socket")
	if addr == "" {
		port := u.Port()
		if port == "" {
			port = "3306"
		}
		network, addr = "tcp", net.JoinHostPort(u.Hostname(), port)
	}
	dsn := network + "(" + addr + ")/"
	if len(q) > 0 {
		dsn += "?" + q.Encode()
	}
	cfg, err := my.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if tr != transport.Go {
		cfg.DialFunc = transport.Wrap(tr, (&net.Dialer{}).DialContext, nil)
	}
	return my.NewConnector(cfg)
}

type mysqlClient struct {
	dc    driver.Conn
	stmts []driver.StmtQueryContext // by table number (index 0 when -tables 0)
	args  []driver.NamedValue
	dest  []driver.Value
}

func openMySQL(ctx context.Context, cn driver.Connector, query string, tables int) (client, error) {
	dc, err := cn.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c := &mysqlClient{dc: dc, args: make([]driver.NamedValue, 1), dest: make([]driver.Value, 8)}
	for t := range max(tables, 1) {
		q := query
		if tables > 0 {
			q = strings.ReplaceAll(query, "%d", strconv.Itoa(t+1))
		}
		st, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, q)
		if err != nil {
			dc.Close()
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		c.stmts = append(c.stmts, st.(driver.StmtQueryContext))
	}
	return c, nil
}

func (c *mysqlClient) run(table int, key int64) error {
	c.args[0] = driver.NamedValue{Ordinal: 1, Value: key}
	rows, err := c.stmts[max(table-1, 0)].QueryContext(context.Background(), c.args)
	if err != nil {
		return err
	}
	dest := c.dest[:len(rows.Columns())]
	for {
		if err := rows.Next(dest); err == io.EOF {
			break
		} else if err != nil {
			rows.Close()
			return err
		}
	}
	return rows.Close()
}

func (c *mysqlClient) close() { c.dc.Close() }

type pgClient struct {
	pc     *pgconn.PgConn
	stmts  []*pgconn.StatementDescription
	params [][]byte
	buf    []byte
}

func openPostgres(ctx context.Context, cfg *pgconn.Config, query string, tables int) (client, error) {
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	c := &pgClient{pc: pc, params: make([][]byte, 1)}
	for t := range max(tables, 1) {
		q := query
		if tables > 0 {
			q = strings.ReplaceAll(query, "%d", strconv.Itoa(t+1))
		}
		sd, err := pc.Prepare(ctx, "probe"+strconv.Itoa(t), q, nil)
		if err != nil {
			pc.Close(ctx)
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		c.stmts = append(c.stmts, sd)
	}
	return c, nil
}

func (c *pgClient) run(table int, key int64) error {
	c.buf = strconv.AppendInt(c.buf[:0], key, 10)
	c.params[0] = c.buf
	rr := c.pc.ExecStatement(context.Background(), c.stmts[max(table-1, 0)], c.params, nil, nil)
	for rr.NextRow() {
	}
	_, err := rr.Close()
	return err
}

func (c *pgClient) close() { c.pc.Close(context.Background()) }

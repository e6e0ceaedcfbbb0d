package main

// Three client hosts on one machine: three dbmark processes, each in a
// network namespace of its own, reach a PostgreSQL server over veth pairs
// bridged to an address on the host, start measuring at one --start-at,
// and `dbmark merge` makes one result of theirs.

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/testsrv"
)

// hostNet is a bridge on the host with an address for the server, and
// namespaces plugged into it, each one client host with its address.
type hostNet struct {
	server  string   // the bridge's address: where the server listens
	network string   // the /24 of the bridge and the hosts
	ns      []string // the namespaces
	hosts   []string // their addresses
}

// netnsTag starts the names of what the test makes: the test's pid
// follows, so leftovers of a killed run can be told from a running one's.
const netnsTag = "dbmk"

// bridgedHosts makes n namespaces bridged to the host, all removed when
// the test ends, also when it fails. Where the kernel or the user cannot
// make them, the test is skipped with one line.
func bridgedHosts(t *testing.T, n int) *hostNet {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root: not root, skipped")
	}
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("network namespaces: no ip command (iproute2), skipped")
	}
	ip := func(args ...string) error {
		out, err := exec.Command(ipPath, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	removeStale(ipPath)
	tag := netnsTag + strconv.Itoa(os.Getpid())
	prefix, err := freeSubnet(ipPath)
	if err != nil {
		t.Fatal(err)
	}
	h := &hostNet{server: prefix + ".1", network: prefix + ".0/24"}
	br := tag + "b"
	if err := ip("link", "add", br, "type", "bridge"); err != nil {
		t.Skipf("network namespaces: the kernel refuses a bridge, skipped (%v)", err)
	}
	t.Cleanup(func() { _ = ip("link", "del", br) })
	must := func(args ...string) {
		t.Helper()
		if err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	must("addr", "add", h.server+"/24", "dev", br)
	must("link", "set", br, "up")
	for i := range n {
		ns := fmt.Sprintf("%s-%d", tag, i+1)
		if err := ip("netns", "add", ns); err != nil {
			t.Skipf("network namespaces: the kernel refuses one, skipped (%v)", err)
		}
		t.Cleanup(func() { _ = ip("netns", "del", ns) }) // its end of the veth goes with it
		veth := fmt.Sprintf("%sh%d", tag, i+1)
		addr := fmt.Sprintf("%s.%d", prefix, 10+i)
		must("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
		must("link", "set", veth, "master", br, "up")
		must("-n", ns, "addr", "add", addr+"/24", "dev", "eth0")
		must("-n", ns, "link", "set", "eth0", "up")
		must("-n", ns, "link", "set", "lo", "up")
		h.ns = append(h.ns, ns)
		h.hosts = append(h.hosts, addr)
	}
	return h
}

// removeStale deletes namespaces and bridges an earlier run of this test
// left when it was killed: those whose pid no longer runs.
func removeStale(ipPath string) {
	re := regexp.MustCompile(`^` + netnsTag + `([0-9]+)(-[0-9]+|b)\b`)
	gone := func(name string) bool {
		m := re.FindStringSubmatch(name)
		if m == nil {
			return false
		}
		_, err := os.Stat("/proc/" + m[1])
		return os.IsNotExist(err)
	}
	if out, err := exec.Command(ipPath, "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) > 0 && gone(f[0]) {
				_ = exec.Command(ipPath, "netns", "del", f[0]).Run()
			}
		}
	}
	if out, err := exec.Command(ipPath, "-o", "link", "show", "type", "bridge").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) > 1 && gone(strings.TrimSuffix(f[1], ":")) {
				_ = exec.Command(ipPath, "link", "del", strings.TrimSuffix(f[1], ":")).Run()
			}
		}
	}
}

// freeSubnet is a 10.213.N prefix no interface of the machine is on.
func freeSubnet(ipPath string) (string, error) {
	out, err := exec.Command(ipPath, "-4", "-o", "addr").Output()
	if err != nil {
		return "", fmt.Errorf("ip addr: %v", err)
	}
	for k := range 250 {
		p := fmt.Sprintf("10.213.%d", (os.Getpid()+k)%250+1)
		if !strings.Contains(string(out), " "+p+".") {
			return p, nil
		}
	}
	return "", fmt.Errorf("no free 10.213.N.0/24 for the test's hosts")
}

// txLogLatencies reads pgbench-style -l logs: each committed
// transaction's latency in microseconds, of those that ended at from or
// later, in no order.
func txLogLatencies(t *testing.T, glob string, from time.Time) []int64 {
	t.Helper()
	files, _ := filepath.Glob(glob)
	if len(files) == 0 {
		t.Fatalf("no transaction log %s", glob)
	}
	var lat []int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			// client_id transaction_no time script_no time_epoch time_us
			c := strings.Fields(line)
			us, err1 := strconv.ParseInt(c[2], 10, 64)
			sec, err2 := strconv.ParseInt(c[4], 10, 64)
			usec, err3 := strconv.ParseInt(c[5], 10, 64)
			if err1 != nil || err2 != nil || err3 != nil {
				continue // failed or skipped
			}
			if !time.Unix(sec, usec*1000).Before(from) {
				lat = append(lat, us)
			}
		}
	}
	return lat
}

// measuredFrom is when r's measured window began: its first interval
// after the warm-up.
func measuredFrom(t *testing.T, r *result.Result) time.Time {
	t.Helper()
	for _, iv := range r.Series {
		if !iv.Warmup {
			return r.StartedAt.Add(time.Duration((iv.T - iv.DurationS) * 1e9))
		}
	}
	t.Fatalf("result %s has no measured interval", r.ID)
	return time.Time{}
}

func TestHostsInNetworkNamespacesMergeExactly(t *testing.T) {
	t.Parallel()
	const hosts, clients = 3, 2
	hn := bridgedHosts(t, hosts)
	srv := testsrv.Start(t, testsrv.PostgresAlsoOn(hn.server, hn.network))
	bin := buildDbmark(t)
	dir := t.TempDir()
	env := append(os.Environ(), "DBMARK_HOME="+dir, "DBMARK_TARGET=", "DBMARK_STORE=")
	// dbmark on the host (ns "") or in a namespace.
	dbmark := func(ns string, args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		if ns != "" {
			cmd = exec.Command("ip", append([]string{"netns", "exec", ns, bin}, args...)...)
		}
		cmd.Env = env
		return cmd
	}
	if out, err := dbmark("", "prepare", "tpcb", "--target", srv.TCP, "-s", "1", "-q").CombinedOutput(); err != nil {
		t.Fatalf("prepare: %v\n%s", err, out)
	}
	// The server as the hosts see it: its address on the bridge.
	u, _ := url.Parse(srv.TCP)
	u.Host = hn.server + ":" + u.Port()
	at := time.Now().Add(5 * time.Second).UTC().Truncate(time.Millisecond)
	var wg sync.WaitGroup
	outs := make([][]byte, hosts)
	errs := make([]error, hosts)
	for i, ns := range hn.ns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("host%d", i+1)
			outs[i], errs[i] = dbmark(ns, "run", "tpcb", "--target", u.String(), "-S", "-c", strconv.Itoa(clients),
				"--time", "3s", "--warmup", "1s", "--start-at", at.Format(time.RFC3339Nano), "--client-id", name,
				"-l", "--log-prefix", filepath.Join(dir, name+"_log"), "--no-store", "--json", filepath.Join(dir, name+".json"),
			).CombinedOutput()
		}()
	}
	// While they measure, the server sees each host's clients come from
	// its own address: the load crossed the veths.
	time.Sleep(time.Until(at.Add(time.Second)))
	seen := clientAddrs(t, srv.TCP, hn.network)
	wg.Wait()
	for i := range hn.ns {
		if errs[i] != nil {
			t.Fatalf("host %d: %v\n%s", i+1, errs[i], outs[i])
		}
	}
	if !slices.Equal(seen, hn.hosts) {
		t.Fatalf("the server saw clients from %v during the window, want one from each host %v", seen, hn.hosts)
	}

	var files []string
	var events int64
	var samples []int64
	for i := range hosts {
		name := fmt.Sprintf("host%d", i+1)
		f := filepath.Join(dir, name+".json")
		r := readResult(t, f)
		if r.StartAt == nil || !r.StartAt.At.Equal(at) || r.StartAt.LateS != 0 || r.ClientID != name {
			t.Fatalf("%s: start %+v, client %q, want %v on time", name, r.StartAt, r.ClientID, at)
		}
		if r.StartAt.ClockOffsetMS == nil || math.Abs(*r.StartAt.ClockOffsetMS) > 50 {
			t.Fatalf("%s: the clock offset against the server on this machine: %v ms", name, r.StartAt.ClockOffsetMS)
		}
		files = append(files, f)
		events += r.Summary.Events
		// The events of its measured window as its log has them: the
		// histogram holds the window and the drain after the time limit.
		samples = append(samples, txLogLatencies(t, filepath.Join(dir, name+"_log.*"), measuredFrom(t, r))...)
	}
	merged := filepath.Join(dir, "merged.json")
	if out, err := dbmark("", append(append([]string{"merge"}, files...), "-o", merged)...).CombinedOutput(); err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	}
	m := readResult(t, merged)
	if m.Summary.Events != events || m.Run.Threads != hosts*clients || len(m.Clients) != hosts {
		t.Fatalf("merged: %d events (the hosts' sum is %d), %d threads, %d clients", m.Summary.Events, events, m.Run.Threads, len(m.Clients))
	}
	// Little's law over all hosts' clients (closed loop).
	if c := m.Summary.Concurrency; math.Abs(c-hosts*clients) > 0.1*hosts*clients {
		t.Fatalf("merged events/s x mean latency = %.2f in flight, want the %d clients within 10%%", c, hosts*clients)
	}
	slices.Sort(samples)
	checkP99(t, m, samples)
}

// checkP99: the merged p99 is the p99 of every host's logged transaction
// within the histogram's precision (3 significant digits) and the log's
// (whole microseconds). A transaction that ended on the tick that began
// a window may sit on either side of it, so the rank may move by as many
// as the counts differ.
func checkP99(t *testing.T, m *result.Result, samples []int64) {
	t.Helper()
	i := slices.IndexFunc(m.Histograms, func(h result.Histogram) bool { return h.Kind == "latency" && h.Op == "script:select-only" })
	if i < 0 {
		t.Fatal("the merged result has no latency histogram of the select-only script")
	}
	hist, err := m.Histograms[i].Decode()
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(samples))
	slop := max(hist.TotalCount()-n, n-hist.TotalCount()) + 1
	if slop > n/100 {
		t.Fatalf("the logs hold %d transactions of the windows, the merged histogram %d", n, hist.TotalCount())
	}
	rank := int64(math.Ceil(0.99 * float64(n)))
	lo := float64(samples[max(rank-1-slop, 0)])
	hi := float64(samples[min(rank-1+slop, n-1)])
	got, _ := m.Summary.Latency.Get(99)
	gotUS := got * 1000
	if gotUS < lo*0.999-1 || gotUS > hi*1.001+1 {
		t.Fatalf("merged p99 %.1f µs; the logged transactions' p99 is %.0f µs (ranks ±%d: %.0f to %.0f)", gotUS, float64(samples[rank-1]), slop, lo, hi)
	}
	t.Logf("%d transactions, merged p99 %.1f µs, the logs' %d µs", n, gotUS, samples[rank-1])
}

// clientAddrs are the distinct addresses in network the server's
// sessions come from, in order.
func clientAddrs(t *testing.T, dsn, network string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	res := c.ExecParams(ctx, "SELECT DISTINCT host(client_addr) FROM pg_stat_activity WHERE client_addr << $1::inet ORDER BY 1",
		[][]byte{[]byte(network)}, nil, nil, nil).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var out []string
	for _, row := range res.Rows {
		out = append(out, string(row[0]))
	}
	return out
}

package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAutoTransportFollowsTheWaits: on auto's blocking transport, a run
// whose statements sleep 4 ms on the server for its first second and
// not after is released to the poller, then back on its threads, with
// every client in flight throughout; the driver line says both moves,
// in order. On a cluster (--target twice), every server's clients do.
func TestAutoTransportFollowsTheWaits(t *testing.T) {
	const mysqlSleep = "SELECT SLEEP(IF(UNIX_TIMESTAMP(NOW(6)) * 1000 < :until, 0.004, 0));\n"
	for _, c := range []struct {
		env, sleep string
		servers    int
	}{
		{"DBMARK_TEST_MYSQL", mysqlSleep, 1},
		{"DBMARK_TEST_POSTGRES_SOCKET", "SELECT pg_sleep(CASE WHEN extract(epoch FROM clock_timestamp()) * 1000 < :until THEN 0.004 ELSE 0 END);\n", 1},
		{"DBMARK_TEST_MYSQL", mysqlSleep, 2},
	} {
		t.Run(c.env+"/"+strconv.Itoa(c.servers), func(t *testing.T) {
			u := serverURL(t, c.env)
			dir := home(t)
			script := filepath.Join(dir, "shortening.sql")
			if err := os.WriteFile(script, []byte(c.sleep), 0o644); err != nil {
				t.Fatal(err)
			}
			jsonPath := filepath.Join(dir, "r.json")
			// The sleeps end a second and a half from now: the connecting
			// and a window of 4 ms waits take well under that.
			until := time.Now().Add(1500 * time.Millisecond).UnixMilli()
			args := []string{"run", "tpcb", "-n", "-f", script, "-D", "until=" + strconv.FormatInt(until, 10),
				"--client", "4", "--time", "4", "--json", jsonPath}
			for range c.servers {
				args = append(args, "--target", u.String())
			}
			o := dbmark(t, context.Background(), args...)
			if o.code != 0 {
				t.Fatalf("run: exit %d: %s", o.code, o.stderr)
			}
			r := readResult(t, jsonPath)
			d := r.Target.Driver
			rel, back := strings.Index(d, ", released to the poller transport at "), strings.Index(d, ", back on their threads at ")
			if !strings.Contains(d, "blocking transport (auto)") || rel < 0 || back < rel {
				t.Fatalf("driver %q: want auto's blocking transport released to the poller, then back on its threads", d)
			}
			if r.Environment.GoMaxProcs < 4+2 {
				t.Errorf("GOMAXPROCS %d at the start for 4 clients on threads of their own", r.Environment.GoMaxProcs)
			}
			if cc := r.Summary.Concurrency; cc < 0.9*4 {
				t.Errorf("effective concurrency %.2f of 4 clients", cc)
			}
			if c.servers > 1 {
				for _, s := range r.Servers {
					if s.Summary.Concurrency < 0.9*2 {
						t.Errorf("server %s: effective concurrency %.2f of its 2 clients", s.Label, s.Summary.Concurrency)
					}
				}
				if len(r.Servers) != c.servers {
					t.Errorf("%d servers' parts recorded, ran on %d", len(r.Servers), c.servers)
				}
			}
		})
	}
}

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
// in order.
func TestAutoTransportFollowsTheWaits(t *testing.T) {
	for _, c := range []struct {
		env, sleep string
	}{
		{"DBMARK_TEST_MYSQL", "SELECT SLEEP(IF(UNIX_TIMESTAMP(NOW(6)) * 1000 < :until, 0.004, 0));\n"},
		{"DBMARK_TEST_POSTGRES_SOCKET", "SELECT pg_sleep(CASE WHEN extract(epoch FROM clock_timestamp()) * 1000 < :until THEN 0.004 ELSE 0 END);\n"},
	} {
		t.Run(c.env, func(t *testing.T) {
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
			o := dbmark(t, context.Background(), "run", "tpcb", "-n", "-f", script, "-D", "until="+strconv.FormatInt(until, 10),
				"--target", u.String(), "--client", "4", "--time", "4", "--json", jsonPath)
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
		})
	}
}

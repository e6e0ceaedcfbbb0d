package sampler_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/sampler"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/testsrv"
)

// TestCountersAcrossRestart kills the server the counters are read from
// (a crash: PostgreSQL's immediate shutdown, SIGKILL for MariaDB) and
// starts it again, on a server of the test's own: the db.* series must go
// on after the restart, with the missing samples marked as one gap that
// covers the outage, and no sample inside it.
func TestCountersAcrossRestart(t *testing.T) {
	for _, c := range []struct {
		name  string
		start testsrv.Starter
		open  target.Opener
	}{
		{"postgres", testsrv.Postgres, postgres.Open},
		{"mariadb", testsrv.MariaDB, mysql.Open},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := testsrv.Start(t, c.start)
			u, err := url.Parse(srv.TCP)
			if err != nil {
				t.Fatal(err)
			}
			tg, err := c.open(context.Background(), u, target.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			cs, ok := tg.(target.CounterSource)
			if !ok {
				t.Fatalf("%s has no counters", c.name)
			}
			const interval = 200 * time.Millisecond
			start := time.Now()
			s := sampler.Start(context.Background(), sampler.Config{Interval: interval, DB: cs})
			time.Sleep(1500 * time.Millisecond)
			killing := time.Now()
			if err := srv.Kill(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(1500 * time.Millisecond)
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			back := time.Now()
			time.Sleep(3 * time.Second) // a loaded machine reconnects late
			end := time.Now()
			cn := s.Stop(start, end)
			rel := func(tm time.Time) float64 { return tm.Sub(start).Seconds() }
			if why, ok := cn.Unknown["db"]; ok {
				t.Fatalf("the db counters gave up: %s", why)
			}
			n := 0
			for _, sr := range cn.Series {
				if !strings.HasPrefix(sr.Name, "db.") {
					continue
				}
				n++
				checkGap(t, sr, rel(killing), rel(back), rel(end))
			}
			if n == 0 {
				t.Fatal("no db series")
			}
		})
	}
}

func checkGap(t *testing.T, sr result.CounterSeries, killed, back, end float64) {
	t.Helper()
	if len(sr.Gaps) != 1 {
		t.Errorf("%s: gaps %v, want one around the outage %.2f-%.2f s", sr.Name, sr.Gaps, killed, back)
		return
	}
	g := sr.Gaps[0]
	// From the last sample before the kill (an interval before it, or
	// more on a loaded machine) to the first after the restart.
	if g[0] > killed+0.1 || g[0] < killed-2 || g[1] < back || g[1] > end {
		t.Errorf("%s: gap %v, want from before the kill at %.2f s to after the restart at %.2f s", sr.Name, g, killed, back)
	}
	after := 0
	for _, p := range sr.Points {
		if p[0] > g[0] && p[0] < g[1] {
			t.Errorf("%s: a sample at %.2f s inside the gap %v", sr.Name, p[0], g)
		}
		if p[0] >= g[1] {
			after++
		}
	}
	if after < 2 {
		t.Errorf("%s: %d samples after the restart at %.2f s (gap %v, points %v): the series did not go on", sr.Name, after, back, g, sr.Points)
	}
}

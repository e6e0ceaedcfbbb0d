package sampler

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/testsrv"
)

// TestCountersAcrossRestart kills the server the counters are read from
// (a crash: PostgreSQL's immediate shutdown, SIGKILL for MariaDB) and
// starts it again, on a server of the test's own: the db.* series must go
// on after the restart, with the missing samples marked as one gap from
// the last sample before the kill to the first after the restart, and no
// sample inside it. The test waits for the samples, not for the clock, so
// a loaded machine only makes it slower.
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
			s := Start(context.Background(), Config{Interval: interval, DB: cs})
			waitFor(t, "2 samples of the db counters", func() bool { return samplesSince(s, "db.status_read_ms", start) >= 2 })
			if err := srv.Kill(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(1500 * time.Millisecond) // an outage of several intervals
			restarting := time.Now()
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "3 samples of the db counters after the restart", func() bool { return samplesSince(s, "db.status_read_ms", restarting) >= 3 })
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
				checkGap(t, sr, rel(restarting), rel(end))
			}
			if n == 0 {
				t.Fatal("no db series")
			}
		})
	}
}

// checkGap checks sr has one gap, around the restart, with no sample
// inside it and samples after it. The gap starts at the series' last
// sample before it: db.status_read_ms has one at every sample, so its
// last point must be the gap's start.
func checkGap(t *testing.T, sr result.CounterSeries, restarting, end float64) {
	t.Helper()
	if len(sr.Gaps) != 1 {
		t.Errorf("%s: gaps %v, want one around the restart at %.3f s", sr.Name, sr.Gaps, restarting)
		return
	}
	g := sr.Gaps[0]
	if g[0] >= restarting || g[1] <= restarting || g[1] > end {
		t.Errorf("%s: gap %v, want one from before the restart at %.3f s to after it, before the end at %.3f s", sr.Name, g, restarting, end)
	}
	before, after := -1.0, 0
	for _, p := range sr.Points {
		if p[0] > g[0] && p[0] < g[1] {
			t.Errorf("%s: a sample at %.3f s inside the gap %v", sr.Name, p[0], g)
		}
		if p[0] <= g[0] {
			before = p[0]
		}
		if p[0] >= g[1] {
			after++
		}
	}
	if sr.Name == "db.status_read_ms" && before != g[0] {
		t.Errorf("%s: gap %v, but the last sample before it is at %.3f s (points %v)", sr.Name, g, before, sr.Points)
	}
	// db.cache_hit has a point only where the interval read a block.
	if after < 2 && sr.Name != "db.cache_hit" {
		t.Errorf("%s: %d samples after the restart at %.3f s (gap %v, points %v): the series did not go on", sr.Name, after, restarting, g, sr.Points)
	}
}

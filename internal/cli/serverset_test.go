package cli_test

// Server-setting sweeps (--server-set) on servers of the tests' own: the
// values a run sets are read back and recorded, and the originals are put
// back after a sweep, a failed cell, Ctrl-C and a restart.

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/store"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/testsrv"
)

// connectTo opens a connection to raw, closed when the test ends.
func connectTo(t *testing.T, open target.Opener, raw string) target.Conn {
	t.Helper()
	ctx := context.Background()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := open(ctx, u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// setting reads name as a new connection to raw sees it.
func setting(t *testing.T, open target.Opener, raw, sql string) string {
	t.Helper()
	v, _, err := connectTo(t, open, raw).QueryRow(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

func pgSetting(t *testing.T, srv *testsrv.Server, name string) string {
	return setting(t, postgres.Open, srv.TCP, "SHOW "+name)
}

func mySetting(t *testing.T, srv *testsrv.Server, name string) string {
	return setting(t, mysql.Open, srv.TCP, "SELECT @@GLOBAL."+name)
}

// sweptTwice runs dbmark sweep with args on a store of its own, which
// must end well with two runs, and returns its outcome and the runs.
func sweptTwice(t *testing.T, args ...string) (outcome, []*result.Result) {
	t.Helper()
	storePath := filepath.Join(t.TempDir(), "s.db")
	o := dbmark(t, context.Background(), append([]string{"sweep", "--store", storePath}, args...)...)
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	runs := sweepRuns(t, storePath)
	if len(runs) != 2 {
		t.Fatalf("%d runs", len(runs))
	}
	return o, runs
}

// sweepRuns are the runs of the newest sweep in the store at path.
func sweepRuns(t *testing.T, path string) []*result.Result {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.ResolveSweep(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.GetSweep(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.SweepRuns(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// serverSetOf is the setting name as a run recorded it.
func serverSetOf(r *result.Result, name string) (result.ServerSetting, bool) {
	for _, s := range r.Target.ServerSet {
		if s.Name == name {
			return s, true
		}
	}
	return result.ServerSetting{}, false
}

func TestServerSetPostgres(t *testing.T) {
	srv := testsrv.Start(t, testsrv.Postgres)
	home(t)
	data := []string{"--target", srv.TCP, "--tables", "1", "--table-size", "1000"}
	prepared(t, "oltp_point_select", data...)
	origWorkMem, origSync := pgSetting(t, srv, "work_mem"), pgSetting(t, srv, "synchronous_commit")
	restored := func(t *testing.T) {
		t.Helper()
		if got := pgSetting(t, srv, "work_mem"); got != origWorkMem {
			t.Errorf("work_mem is %s after the sweep, was %s", got, origWorkMem)
		}
		if got := pgSetting(t, srv, "synchronous_commit"); got != origSync {
			t.Errorf("synchronous_commit is %s after the sweep, was %s", got, origSync)
		}
		if n := setting(t, postgres.Open, srv.TCP, "SELECT count(*) FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf'"); n != "0" {
			t.Errorf("postgresql.auto.conf keeps %s settings after the sweep", n)
		}
	}

	t.Run("sweep", func(t *testing.T) {
		o, runs := sweptTwice(t, append([]string{"oltp_point_select", "--time", "1", "--iterations", "1",
			"--server-set", "work_mem=8MB,16384kB", "--server-set", "synchronous_commit=off"}, data...)...)
		if !strings.Contains(o.stdout, "server.work_mem") || !strings.Contains(o.stderr, "server settings restored") {
			t.Errorf("the table names no setting, or nothing says it was restored:\n%s\n%s", o.stdout, o.stderr)
		}
		for _, r := range runs {
			want := r.Sweep.Cell["server.work_mem"]
			wm, ok := serverSetOf(r, "work_mem")
			if !ok || wm.Set != want || wm.Original != origWorkMem || r.Workload.Options["server.work_mem"] != want {
				t.Errorf("run of cell %v records %+v, options %v", r.Sweep.Cell, r.Target.ServerSet, r.Workload.Options)
			}
			sc, ok := serverSetOf(r, "synchronous_commit")
			if !ok || sc.ReadBack != "off" || sc.Original != origSync {
				t.Errorf("run records %+v", r.Target.ServerSet)
			}
		}
		if got := []string{mustSet(t, runs[0], "work_mem"), mustSet(t, runs[1], "work_mem")}; got[0] != "8MB" || got[1] != "16MB" {
			t.Errorf("read back %v, want 8MB and 16MB (16384kB as the server shows it)", got)
		}
		restored(t)
	})

	t.Run("failed cell", func(t *testing.T) {
		// The server takes 60 connections: the second cell cannot start.
		o := dbmark(t, context.Background(), append([]string{"sweep", "oltp_point_select", "--time", "1", "--iterations", "1",
			"--threads", "1,100", "--server-set", "work_mem=24MB"}, data...)...)
		if o.code == 0 {
			t.Fatalf("a sweep with a cell of 100 clients on a server of 60 passed:\n%s", o.stderr)
		}
		if !strings.Contains(o.stderr, "server settings restored") {
			t.Errorf("stderr: %s", o.stderr)
		}
		restored(t)
	})

	t.Run("interrupted", func(t *testing.T) {
		p := startDbmark(t, append([]string{"sweep", "oltp_point_select", "--time", "60", "--iterations", "1",
			"--server-set", "work_mem=32MB,40MB", "--store", filepath.Join(t.TempDir(), "s.db")}, data...)...)
		deadline := time.Now().Add(60 * time.Second)
		for pgSetting(t, srv, "work_mem") != "32MB" {
			if time.Now().After(deadline) {
				t.Fatalf("work_mem never became 32MB\nstderr: %s", p.stderr)
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t, 60*time.Second); code != 130 {
			t.Errorf("exit %d after SIGINT\nstderr: %s", code, p.stderr)
		}
		if !strings.Contains(p.stderr.String(), "server settings restored") {
			t.Errorf("stderr: %s", p.stderr)
		}
		restored(t)
	})

	t.Run("restart", func(t *testing.T) {
		prepared(t, "oltp_point_select", data...) // the interrupted sweep may have stopped its prepare
		orig := pgSetting(t, srv, "shared_buffers")
		o := dbmark(t, context.Background(), append([]string{"run", "oltp_point_select", "--time", "1", "--no-store",
			"--server-set", "shared_buffers=48MB"}, data...)...)
		oneLineError(t, o, "--restart-cmd")
		path := filepath.Join(t.TempDir(), "r.json")
		o = dbmark(t, context.Background(), append([]string{"run", "oltp_point_select", "--time", "1", "--no-store", "--json", path,
			"--server-set", "shared_buffers=48MB", "--restart-cmd", srv.RestartCmd}, data...)...)
		if o.code != 0 {
			t.Fatalf("exit %d: %s", o.code, o.stderr)
		}
		r := readResult(t, path)
		sb, ok := serverSetOf(r, "shared_buffers")
		if !ok || sb.ReadBack != "48MB" || sb.Original != orig || !sb.Restart {
			t.Errorf("recorded %+v (original %s)", r.Target.ServerSet, orig)
		}
		if strings.Count(o.stderr, "restarting the server") != 2 {
			t.Errorf("want a restart to set it and one to put it back:\n%s", o.stderr)
		}
		if got := pgSetting(t, srv, "shared_buffers"); got != orig {
			t.Errorf("shared_buffers is %s after the run, was %s", got, orig)
		}
	})

	t.Run("crash", func(t *testing.T) {
		// The server crashes during the first cell and stays down: the run
		// fails, and dbmark starts the server with the restart command
		// and puts work_mem back, which ALTER SYSTEM had kept through
		// the crash.
		prepared(t, "oltp_point_select", data...)
		p := startDbmark(t, append([]string{"sweep", "oltp_point_select", "--time", "3", "--iterations", "1",
			"--server-set", "work_mem=44MB,52MB", "--restart-cmd", srv.RestartCmd, "--store", filepath.Join(t.TempDir(), "s.db")}, data...)...)
		deadline := time.Now().Add(60 * time.Second)
		for pgSetting(t, srv, "work_mem") != "44MB" {
			if time.Now().After(deadline) {
				t.Fatalf("work_mem never became 44MB\nstderr: %s", p.stderr)
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t, 90*time.Second); code == 0 || code == 130 {
			t.Errorf("exit %d after the server crashed\nstderr: %s", code, p.stderr)
		}
		if err := srv.Up(); err != nil {
			t.Fatalf("%v\nstderr: %s", err, p.stderr)
		}
		stderr := p.stderr.String()
		if !strings.Contains(stderr, "restarting the server") || !strings.Contains(stderr, "server settings restored: work_mem="+origWorkMem) {
			t.Errorf("stderr: %s", stderr)
		}
		restored(t)
	})

	t.Run("bad input", func(t *testing.T) {
		for _, c := range []struct{ set, want string }{
			{"no_such_setting=1", "PostgreSQL has no setting"},
			{"work_mem=lots", `invalid value for parameter "work_mem"`},
			{"synchronous_commit=sometimes", `invalid value for parameter "synchronous_commit"`},
			{"server_version=1", "cannot be set"},
		} {
			storePath := filepath.Join(t.TempDir(), "s.db")
			o := dbmark(t, context.Background(), append([]string{"sweep", "oltp_point_select", "--time", "1", "--store", storePath,
				"--server-set", "maintenance_work_mem=64MB,128MB", "--server-set", c.set}, data...)...)
			oneLineError(t, o, c.want)
			if strings.Contains(o.stderr, "sweep 1") {
				t.Errorf("%s: the sweep started: %s", c.set, o.stderr)
			}
		}
		restored(t)
		// A user who may not change settings.
		setting(t, postgres.Open, srv.TCP, "CREATE ROLE plain LOGIN")
		u, _ := url.Parse(srv.TCP)
		u.User = url.User("plain")
		o := dbmark(t, context.Background(), "run", "oltp_point_select", "--time", "1", "--no-store", "--target", u.String(),
			"--tables", "1", "--table-size", "1000", "--server-set", "work_mem=8MB")
		oneLineError(t, o, "ALTER SYSTEM needs a superuser")
	})
}

func mustSet(t *testing.T, r *result.Result, name string) string {
	t.Helper()
	s, ok := serverSetOf(r, name)
	if !ok {
		t.Fatalf("the run records no %s: %+v", name, r.Target.ServerSet)
	}
	return s.ReadBack
}

func TestServerSetMariaDB(t *testing.T) {
	srv := testsrv.Start(t, testsrv.MariaDB)
	home(t)
	data := []string{"--target", srv.TCP, "--tables", "1", "--table-size", "1000"}
	prepared(t, "oltp_update_index", data...)
	orig := mySetting(t, srv, "innodb_flush_log_at_trx_commit")
	_, runs := sweptTwice(t, append([]string{"oltp_update_index", "--time", "1", "--iterations", "1",
		"--server-set", "innodb_flush_log_at_trx_commit=0,1", "--server-set", "innodb_io_capacity=400"}, data...)...)
	for _, r := range runs {
		want := r.Sweep.Cell["server.innodb_flush_log_at_trx_commit"]
		if got := mustSet(t, r, "innodb_flush_log_at_trx_commit"); got != want {
			t.Errorf("cell %s read back %s", want, got)
		}
		if got := mustSet(t, r, "innodb_io_capacity"); got != "400" {
			t.Errorf("innodb_io_capacity read back %s", got)
		}
	}
	if got := mySetting(t, srv, "innodb_flush_log_at_trx_commit"); got != orig {
		t.Errorf("innodb_flush_log_at_trx_commit is %s after the sweep, was %s", got, orig)
	}

	// A read-only variable (innodb_flush_method on MariaDB 10.11) takes
	// a restart each cell, with the command that writes it into the
	// server's option file; the original goes back the same way.
	t.Run("restart", func(t *testing.T) {
		orig := mySetting(t, srv, "innodb_flush_method")
		other := "fsync"
		if orig == other {
			other = "O_DIRECT"
		}
		o, runs := sweptTwice(t, append([]string{"oltp_update_index", "--time", "1", "--iterations", "1",
			"--server-set", "innodb_flush_method=" + other + "," + orig, "--restart-cmd", srv.RestartCmd}, data...)...)
		for _, r := range runs {
			want := r.Sweep.Cell["server.innodb_flush_method"]
			fm, ok := serverSetOf(r, "innodb_flush_method")
			if !ok || fm.ReadBack != want || fm.Original != orig || !fm.Restart {
				t.Errorf("cell %s recorded %+v", want, r.Target.ServerSet)
			}
		}
		// A restart for each cell's value, and one to put the original
		// back in the option file.
		if n := strings.Count(o.stderr, "restarting the server"); n != 3 {
			t.Errorf("%d restarts, want 3:\n%s", n, o.stderr)
		}
		if got := mySetting(t, srv, "innodb_flush_method"); got != orig {
			t.Errorf("innodb_flush_method is %s after the sweep, was %s", got, orig)
		}
	})

	for _, c := range []struct{ set, want string }{
		{"no_such_variable=1", "the server has no variable"},
		{"innodb_flush_log_at_trx_commit=7", "innodb_flush_log_at_trx_commit=7"},
		{"back_log=100", "--restart-cmd"},
	} {
		o := dbmark(t, context.Background(), append([]string{"run", "oltp_update_index", "--time", "1", "--no-store", "--server-set", c.set}, data...)...)
		oneLineError(t, o, c.want)
	}
	if got := mySetting(t, srv, "innodb_flush_log_at_trx_commit"); got != orig {
		t.Errorf("innodb_flush_log_at_trx_commit is %s after the refused runs, was %s", got, orig)
	}
}

// SQLite's settings are per connection: each connection of the run runs
// the pragma as it opens, and reads it back.
func TestServerSetSQLite(t *testing.T) {
	home(t)
	path := filepath.Join(t.TempDir(), "r.json")
	o := dbmark(t, context.Background(), "run", "oltp_point_select", "--time", "1", "--threads", "2", "--no-store", "--json", path,
		"--server-set", "cache_size=-3000", "--server-set", "synchronous=off")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	r := readResult(t, path)
	if got := mustSet(t, r, "cache_size"); got != "-3000" {
		t.Errorf("cache_size read back %s", got)
	}
	if got := mustSet(t, r, "synchronous"); got != "0" {
		t.Errorf("synchronous read back %s", got)
	}
	// The engine's settings, read on a connection of the run's, show it.
	if r.Target.Settings["cache_size"] != "-3000" || r.Workload.Options["server.cache_size"] != "-3000" {
		t.Errorf("settings %v, options %v", r.Target.Settings, r.Workload.Options)
	}
	for _, c := range []struct{ set, want string }{
		{"no_such_pragma=1", "SQLite has no pragma"},
		{"synchronous=sometimes", "SQLite took"},
		{"cache_size", "give NAME=VALUE"},
	} {
		o := dbmark(t, context.Background(), "run", "oltp_point_select", "--time", "1", "--no-store", "--server-set", c.set)
		oneLineError(t, o, c.want)
	}
}

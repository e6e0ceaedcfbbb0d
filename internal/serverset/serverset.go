// Package serverset changes server settings for runs (--server-set): it
// checks them before anything runs, sets each run's values through the
// engine's own vocabulary (target.Setter), restarts the server with the
// user's command where a setting needs it, reads the values back, and
// puts the original values back at the end.
package serverset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/sweep"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/restart"
)

// Flag is --server-set NAME=V1,V2,..., given once per setting: a list or
// a range (FROM:TO:STEP) makes the setting a sweep axis.
type Flag struct {
	list []entry
}

type entry struct {
	name   string
	values []string
}

// Set takes one NAME=VALUES.
func (f *Flag) Set(s string) error {
	name, vals, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || vals == "" {
		return fmt.Errorf("%q: give NAME=VALUE, or NAME=V1,V2 to sweep (e.g. work_mem=4MB,64MB)", s)
	}
	if err := target.CheckSettingName(name); err != nil {
		return err
	}
	values, err := sweep.Values(vals)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, e := range f.list {
		if strings.EqualFold(e.name, name) {
			return fmt.Errorf("%s is given twice (one --server-set per setting, its values separated by commas)", name)
		}
	}
	f.list = append(f.list, entry{name: name, values: values})
	return nil
}

// String is the settings as given, separated by spaces.
func (f *Flag) String() string { return strings.Join(f.Args(), " ") }

// Type names the flag's value in help.
func (f *Flag) Type() string { return "NAME=VALUES" }

// Args are the settings as a command line gives them, one per flag.
func (f *Flag) Args() []string {
	out := make([]string, len(f.list))
	for i, e := range f.list {
		out[i] = e.name + "=" + strings.Join(e.values, ",")
	}
	return out
}

// Empty says whether no setting is given.
func (f *Flag) Empty() bool { return len(f.list) == 0 }

// Axes are the settings given several values, as sweep axes named
// result.ServerOption(name).
func (f *Flag) Axes() []sweep.Axis {
	var out []sweep.Axis
	for _, e := range f.list {
		if len(e.values) > 1 {
			out = append(out, sweep.Axis{Name: result.ServerOption(e.name), Values: e.values})
		}
	}
	return out
}

// Pin gives the setting option names (an axis's name) the one value of a
// sweep's cell; false if it names no setting of f.
func (f *Flag) Pin(option, value string) bool {
	name, ok := result.ServerSettingOf(option)
	if !ok {
		return false
	}
	for i := range f.list {
		if f.list[i].name == name {
			f.list[i].values = []string{value}
			return true
		}
	}
	return false
}

// Want is one setting's value for a run.
type Want struct{ Name, Value string }

// Run is the value of each setting for one run: every setting must have
// one value by now (a sweep's cell pins the axes).
func (f *Flag) Run() ([]Want, error) {
	out := make([]Want, len(f.list))
	for i, e := range f.list {
		if len(e.values) != 1 {
			return nil, fmt.Errorf("--server-set %s has %d values for one run", e.name, len(e.values))
		}
		out[i] = Want{e.name, e.values[0]}
	}
	return out, nil
}

// Opener opens the target the settings are changed on.
type Opener func(ctx context.Context) (target.Target, error)

// Session is the settings of one run or sweep: what they were, and
// whether they have been changed since.
type Session struct {
	open       Opener
	restartCmd string
	out        io.Writer
	orig       []target.Setting
	// changed: a run has set a value, so the originals must go back;
	// restarted: some setting took a restart, so going back takes one.
	changed, restarted bool
	// readBackWait bounds the wait for a reloaded value to reach a new
	// connection (PostgreSQL's postmaster reloads on a signal).
	readBackWait time.Duration
}

// Check reads every setting of f on the target open gives, and checks
// every value with the server, before anything runs: an unknown setting,
// a refused value, a missing privilege, or a setting that needs a
// restart without restartCmd, is an error of one line. out receives what
// the session does (restarts, the restore).
func Check(ctx context.Context, open Opener, f *Flag, restartCmd string, out io.Writer) (*Session, error) {
	tg, err := open(ctx)
	if err != nil {
		return nil, err
	}
	defer tg.Close()
	sc, err := openSettings(ctx, tg)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	s := &Session{open: open, restartCmd: restartCmd, out: out, readBackWait: 10 * time.Second}
	for _, e := range f.list {
		set, err := sc.Lookup(ctx, e.name)
		if err != nil {
			return nil, fmt.Errorf("--server-set %s: %w", e.name, err)
		}
		if set.Restart && restartCmd == "" {
			return nil, fmt.Errorf("--server-set %s: the server applies it only when it starts: give --restart-cmd, the command that restarts it (e.g. 'systemctl restart postgresql')", e.name)
		}
		for _, v := range e.values {
			if err := sc.Check(ctx, set, v); err != nil {
				return nil, fmt.Errorf("--server-set %s=%s: %w", e.name, v, err)
			}
		}
		s.orig = append(s.orig, set)
	}
	return s, nil
}

// openSettings opens tg's settings connection, if tg has settings dbmark
// can change.
func openSettings(ctx context.Context, tg target.Target) (target.SettingsConn, error) {
	st, ok := tg.(target.Setter)
	if !ok {
		return nil, fmt.Errorf("--server-set: dbmark cannot change the settings of a %s target", tg.Kind())
	}
	return st.OpenSettings(ctx)
}

func (s *Session) original(name string) (target.Setting, bool) {
	for _, o := range s.orig {
		if strings.EqualFold(o.Name, name) {
			return o, true
		}
	}
	return target.Setting{}, false
}

// Apply sets wants on tg, the run's own target: a value already in
// effect is left alone, the others are set, then reloaded, or the server
// is restarted when one needs it. Each value is then read back on a new
// connection, and must be the one given.
func (s *Session) Apply(ctx context.Context, tg target.Target, wants []Want) ([]result.ServerSetting, error) {
	sc, err := openSettings(ctx, tg)
	if err != nil {
		return nil, err
	}
	changed, needRestart := false, false
	var env []string
	for _, w := range wants {
		o, ok := s.original(w.Name)
		if !ok {
			sc.Close()
			return nil, fmt.Errorf("--server-set %s was not checked before the run", w.Name)
		}
		env = append(env, envOf(o.Name, w.Value))
		cur, err := sc.Lookup(ctx, w.Name)
		if err != nil {
			sc.Close()
			return nil, fmt.Errorf("--server-set %s: %w", w.Name, err)
		}
		// In effect already (an earlier cell's, or the server's own):
		// nothing to set, no reload, no restart.
		if sc.Same(cur, w.Value, cur.Value) {
			continue
		}
		if err := sc.Set(ctx, o, w.Value); err != nil {
			sc.Close()
			return nil, fmt.Errorf("--server-set %s=%s: %w", w.Name, w.Value, err)
		}
		s.changed = true
		changed = true
		needRestart = needRestart || o.Restart
	}
	if changed {
		err = sc.Apply(ctx)
	}
	sc.Close()
	if err != nil {
		return nil, fmt.Errorf("--server-set: apply the settings: %w", err)
	}
	if needRestart {
		if err := s.restart(ctx, tg, env); err != nil {
			return nil, err
		}
	}
	return s.readBack(ctx, tg, wants)
}

// envOf is the variable that gives the restart command a setting's value:
// DBMARK_SET_work_mem=64MB (a MariaDB read-only variable can be set only
// by the command, from these).
func envOf(name, value string) string {
	return "DBMARK_SET_" + strings.ReplaceAll(name, ".", "_") + "=" + value
}

func (s *Session) restart(ctx context.Context, tg target.Target, env []string) error {
	fmt.Fprintf(s.out, "restarting the server for its settings: %s\n", s.restartCmd)
	s.restarted = true
	if err := restart.Run(ctx, s.restartCmd, env, s.out, tg, restart.DefaultWait); err != nil {
		return fmt.Errorf("--restart-cmd: %w", err)
	}
	return nil
}

// readBack reads each setting on a new connection until it is the value
// wanted (a reload reaches new connections a moment later) or
// readBackWait has passed.
func (s *Session) readBack(ctx context.Context, tg target.Target, wants []Want) ([]result.ServerSetting, error) {
	deadline := time.Now().Add(s.readBackWait)
	for {
		out, err := s.readOnce(ctx, tg, wants)
		var miss *mismatch
		if !errors.As(err, &miss) || time.Now().After(deadline) || ctx.Err() != nil {
			return out, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type mismatch struct{ name, want, got string }

func (m *mismatch) Error() string {
	return fmt.Sprintf("--server-set %s=%s: a new connection reads %s: it did not take effect (is it set for the user or the database too?)", m.name, m.want, m.got)
}

func (s *Session) readOnce(ctx context.Context, tg target.Target, wants []Want) ([]result.ServerSetting, error) {
	sc, err := openSettings(ctx, tg)
	if err != nil {
		return nil, fmt.Errorf("--server-set: read the settings back: %w", err)
	}
	defer sc.Close()
	var out []result.ServerSetting
	for _, w := range wants {
		o, _ := s.original(w.Name)
		got, err := sc.Lookup(ctx, w.Name)
		if err != nil {
			return nil, fmt.Errorf("--server-set %s: read it back: %w", w.Name, err)
		}
		if !sc.Same(got, w.Value, got.Value) {
			return nil, &mismatch{w.Name, w.Value, got.Value}
		}
		out = append(out, result.ServerSetting{Name: o.Name, Original: o.Value, Set: w.Value, ReadBack: got.Value, Restart: o.Restart})
	}
	return out, nil
}

// restoreWait bounds the wait for a server that does not answer when the
// settings are to go back (it crashed and is being started again by
// whatever runs it); with a restart command, dbmark waits less before it
// starts the server itself: the run has waited for it already.
const (
	restoreWait        = time.Minute
	restoreWaitRestart = 5 * time.Second
)

// Restore puts every setting back as Check found it, if a run changed
// any: also when ctx is cancelled (Ctrl-C) or the server went away and
// came back; a server that stays away is restarted with the restart
// command when there is one. The values are read back, and the line
// written to out says what was restored.
func (s *Session) Restore(ctx context.Context) error {
	if s == nil || !s.changed {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	tg, err := s.open(ctx)
	if err != nil {
		return fmt.Errorf("restore the server's settings: %w", err)
	}
	defer tg.Close()
	// A setting that took a restart takes one to go back, also after a
	// server that crashed was started again.
	needRestart := s.restarted
	wait := restoreWait
	if s.restartCmd != "" {
		wait = restoreWaitRestart
	}
	if err := restart.Wait(ctx, tg, wait); err != nil {
		if s.restartCmd == "" {
			return fmt.Errorf("restore the server's settings: %w", err)
		}
		fmt.Fprintf(s.out, "the server does not answer (%v)\n", err)
		if err := s.restart(ctx, tg, s.origEnv()); err != nil {
			return fmt.Errorf("restore the server's settings: %w", err)
		}
	}
	sc, err := openSettings(ctx, tg)
	if err != nil {
		return fmt.Errorf("restore the server's settings: %w", err)
	}
	var errs []error
	for _, o := range s.orig {
		if err := sc.Restore(ctx, o); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.Name, err))
		}
	}
	if err := sc.Apply(ctx); err != nil {
		errs = append(errs, err)
	}
	sc.Close()
	if len(errs) > 0 {
		return fmt.Errorf("restore the server's settings: %w", errors.Join(errs...))
	}
	if needRestart {
		if err := s.restart(ctx, tg, s.origEnv()); err != nil {
			return fmt.Errorf("restore the server's settings: %w", err)
		}
	}
	wants := make([]Want, len(s.orig))
	var names []string
	for i, o := range s.orig {
		wants[i] = Want{o.Name, o.Value}
		names = append(names, o.Name+"="+o.Value)
	}
	if _, err := s.readBack(ctx, tg, wants); err != nil {
		return fmt.Errorf("restore the server's settings: %w", err)
	}
	s.changed, s.restarted = false, false
	fmt.Fprintf(s.out, "server settings restored: %s\n", strings.Join(names, " "))
	return nil
}

func (s *Session) origEnv() []string {
	out := make([]string, len(s.orig))
	for i, o := range s.orig {
		out[i] = envOf(o.Name, o.Value)
	}
	return out
}

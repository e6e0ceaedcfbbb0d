package mysql

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	my "github.com/go-sql-driver/mysql"

	"github.com/dbmark/dbmark/internal/target"
)

// OpenSettings opens a connection that changes global variables with SET
// GLOBAL. A read-only variable needs a restart: MySQL 8 keeps its new
// value with SET PERSIST_ONLY; MariaDB has no way to, so there only the
// restart command can set it (it is given the values in its environment).
func (t *Target) OpenSettings(ctx context.Context) (target.SettingsConn, error) {
	c, err := t.conn(ctx)
	if err != nil {
		return nil, err
	}
	return &settingsConn{c: c}, nil
}

type settingsConn struct{ c *Conn }

func (s *settingsConn) Close() error { return s.c.Close() }

// MySQL's error numbers for what a SET GLOBAL can meet.
const (
	errUnknownVariable   = 1193
	errWrongScope        = 1238 // read only, or a session variable
	errAccessDenied      = 1227
	errWrongValue        = 1231
	errWrongType         = 1232
	errSyntax            = 1064
	errPersistNotAllowed = 3630 // not persistable (MySQL 8)
)

// sqlValue writes v as SET takes it: a number as it is, anything else as
// a string (an enumeration's or a boolean's name too).
func sqlValue(v string) string {
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(v) + "'"
}

func myErr(err error) (*my.MySQLError, bool) {
	var me *my.MySQLError
	ok := errors.As(err, &me)
	return me, ok
}

// explain gives the server's refusal in one line, with what to do where
// it is a privilege.
func explain(err error) error {
	me, ok := myErr(err)
	if !ok {
		return err
	}
	if me.Number == errAccessDenied {
		return fmt.Errorf("%s (SET GLOBAL needs SUPER, or SYSTEM_VARIABLES_ADMIN on MySQL 8)", me.Message)
	}
	return fmt.Errorf("%s (error %d)", me.Message, me.Number)
}

func (s *settingsConn) Lookup(ctx context.Context, name string) (target.Setting, error) {
	if err := target.CheckSettingName(name); err != nil {
		return target.Setting{}, err
	}
	name = strings.ToLower(name)
	v, _, err := s.c.QueryRow(ctx, "SELECT @@GLOBAL."+name)
	if me, ok := myErr(err); ok && me.Number == errUnknownVariable {
		return target.Setting{}, fmt.Errorf("the server has no variable %q (see: SHOW GLOBAL VARIABLES)", name)
	}
	if me, ok := myErr(err); ok && me.Number == errWrongScope {
		return target.Setting{}, fmt.Errorf("%s is a session variable: it has no global value to set", name)
	}
	if err != nil {
		return target.Setting{}, fmt.Errorf("read the server's variable %s: %w", name, err)
	}
	st := target.Setting{Name: name, Value: v}
	// Setting a variable to its own value tells whether it can be set
	// at all, and by this user, and changes nothing.
	err = s.c.Exec(ctx, "SET GLOBAL "+name+" = @@GLOBAL."+name)
	if me, ok := myErr(err); ok && me.Number == errWrongScope {
		st.Restart = true
		err = nil
	}
	if err != nil {
		return target.Setting{}, fmt.Errorf("set %s: %w", name, explain(err))
	}
	return st, nil
}

// Check sets value and reads it back, then sets the variable back: the
// server checks a value only when it is set, and may adjust it (a size
// to its block) with no more than a warning. A read-only variable is
// checked once the server has started with it.
func (s *settingsConn) Check(ctx context.Context, st target.Setting, value string) error {
	if st.Restart {
		return nil
	}
	if err := s.Set(ctx, st, value); err != nil {
		return err
	}
	got, _, err := s.c.QueryRow(ctx, "SELECT @@GLOBAL."+st.Name)
	if rerr := s.Restore(ctx, st); err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}
	if !s.Same(st, value, got) {
		return fmt.Errorf("the server took %s for %s", got, value)
	}
	return nil
}

func (s *settingsConn) Set(ctx context.Context, st target.Setting, value string) error {
	if !st.Restart {
		return explain(s.c.Exec(ctx, "SET GLOBAL "+st.Name+" = "+sqlValue(value)))
	}
	err := s.c.Exec(ctx, "SET PERSIST_ONLY "+st.Name+" = "+sqlValue(value))
	if me, ok := myErr(err); ok && (me.Number == errSyntax || me.Number == errUnknownVariable) {
		return nil // MariaDB: the restart command sets it
	}
	return explain(err)
}

func (s *settingsConn) Restore(ctx context.Context, st target.Setting) error {
	if !st.Restart {
		return s.Set(ctx, st, st.Value)
	}
	err := s.c.Exec(ctx, "RESET PERSIST IF EXISTS "+st.Name)
	if me, ok := myErr(err); ok && (me.Number == errSyntax || me.Number == errPersistNotAllowed) {
		return nil
	}
	return explain(err)
}

// Apply has nothing to do: a connection opened after SET GLOBAL starts
// with the new values.
func (s *settingsConn) Apply(context.Context) error { return nil }

func (s *settingsConn) Same(_ target.Setting, want, got string) bool {
	want, got = strings.TrimSpace(want), strings.TrimSpace(got)
	if isWord(want) || isWord(got) {
		a, okA := myBool(want)
		b, okB := myBool(got)
		if okA && okB {
			return a == b
		}
	}
	a, errA := strconv.ParseFloat(want, 64)
	b, errB := strconv.ParseFloat(got, 64)
	if errA == nil && errB == nil {
		return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), 1)
	}
	return strings.EqualFold(want, got)
}

// isWord says whether s is a boolean's name rather than a number.
func isWord(s string) bool {
	switch strings.ToUpper(s) {
	case "ON", "OFF", "TRUE", "FALSE":
		return true
	}
	return false
}

// myBool reads a boolean as SET takes it: ON, TRUE, 1 or OFF, FALSE, 0
// (SELECT @@GLOBAL shows 1 and 0, SHOW VARIABLES ON and OFF).
func myBool(s string) (bool, bool) {
	switch strings.ToUpper(s) {
	case "ON", "TRUE", "1":
		return true, true
	case "OFF", "FALSE", "0":
		return false, true
	}
	return false, false
}

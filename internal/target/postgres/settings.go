package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbmark/dbmark/internal/target"
)

// OpenSettings opens a connection that changes settings with ALTER SYSTEM
// (kept in postgresql.auto.conf) and pg_reload_conf().
func (t *Target) OpenSettings(ctx context.Context) (target.SettingsConn, error) {
	pc, err := t.connectRaw(ctx)
	if err != nil {
		return nil, err
	}
	return &settingsConn{pc: pc}, nil
}

type settingsConn struct{ pc *pgconn.PgConn }

func (c *settingsConn) Close() error { return c.pc.Close(context.Background()) }

// literal quotes s as a string constant (standard_conforming_strings is
// on by default since 9.1).
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (c *settingsConn) Lookup(ctx context.Context, name string) (target.Setting, error) {
	if err := target.CheckSettingName(name); err != nil {
		return target.Setting{}, err
	}
	rows, err := query(ctx, c.pc, `SELECT current_setting(name), coalesce(unit, ''), vartype, context
		FROM pg_settings WHERE name = lower(`+literal(name)+`)`)
	if err != nil {
		return target.Setting{}, fmt.Errorf("read PostgreSQL's setting %s: %w", name, err)
	}
	if len(rows) == 0 {
		return target.Setting{}, fmt.Errorf("PostgreSQL has no setting %q (see: SELECT name FROM pg_settings)", name)
	}
	r := rows[0]
	s := target.Setting{Name: strings.ToLower(name), Value: r[0], Unit: r[1], Kind: r[2]}
	switch r[3] {
	case "internal":
		return target.Setting{}, fmt.Errorf("PostgreSQL's %s is fixed when the server is built or its data directory made: it cannot be set", name)
	case "postmaster":
		s.Restart = true
	}
	// What ALTER SYSTEM wrote before, to put back. Reading the files
	// takes pg_read_all_settings; without it, a value found there is
	// taken as the file's (and RESET when none is).
	rows, err = query(ctx, c.pc, `SELECT setting FROM pg_file_settings
		WHERE name = `+literal(s.Name)+` AND sourcefile LIKE '%postgresql.auto.conf' ORDER BY seqno DESC LIMIT 1`)
	if err == nil && len(rows) == 1 {
		s.Persisted, s.PersistedValue = true, rows[0][0]
	}
	return s, nil
}

func (c *settingsConn) exec(ctx context.Context, sql string) error {
	_, err := c.pc.Exec(ctx, sql).ReadAll()
	return explain(err)
}

// explain gives the server's refusal in one line, with what to do where
// it is a privilege.
func explain(err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	if pgErr.Code == "42501" {
		return fmt.Errorf("%s (ALTER SYSTEM needs a superuser, or GRANT ALTER SYSTEM ON PARAMETER on PostgreSQL 15+)", pgErr.Message)
	}
	return fmt.Errorf("%s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
}

// Check writes value with ALTER SYSTEM, which checks it as the server
// would at a reload, and puts the file back as it was, without a reload:
// nothing running sees it.
func (c *settingsConn) Check(ctx context.Context, s target.Setting, value string) error {
	if err := c.Set(ctx, s, value); err != nil {
		return err
	}
	return c.Restore(ctx, s)
}

func (c *settingsConn) Set(ctx context.Context, s target.Setting, value string) error {
	return c.exec(ctx, "ALTER SYSTEM SET "+s.Name+" = "+literal(value))
}

func (c *settingsConn) Restore(ctx context.Context, s target.Setting) error {
	if s.Persisted {
		return c.exec(ctx, "ALTER SYSTEM SET "+s.Name+" = "+literal(s.PersistedValue))
	}
	return c.exec(ctx, "ALTER SYSTEM RESET "+s.Name)
}

func (c *settingsConn) Apply(ctx context.Context) error {
	return c.exec(ctx, "SELECT pg_reload_conf()")
}

func (c *settingsConn) Same(s target.Setting, want, got string) bool {
	switch s.Kind {
	case "bool":
		a, okA := pgBool(want)
		b, okB := pgBool(got)
		return okA && okB && a == b
	case "integer", "real":
		a, okA := inUnits(want, s.Unit)
		b, okB := inUnits(got, s.Unit)
		return okA && okB && math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), 1)
	}
	return strings.EqualFold(strings.TrimSpace(want), strings.TrimSpace(got))
}

// pgBool reads a boolean as PostgreSQL does (any unambiguous prefix of
// true, false, yes, no, on, off; 1 and 0).
func pgBool(s string) (bool, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, w := range []struct {
		word string
		min  int
		v    bool
	}{{"true", 1, true}, {"false", 1, false}, {"yes", 1, true}, {"no", 1, false}, {"on", 2, true}, {"off", 2, false}, {"1", 1, true}, {"0", 1, false}} {
		if len(s) >= w.min && strings.HasPrefix(w.word, s) {
			return w.v, true
		}
	}
	return false, false
}

// pgUnits are PostgreSQL's memory units in bytes and time units in
// microseconds: a value and its setting's base unit ("8kB", "ms") are
// brought to the same measure to be compared.
var pgUnits = map[string]float64{
	"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40,
	"us": 1, "ms": 1e3, "s": 1e6, "min": 60e6, "h": 3600e6, "d": 86400e6,
}

// inUnits is a number with an optional unit ("64MB", "65536", "1min") in
// bytes or microseconds; a bare number is in the setting's base unit.
func inUnits(v, base string) (float64, bool) {
	v = strings.TrimSpace(v)
	i := len(v)
	for i > 0 && (v[i-1] < '0' || v[i-1] > '9') && v[i-1] != '.' {
		i--
	}
	num, unit := strings.TrimSpace(v[:i]), strings.TrimSpace(v[i:])
	n, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false
	}
	if unit == "" {
		unit = base
	}
	if unit == "" {
		return n, true
	}
	return n * unitSize(unit), unitSize(unit) > 0
}

// unitSize is a unit, perhaps with a count ("8kB"), in bytes or
// microseconds; 0 if unknown.
func unitSize(u string) float64 {
	i := 0
	for i < len(u) && u[i] >= '0' && u[i] <= '9' {
		i++
	}
	mult := 1.0
	if i > 0 {
		mult, _ = strconv.ParseFloat(u[:i], 64)
	}
	return mult * pgUnits[u[i:]]
}

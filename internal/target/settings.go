package target

import (
	"context"
	"fmt"
	"regexp"
)

// Setter is an optional Target capability: changing the engine's settings
// for a run (dbmark's --server-set), in the engine's own words: SET GLOBAL
// on MySQL and MariaDB, ALTER SYSTEM and a reload on PostgreSQL, PRAGMA on
// every connection SQLite opens.
type Setter interface {
	// OpenSettings opens a connection that reads and changes settings.
	OpenSettings(ctx context.Context) (SettingsConn, error)
}

// Setting is one setting as the engine had it when looked up.
type Setting struct {
	Name string
	// Value is the value as the engine shows it ("4MB", "ON", "-2000").
	Value string
	// Restart says that a new value takes effect only once the server
	// starts again (PostgreSQL's postmaster context, MySQL's read-only
	// variables).
	Restart bool
	// Kind and Unit are the engine's type and base unit, for Same.
	Kind, Unit string
	// Persisted is whether the engine's own store of changed settings
	// (PostgreSQL's postgresql.auto.conf) held the setting, and with what:
	// Restore puts that back rather than removing it.
	Persisted      bool
	PersistedValue string
}

// SettingsConn reads and changes settings on one connection. It is used
// by one goroutine.
type SettingsConn interface {
	// Lookup reads the setting's value as a connection opened now sees
	// it, and how a change takes effect. An unknown setting, or one no
	// user can change, is an error that says so.
	Lookup(ctx context.Context, name string) (Setting, error)
	// Check says whether the server accepts value for s and the user may
	// set it, without changing what runs: the error quotes the refusal.
	// A setting that needs a restart may only be checked in part.
	Check(ctx context.Context, s Setting, value string) error
	// Set makes value s's value for the connections opened after Apply,
	// or, for a restart setting, the value the server starts with (where
	// the engine can say so: MariaDB cannot, and then only the restart
	// command can set it).
	Set(ctx context.Context, s Setting, value string) error
	// Restore puts s back as Lookup found it (its value and where it was
	// kept), for the connections opened after Apply or the next start.
	Restore(ctx context.Context, s Setting) error
	// Apply makes what Set and Restore changed take effect without a
	// restart (PostgreSQL's pg_reload_conf).
	Apply(ctx context.Context) error
	// Same says whether got, read back, is the value given as want
	// (units and spellings: "64MB" is "65536kB", "on" is "ON" and "1").
	Same(s Setting, want, got string) bool
	Close() error
}

var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// CheckSettingName refuses a setting name that is not a plain name, so
// that an engine may write it into its SQL as it is.
func CheckSettingName(name string) error {
	if !settingName.MatchString(name) {
		return fmt.Errorf("%q is not a setting's name (letters, digits, _ and .)", name)
	}
	return nil
}

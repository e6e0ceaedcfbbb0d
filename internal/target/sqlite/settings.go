package sqlite

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/dbmark/dbmark/internal/target"
)

// connPragmas are the pragmas --server-set gives: SQLite keeps settings
// per connection, so each connection the target opens runs them first,
// in the order they were set.
type connPragmas struct {
	mu   sync.Mutex
	list [][2]string
}

func (p *connPragmas) set(name, value string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.list {
		if p.list[i][0] == name {
			p.list[i][1] = value
			return
		}
	}
	p.list = append(p.list, [2]string{name, value})
}

func (p *connPragmas) unset(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.list {
		if p.list[i][0] == name {
			p.list = append(p.list[:i], p.list[i+1:]...)
			return
		}
	}
}

// apply runs the pragmas on a connection just opened.
func (p *connPragmas) apply(ctx context.Context, c *Conn) error {
	p.mu.Lock()
	list := append([][2]string(nil), p.list...)
	p.mu.Unlock()
	for _, kv := range list {
		if err := c.Exec(ctx, "PRAGMA "+kv[0]+" = "+pragmaValue(kv[1])); err != nil {
			return fmt.Errorf("PRAGMA %s = %s: %w", kv[0], kv[1], err)
		}
	}
	return nil
}

// pragmaValue writes v as PRAGMA takes it: a number or a keyword as it
// is, anything else quoted.
func pragmaValue(v string) string {
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return v
	}
	if target.CheckSettingName(v) == nil && !strings.Contains(v, ".") {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

// OpenSettings gives the pragmas of the connections this target opens
// from now on; the connection it reads them on is one of those.
func (t *Target) OpenSettings(ctx context.Context) (target.SettingsConn, error) {
	c, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &settingsConn{t: t, c: c.(*Conn)}, nil
}

type settingsConn struct {
	t *Target
	c *Conn
}

func (s *settingsConn) Close() error { return s.c.Close() }

func (s *settingsConn) Lookup(ctx context.Context, name string) (target.Setting, error) {
	if err := target.CheckSettingName(name); err != nil {
		return target.Setting{}, err
	}
	name = strings.ToLower(name)
	// SQLite ignores a pragma it does not know: its own list says.
	known, ok, err := s.c.QueryRow(ctx, "SELECT count(*) FROM pragma_pragma_list WHERE name = '"+name+"'")
	if err != nil {
		return target.Setting{}, fmt.Errorf("list SQLite's pragmas: %w", err)
	}
	if !ok || known == "0" {
		return target.Setting{}, fmt.Errorf("SQLite has no pragma %q (see: PRAGMA pragma_list)", name)
	}
	v, ok, err := s.c.QueryRow(ctx, "PRAGMA "+name)
	if err != nil {
		return target.Setting{}, fmt.Errorf("read PRAGMA %s: %w", name, err)
	}
	if !ok {
		return target.Setting{}, fmt.Errorf("PRAGMA %s has no value to set (it is a command, not a setting)", name)
	}
	return target.Setting{Name: name, Value: v}, nil
}

// Check sets value on a connection of its own, reads it back and sets
// the pragma back: SQLite takes a value it cannot use without a word
// (a synchronous it does not know is FULL).
func (s *settingsConn) Check(ctx context.Context, st target.Setting, value string) error {
	c, err := s.t.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Exec(ctx, "PRAGMA "+st.Name+" = "+pragmaValue(value)); err != nil {
		return err
	}
	got, _, err := c.QueryRow(ctx, "PRAGMA "+st.Name)
	if rerr := c.Exec(ctx, "PRAGMA "+st.Name+" = "+pragmaValue(st.Value)); err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}
	if !s.Same(st, value, got) {
		return fmt.Errorf("SQLite took %s for %s", got, value)
	}
	return nil
}

// Set makes every connection the target opens from now on run the pragma.
func (s *settingsConn) Set(_ context.Context, st target.Setting, value string) error {
	s.t.pragmas.set(st.Name, value)
	return nil
}

// Restore stops setting the pragma on new connections and sets it back
// on this one, which puts back the pragmas kept in the file
// (journal_mode, auto_vacuum); the others end with their connections.
func (s *settingsConn) Restore(ctx context.Context, st target.Setting) error {
	s.t.pragmas.unset(st.Name)
	return s.c.Exec(ctx, "PRAGMA "+st.Name+" = "+pragmaValue(st.Value))
}

func (s *settingsConn) Apply(context.Context) error { return nil }

// pragmaWords are the names of the pragmas whose values read back as
// numbers.
var pragmaWords = map[string]map[string]string{
	"synchronous":   {"off": "0", "normal": "1", "full": "2", "extra": "3"},
	"temp_store":    {"default": "0", "file": "1", "memory": "2"},
	"auto_vacuum":   {"none": "0", "full": "1", "incremental": "2"},
	"secure_delete": {"fast": "2"},
}

func (s *settingsConn) Same(st target.Setting, want, got string) bool {
	norm := func(v string) string {
		v = strings.ToLower(strings.TrimSpace(v))
		if n, ok := pragmaWords[st.Name][v]; ok {
			return n
		}
		switch v {
		case "on", "yes", "true":
			return "1"
		case "off", "no", "false":
			return "0"
		}
		return v
	}
	a, b := norm(want), norm(got)
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil {
		return math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), 1)
	}
	return a == b
}

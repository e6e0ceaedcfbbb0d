package pgbench

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

func env(vars map[string]string) Env {
	return Env{Getenv: func(k string) string { return vars[k] }, User: "osuser",
		ReadFile: func(name string) ([]byte, error) {
			if name == "ok.sql" {
				return []byte("SELECT 1;\n"), nil
			}
			return nil, &os.PathError{Op: "open", Path: name, Err: syscall.ENOENT}
		}}
}

// TestParseGrammar: getopt_long's grammar as pgbench gets it: clustered
// short options, attached and separate values, unique prefixes of long
// names, "--" and arguments anywhere (GNU getopt moves them last).
func TestParseGrammar(t *testing.T) {
	inv, err := Parse(strings.Fields("mydb -nSc4 -j2 --tran 7 --proto=prepared -Dx=1 -- -notanoption"), env(nil))
	if err == nil {
		t.Fatalf("two arguments taken: %+v", inv)
	}
	inv, err = Parse(strings.Fields("mydb -nSc4 -j2 --tran 7 --proto=prepared -Dx=1 -b tpcb@3"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []ScriptSpec{{Builtin: true, Name: "select-only", Weight: 1}, {Builtin: true, Name: "tpcb-like", Weight: 3}}
	if inv.DBName != "mydb" || !inv.NoVacuum || inv.Clients != 4 || inv.Jobs != 2 || inv.Transactions != 7 ||
		inv.QueryMode != "prepared" || !reflect.DeepEqual(inv.Defines, []string{"x=1"}) || !reflect.DeepEqual(inv.Scripts, want) {
		t.Errorf("parsed %+v", inv)
	}
	// -j beyond -c is cut to -c, as pgbench does.
	if inv, err := Parse([]string{"-c2", "-j8"}, env(nil)); err != nil || inv.Jobs != 2 || inv.Transactions != 10 {
		t.Errorf("-c2 -j8: %+v, %v", inv, err)
	}
	// An ambiguous prefix is getopt's error.
	_, err = Parse([]string{"--p", "1"}, env(nil))
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.HasPrefix(ue.Lines[0], "pgbench: option '--p' is ambiguous; possibilities:") {
		t.Errorf("--p: %v", err)
	}
}

// TestParseDatabase: the database is the argument, else PGDATABASE, else
// PGUSER, else the OS user, as pgbench names it.
func TestParseDatabase(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		args []string
		want string
	}{
		{nil, nil, "osuser"},
		{map[string]string{"PGUSER": "u"}, nil, "u"},
		{map[string]string{"PGUSER": "u", "PGDATABASE": "d"}, nil, "d"},
		{map[string]string{"PGDATABASE": "d"}, []string{"arg"}, "arg"},
	} {
		inv, err := Parse(c.args, env(c.vars))
		if err != nil || inv.DBName != c.want {
			t.Errorf("%v %v: database %q (%v), want %q", c.vars, c.args, inv.DBName, err, c.want)
		}
	}
}

// TestParseInit: -i's steps as pgbench runs them: -n drops v, --foreign-keys
// adds f, --partitions alone means range.
func TestParseInit(t *testing.T) {
	inv, err := Parse(strings.Fields("-i -n --foreign-keys --partitions=3 -s 5"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Mode != ModeInit || inv.InitSteps != "dtg pf" || inv.PartitionMethod != "range" || inv.Scale != 5 {
		t.Errorf("parsed %+v", inv)
	}
}

// TestParseScripts: a -f file is read and parsed while the options are,
// and its failures are pgbench's.
func TestParseScripts(t *testing.T) {
	if inv, err := Parse([]string{"-f", "ok.sql@2"}, env(nil)); err != nil || inv.Scripts[0] != (ScriptSpec{Name: "ok.sql", Weight: 2}) {
		t.Errorf("-f ok.sql@2: %+v, %v", inv, err)
	}
	_, err := Parse([]string{"-f", "missing.sql"}, env(nil))
	if err == nil || err.Error() != `pgbench: error: could not open file "missing.sql": No such file or directory` {
		t.Errorf("missing file: %v", err)
	}
}

// TestAtof: C's atof takes the number a string starts with.
func TestAtof(t *testing.T) {
	for s, want := range map[string]float64{"5x": 5, " 2.5e1y": 25, "abc": 0, "-3": -3} {
		if got := atof(s); got != want {
			t.Errorf("atof(%q) = %v, want %v", s, got, want)
		}
	}
}

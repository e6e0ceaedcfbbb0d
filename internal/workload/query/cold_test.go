package query

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/enginetest"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/sqlite"
)

// --cold is refused, in one line, wherever it cannot make a run cold.
func TestColdRefused(t *testing.T) {
	tgs := enginetest.Offline(t) // postgres and mysql at 127.0.0.1, then sqlite
	pg, lite := tgs[0], tgs[2]
	for _, c := range []struct {
		name    string
		o       Options
		canDrop bool
		local   bool
		want    string
	}{
		{"not root, no restart", Options{Streams: 1, Cold: true}, false, true, "needs root"},
		{"not root, SQLite", Options{Streams: 1, Cold: true}, false, false, "needs root"},
		{"streams", Options{Streams: 4, Cold: true}, true, true, "--cold with --streams 4"},
		{"restart SQLite", Options{Streams: 1, Cold: true, RestartCmd: []string{"true"}}, true, false, "no server to restart"},
		{"not root, restart", Options{Streams: 1, Cold: true, RestartCmd: []string{"true"}}, false, true, ""},
		{"root", Options{Streams: 1, Cold: true}, true, true, ""},
		{"root, SQLite", Options{Streams: 1, Cold: true}, true, false, ""},
	} {
		tg := pg
		if !c.local {
			tg = lite
		}
		err := checkCold(tg, &c.o, c.canDrop)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %v, want one line with %q", c.name, err, c.want)
		}
	}
}

func TestOnThisMachine(t *testing.T) {
	for _, tg := range enginetest.Offline(t) {
		if !onThisMachine(tg) {
			t.Errorf("%s at %s is not taken for this machine", tg.Kind(), tg.Redacted())
		}
	}
}

// A server on another machine cannot have its page cache dropped from
// here: --cold needs --restart-cmd for it.
func TestColdRemoteServerNeedsARestart(t *testing.T) {
	reg := target.NewRegistry()
	postgres.Register(reg)
	tg, err := reg.Open(context.Background(), "postgres://bench@192.0.2.10:5432/bench", target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if onThisMachine(tg) {
		t.Fatal("192.0.2.10 is taken for this machine")
	}
	if err := checkCold(tg, &Options{Streams: 1, Cold: true}, true); err == nil || !strings.Contains(err.Error(), "on another machine") {
		t.Errorf("a remote server without --restart-cmd: %v", err)
	}
	if err := checkCold(tg, &Options{Streams: 1, Cold: true, RestartCmd: []string{"ssh db sudo systemctl restart postgresql"}}, false); err != nil {
		t.Errorf("a remote server with --restart-cmd: %v", err)
	}
}

// The restart command runs through the runner --server-set uses: a
// command that fails is refused with its last line, one that succeeds
// returns once the server answers.
func TestRestartCommand(t *testing.T) {
	ctx := context.Background()
	tg := sqlite.New(filepath.Join(t.TempDir(), "restart.db"))
	defer tg.Close()
	err := osCold{}.restart(ctx, "echo starting; echo 'no such service' >&2; exit 3", tg)
	if err == nil || !strings.Contains(err.Error(), "--restart-cmd") || !strings.Contains(err.Error(), "no such service") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a failing command: %v; want one line naming --restart-cmd and its last line", err)
	}
	mark := filepath.Join(t.TempDir(), "ran")
	if err := (osCold{}).restart(ctx, "touch "+mark, tg); err != nil {
		t.Fatalf("a command that succeeds: %v", err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
}

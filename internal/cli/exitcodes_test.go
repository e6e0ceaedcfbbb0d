package cli_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/cli"
)

// TestReadmeExitCodes holds README.md's and docs/faults.md's statement of
// the exit codes to the code: a degraded run exits 0, like an ok one (the
// binary's own exit is checked by TestLostConnectionsReconnect).
func TestReadmeExitCodes(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)Exit codes: (.*?)\n\n`).FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md states no exit codes")
	}
	text := strings.Join(strings.Fields(string(m[1])), " ")
	for _, want := range []string{
		"0 ok, or degraded",
		"1 bad options or a failed setup",
		"2 the run hit an error it could not survive",
		"130 interrupted",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("README.md's exit codes lack %q: %s", want, text)
		}
	}
	if cli.ExitOK != 0 || cli.ExitUsage != 1 || cli.ExitRunFailed != 2 || cli.ExitInterrupted != 130 {
		t.Errorf("the exit codes changed: README.md must follow")
	}
	f, err := os.ReadFile("../../docs/faults.md")
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(strings.Fields(string(f)), " "); !strings.Contains(s, "A degraded run exits with code 0") {
		t.Error("docs/faults.md does not say that a degraded run exits with code 0")
	}
}

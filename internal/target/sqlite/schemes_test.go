package sqlite_test

import (
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/sqlite"
)

// TestSchemesArePaths keeps target.PathIsFile in step with the schemes
// the engine registers: their URLs' paths are files, which redaction
// treats as such.
func TestSchemesArePaths(t *testing.T) {
	reg := target.NewRegistry()
	sqlite.Register(reg)
	for _, s := range reg.Schemes() {
		if !target.PathIsFile(s) {
			t.Errorf("scheme %q: target.PathIsFile says its path is not a file", s)
		}
	}
}

package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	if err := CheckWritable(filepath.Join(dir, "r.json")); err != nil {
		t.Fatalf("a new file in an existing directory: %v", err)
	}
	file := filepath.Join(dir, "exists.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckWritable(file); err != nil {
		t.Fatalf("an existing file: %v", err)
	}
	for path, want := range map[string]string{
		dir:                                     "is a directory",
		filepath.Join(dir, "missing", "r.json"): "does not exist",
		filepath.Join(file, "r.json"):           "is not a directory",
	} {
		err := CheckWritable(path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckWritable(%s) = %v, want %q", path, err, want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the check left files: %v", ents)
	}
}

// WriteFile refuses a directory before making a temporary file beside it.
func TestWriteFileRefusesADirectory(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(dir, &Result{SchemaVersion: SchemaVersion})
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("WriteFile(dir) = %v, want a refusal naming the directory", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		t.Errorf("files left beside the directory: %v", ents)
	}
}

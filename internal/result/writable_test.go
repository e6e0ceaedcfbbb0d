package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// A writer of r1.json killed before its rename left .r1.json.tmpNNN: the
// next check of r1.json removes it, and nothing else (another file's
// temporary file, a name not of WriteFile's pattern, one newer than this
// process, which a concurrent writer may still be writing).
func TestCheckWritableRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	files := map[string]bool{ // name: removed
		".r1.json.tmp123456":    true,
		".r1.json.tmp7":         true,
		".r1.json.tmp":          false,
		".r1.json.tmpx1":        false,
		"r1.json.tmp123":        false,
		".r2.json.tmp123":       false,
		".r1.json.tmp999-fresh": false,
		"r1.json":               false,
	}
	for name := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	fresh := filepath.Join(dir, ".r1.json.tmp424242")
	if err := os.WriteFile(fresh, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	files[".r1.json.tmp424242"] = false
	if err := CheckWritable(filepath.Join(dir, "r1.json")); err != nil {
		t.Fatal(err)
	}
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := os.IsNotExist(err); gone != removed {
			t.Errorf("%s: removed %v, want %v", name, gone, removed)
		}
	}
}

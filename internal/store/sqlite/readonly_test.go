package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/store/sqlite"
)

func TestOpenReadNeedsSetupWhereThereIsNoStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	if _, err := sqlite.OpenRead(context.Background(), path); !errors.Is(err, sqlite.ErrNeedsSetup) {
		t.Fatalf("OpenRead of a missing store: %v, want ErrNeedsSetup", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenRead created the store: %v", err)
	}
	db, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = sqlite.OpenRead(context.Background(), path)
	if err != nil {
		t.Fatalf("OpenRead of an up-to-date store: %v", err)
	}
	defer db.Close()
	if _, err := db.Exec("DELETE FROM runs"); err == nil {
		t.Error("a store opened for reading took a write")
	}
}

// Another program's SQLite file is not migrated into.
func TestOpenRefusesAnotherProgramsDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	_, err = sqlite.Open(context.Background(), path, nil)
	if err == nil || !strings.Contains(err.Error(), "not a dbmark results store") {
		t.Fatalf("Open of another program's database: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the other program's database was modified")
	}
}

package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/store"
	"github.com/dbmark/dbmark/internal/store/storetest"
)

func TestOpenDefaultPath(t *testing.T) {
	home := filepath.Join(t.TempDir(), "dbmark-home")
	t.Setenv("DBMARK_HOME", home)
	p, err := store.DefaultPath()
	if err != nil || p != filepath.Join(home, "results.db") {
		t.Fatalf("DefaultPath = %q, %v", p, err)
	}
	s, err := store.Open(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := storetest.NewResult(uuid.NewString(), time.Now())
	if _, err := s.Save(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("no store at the default path: %v", err)
	}
}

func TestOpenRejectsUnknownScheme(t *testing.T) {
	_, err := store.Open(context.Background(), "mysql://root:hunter2@db/results", nil)
	if err == nil || !strings.Contains(err.Error(), "postgres://") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v, want one listing what is accepted, without the password", err)
	}
}

// TestSaveFailsAfterWrite fails saves between their write and their commit,
// which only the store's own tests can reach, and checks that nothing of
// them is left: not a new run, not a change to a run saved before.
func TestSaveFailsAfterWrite(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		testSaveFailsAfterWrite(t, filepath.Join(t.TempDir(), "results.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		testSaveFailsAfterWrite(t, storetest.PostgresDSN(t))
	})
}

func testSaveFailsAfterWrite(t *testing.T, dsn string) {
	ctx := context.Background()
	s, err := store.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	old := storetest.NewResult(uuid.NewString(), start)
	id, err := s.Save(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		l, err := s.List(ctx, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l) != 1 || l[0].ID != id || l[0].Headline != old.Summary.Headline {
			t.Errorf("%s: list = %+v, want only run %d as first saved", what, l, id)
		}
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Summary.Headline != old.Summary.Headline || !got.StartedAt.Equal(old.StartedAt) {
			t.Errorf("%s: run %d changed: headline %v, started %v", what, id, got.Summary.Headline, got.StartedAt)
		}
	}
	replacement := storetest.NewResult(old.ID, start.Add(time.Hour))
	replacement.Summary.Headline = 1
	fresh := storetest.NewResult(uuid.NewString(), start.Add(2*time.Hour))

	// An error after the write, as from a full disk at commit.
	boom := errors.New("boom")
	store.SetBeforeCommit(s, func(context.Context) error { return boom })
	for _, r := range []*result.Result{replacement, fresh} {
		if _, err := s.Save(ctx, r); !errors.Is(err, boom) || !strings.Contains(err.Error(), r.ID) {
			t.Errorf("save %s: err = %v, want boom naming the run", r.ID, err)
		}
		check("after an error")
	}

	// Ctrl-C after the write: the commit must not happen.
	for _, r := range []*result.Result{replacement, fresh} {
		cctx, cancel := context.WithCancel(ctx)
		store.SetBeforeCommit(s, func(context.Context) error { cancel(); return nil })
		if _, err := s.Save(cctx, r); !errors.Is(err, context.Canceled) {
			t.Errorf("save %s: err = %v, want context.Canceled", r.ID, err)
		}
		check("after a cancellation")
	}
	if _, err := s.Resolve(ctx, fresh.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("resolve the run whose saves failed: err = %v, want ErrNotFound", err)
	}

	// The store still works, and the failed saves took nothing.
	store.SetBeforeCommit(s, nil)
	if id2, err := s.Save(ctx, replacement); err != nil || id2 != id {
		t.Fatalf("save after failures = %d, %v; want %d", id2, err, id)
	}
	if _, err := s.Save(ctx, fresh); err != nil {
		t.Fatal(err)
	}
}

// An explicit store path in a directory that does not exist is refused,
// as --json's is, not created along with a new empty store.
func TestStoreInAMissingDirectoryIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "no", "such")
	path := filepath.Join(dir, "x.db")
	_, err := store.Open(context.Background(), path, nil)
	if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), "\n") {
		t.Errorf("--store %s: %v; want one line saying the directory does not exist", path, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the directory was created: %v", err)
	}
}

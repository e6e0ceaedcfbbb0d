package postgres

import (
	"context"
	"os"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/targettest"
)

// TestLargeAnswerRoomIsGivenBack: a connection that once read a 4 MB row
// does not keep a 4 MB buffer for the rest of the run.
func TestLargeAnswerRoomIsGivenBack(t *testing.T) {
	raw := os.Getenv("DBMARK_TEST_POSTGRES")
	if raw == "" {
		t.Skip("DBMARK_TEST_POSTGRES is not set: no PostgreSQL server to test against (make test starts one)")
	}
	_, tc := targettest.Dial(t, Open, raw, target.Options{PGMode: ModeSimple})
	c := tc.(*Conn)
	row, err := c.RunText(context.Background(), []byte("SELECT repeat('y', 4 << 20)"))
	if err != nil || len(row.Values[0]) != 4<<20 {
		t.Fatalf("4 MB row: %v", err)
	}
	if len(c.w.in.Buf) > target.InBufKeep {
		t.Fatalf("read buffer %d bytes after the answer, want at most %d", len(c.w.in.Buf), target.InBufKeep)
	}
	if _, err := c.RunText(context.Background(), []byte("SELECT 'small'")); err != nil {
		t.Fatal(err)
	}
	if n := cap(c.res.row.Values[0]); n > target.InBufKeep {
		t.Fatalf("the kept row holds %d bytes of room after a small value", n)
	}
}

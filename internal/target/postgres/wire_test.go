package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/targettest"
)

func connect(t *testing.T, mode string) *postgres.Conn {
	t.Helper()
	raw := os.Getenv("DBMARK_TEST_POSTGRES")
	if raw == "" {
		t.Skip("DBMARK_TEST_POSTGRES is not set: no PostgreSQL server to test against (make test starts one)")
	}
	_, c := targettest.Dial(t, postgres.Open, raw, target.Options{PGMode: mode})
	return c.(*postgres.Conn)
}

// TestStatementsShareTheSocketWithPgconn runs statements, which speak the
// protocol themselves, between operations pgconn carries out (PREPARE,
// COPY, a pipeline) on one connection, in every mode, with answers
// larger than the read buffer, NULLs and empty strings, an error in the
// middle of several statements and a COPY the server asks data for: each
// answer is the one expected and the connection stays usable.
func TestStatementsShareTheSocketWithPgconn(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{postgres.ModePrepared, postgres.ModeExtended, postgres.ModeSimple} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, mode)
			table := "wire_" + mode
			for _, s := range []string{"DROP TABLE IF EXISTS " + table, "CREATE TABLE " + table + " (id int PRIMARY KEY, v text)"} {
				if err := c.Exec(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			t.Cleanup(func() { _ = c.Exec(ctx, "DROP TABLE IF EXISTS "+table) })

			n, err := c.BulkInsert(ctx, table, []string{"id", "v"}, &rows{n: 3})
			if err != nil || n != 3 {
				t.Fatalf("COPY: %d rows, %v", n, err)
			}
			big, err := c.Prepare(ctx, "SELECT repeat('x', $1::int) AS big, NULL::text AS nothing, ''::text AS empty")
			if err != nil {
				t.Fatal(err)
			}
			for _, size := range []int64{1, 100_000, 3_000_000, 5} {
				row, err := big.(target.RowStmt).RunRow(ctx, []target.Value{target.IntVal(size)})
				if err != nil {
					t.Fatalf("%d bytes: %v", size, err)
				}
				if row.Rows != 1 || strings.Join(row.Columns, ",") != "big,nothing,empty" {
					t.Fatalf("%d bytes: %d rows, columns %v", size, row.Rows, row.Columns)
				}
				if !bytes.Equal(row.Values[0], bytes.Repeat([]byte("x"), int(size))) {
					t.Fatalf("%d bytes: got %d bytes back", size, len(row.Values[0]))
				}
				if row.Values[1] != nil || row.Values[2] == nil || len(row.Values[2]) != 0 {
					t.Fatalf("NULL and '' came back as %q (nil %v) and %q (nil %v)", row.Values[1], row.Values[1] == nil, row.Values[2], row.Values[2] == nil)
				}
			}

			upd, err := c.Prepare(ctx, "UPDATE "+table+" SET v = $1 WHERE id <= $2")
			if err != nil {
				t.Fatal(err)
			}
			if n, err := upd.Run(ctx, []target.Value{target.StrVal([]byte("it's")), target.IntVal(2)}); err != nil || n != 2 {
				t.Fatalf("UPDATE: %d rows, %v", n, err)
			}
			if mode != postgres.ModeSimple {
				pl, err := c.StartPipeline(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for i := range 3 {
					if err := pl.Queue(upd, []target.Value{target.StrVal([]byte("p")), target.IntVal(int64(i))}); err != nil {
						t.Fatal(err)
					}
				}
				if err := pl.End(ctx); err != nil {
					t.Fatal(err)
				}
			}

			// An error among several statements: the first error, and the
			// connection is ready for the next statement.
			_, err = c.RunText(ctx, []byte("SELECT 1; SELECT 1/0; SELECT 2"))
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "22012" {
				t.Fatalf("division by zero among statements: %v", err)
			}
			_, err = c.RunText(ctx, []byte("COPY "+table+" FROM STDIN"))
			if !errors.As(err, &pgErr) || pgErr.Code != "57014" {
				t.Fatalf("COPY FROM STDIN in a statement: %v, want the server's 57014 after the client refused to send data", err)
			}
			row, err := c.RunText(ctx, []byte("SELECT count(*) AS n, string_agg(v, ',' ORDER BY id) AS v FROM "+table))
			if err != nil {
				t.Fatal(err)
			}
			want := "it's,it's,row"
			if mode != postgres.ModeSimple {
				want = "p,p,row"
			}
			if row.Rows != 1 || string(row.Values[0]) != "3" || string(row.Values[1]) != want {
				t.Fatalf("after everything: %d rows %q, want 3 and %q", row.Rows, row.Values, want)
			}
			if err := upd.Close(); err != nil {
				t.Fatalf("deallocate after statements: %v", err)
			}
		})
	}
}

type rows struct{ i, n int }

func (r *rows) Next(dst []target.Value) bool {
	if r.i == r.n {
		return false
	}
	r.i++
	dst[0], dst[1] = target.IntVal(int64(r.i)), target.StrVal([]byte("row"))
	return true
}

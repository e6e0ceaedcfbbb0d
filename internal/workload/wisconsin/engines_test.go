package wisconsin_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/sqlite"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/wisconsin"
	"github.com/dbmark/dbmark/internal/workload/workloadtest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// testDB is the database the PostgreSQL and MariaDB tests work in.
const testDB = "dbmark_wisconsin"

// engines are SQLite always, and PostgreSQL and MariaDB when the test
// servers' settings are in the environment (workloadtest.Engines).
func engines(t *testing.T) []workloadtest.Target {
	return workloadtest.Targets(t, testDB, target.Options{Logger: quiet})
}

// prepared cleans up and prepares the relations at scale under seed.
func prepared(t *testing.T, tg target.Target, scale int64, seed uint64) {
	t.Helper()
	ctx := context.Background()
	w := wisconsin.New()
	w.Opts().Scale = scale
	env := workload.Env{Target: tg, Logger: quiet, Threads: 2, Seed: seed, Progress: io.Discard}
	if err := w.Cleanup(ctx, env); err != nil {
		t.Fatalf("cleanup: %v", err)
	}
	if err := w.Prepare(ctx, env); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	if err := w.Prepared(ctx, env); err != nil {
		t.Fatalf("prepared: %v", err)
	}
	t.Cleanup(func() {
		if err := w.Cleanup(ctx, env); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
}

// suite is the queries of the prepared data with their first columns.
type suite struct {
	qs    []wisconsin.Query
	first []string
}

func loadSuite(t *testing.T, ctx context.Context, tg target.Target, c target.Conn) suite {
	t.Helper()
	data, err := wisconsin.ReadData(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := wisconsin.Suite(tg.Dialect(), data)
	if err != nil {
		t.Fatal(err)
	}
	first, err := wisconsin.FirstColumns(tg.Dialect(), data)
	if err != nil {
		t.Fatal(err)
	}
	return suite{qs, first}
}

// answer runs query i as a runner does and says what it got: the
// statement itself gives the rows (returned or affected), and the sum of
// a query's first column is read by wrapping it, since the engines'
// connections hand a caller no rows to sum.
func (s suite) answer(ctx context.Context, c target.Conn, i int) (wisconsin.Answer, error) {
	q := s.qs[i]
	st, err := c.Prepare(ctx, q.SQL)
	if err != nil {
		return wisconsin.Answer{}, fmt.Errorf("prepare %s: %w", q.Label, err)
	}
	rows, err := st.Run(ctx, nil)
	st.Close()
	if err != nil {
		return wisconsin.Answer{}, fmt.Errorf("run %s: %w", q.Label, err)
	}
	a := wisconsin.Answer{Rows: rows}
	if s.first[i] != "" {
		sum, err := target.QueryInt(ctx, c, "SELECT SUM("+s.first[i]+") FROM ("+q.SQL+") q")
		if err != nil {
			return a, fmt.Errorf("sum %s: %w", q.Label, err)
		}
		a.Sum, a.SumValid = sum, true
	}
	return a, nil
}

// checked runs query i and checks its answer.
func (s suite) checked(ctx context.Context, c target.Conn, i int) error {
	a, err := s.answer(ctx, c, i)
	if err != nil {
		return err
	}
	if err := s.qs[i].Check(a); err != nil {
		return fmt.Errorf("%s: %w", s.qs[i].Label, err)
	}
	return nil
}

// The suite is the paper's 32 queries, numbered in order.
func TestSuiteShape(t *testing.T) {
	tg := sqlite.New(t.TempDir() + "/x.db")
	qs, err := wisconsin.Suite(tg.Dialect(), wisconsin.Data{Scale: 10_000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 32 {
		t.Fatalf("%d queries, want 32", len(qs))
	}
	for i, q := range qs {
		if !strings.HasPrefix(q.Label, fmt.Sprintf("q%d_", i+1)) || q.SQL == "" || q.Check == nil {
			t.Errorf("query %d: label %q, %d bytes of SQL, check %v", i+1, q.Label, len(q.SQL), q.Check != nil)
		}
	}
	if _, err := wisconsin.Suite(tg.Dialect(), wisconsin.Data{Scale: 1050}); err == nil {
		t.Error("a scale that is no multiple of 100 was taken")
	}
}

// Every answer checks out on every engine at two scales: in the paper's
// order and, at the small scale, again, then each query three times in a
// row (a runner's iterations, the write queries included), and the reads
// once more in reverse order. (The large scale runs once: MariaDB joins
// relations without indexes by nested loops, seconds a join at 10,000.)
func TestAnswersOnEveryEngine(t *testing.T) {
	for _, e := range engines(t) {
		for _, sc := range []struct {
			scale int64
			seed  uint64
		}{{1000, 7}, {10_000, 1 << 40}} {
			t.Run(fmt.Sprintf("%s/%d", e.Name, sc.scale), func(t *testing.T) {
				ctx := context.Background()
				prepared(t, e.Target, sc.scale, sc.seed)
				c, err := e.Target.Connect(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				s := loadSuite(t, ctx, e.Target, c)
				var order []int
				for i := range s.qs {
					order = append(order, i)
				}
				if sc.scale == 1000 {
					order = append(order, order...)
					for i := range s.qs {
						order = append(order, i, i, i)
					}
					for i := 24; i >= 0; i-- { // 25 is the last query that reads
						order = append(order, i)
					}
				}
				for _, i := range order {
					if err := s.checked(ctx, c, i); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}
}

// A wrong answer fails its check: a tuple whose unique1 changed behind
// the workload's back (the sum), then one deleted (the count), while the
// copy of the relation that was left alone still checks out.
func TestWrongAnswersFail(t *testing.T) {
	for _, e := range engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			ctx := context.Background()
			prepared(t, e.Target, 1000, 3)
			c, err := e.Target.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s := loadSuite(t, ctx, e.Target, c)
			const q1, q3 = 0, 2 // the 1% selection without index and with the clustered one
			for _, i := range []int{q1, q3} {
				if err := s.checked(ctx, c, i); err != nil {
					t.Fatal(err)
				}
			}
			for _, tamper := range []struct{ sql, want string }{
				{"UPDATE tenktup1 SET unique1 = unique1 + 1000000 WHERE unique2 = 6", "the first column sums to"},
				{"DELETE FROM tenktup1 WHERE unique2 = 5", "9 rows returned, the data gives 10"},
			} {
				if err := c.Exec(ctx, tamper.sql); err != nil {
					t.Fatal(err)
				}
				err := s.checked(ctx, c, q3)
				if !errors.Is(err, wisconsin.ErrWrongAnswer) || !strings.Contains(err.Error(), tamper.want) {
					t.Errorf("after %s: %s's check gave %v, want a wrong answer (%s)", tamper.sql, s.qs[q3].Label, err, tamper.want)
				}
				if err := s.checked(ctx, c, q1); err != nil {
					t.Errorf("after %s: the untouched copy: %v", tamper.sql, err)
				}
			}
		})
	}
}

package query_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/query"
)

// checked is a workload of a fixed suite with checked answers, built on
// query.Suite as a benchmark of its own would be: its answers are right
// unless --wrong asks for a check that fails.
func checked() workload.Spec {
	s := query.NewSuite()
	var wrong bool
	return workload.Spec{
		Meta: workload.Meta{Name: "checked", Version: "1", Headline: query.Headline, Better: "lower"},
		Flags: func(fs *pflag.FlagSet) {
			s.Flags(fs)
			fs.BoolVar(&wrong, "wrong", false, "expect a wrong sum")
		},
		Load: func(ctx context.Context, env workload.Env) (*workload.Load, error) {
			ser := env.Target.Dialect().Series("i", 100)
			sum := int64(5050)
			if wrong {
				sum++
			}
			return s.Load(ctx, env, []query.Query{
				{Label: "Q1", SQL: ser.With + "SELECT i FROM " + ser.From, Check: query.WantSum(100, sum)},
				{Label: "Q2", SQL: "SELECT 'x'", Check: query.WantRows(1)},
				{Label: "Q3", SQL: "SELECT 'x'", Check: func(a query.Answer) error {
					if a.SumValid || !a.Returned || a.Bytes != 1 {
						return errors.New("a text column summed")
					}
					return nil
				}},
			})
		},
		Hooks: s.Hooks(),
	}
}

func TestSuiteChecksAnswers(t *testing.T) {
	home(t)
	db := "sqlite://" + filepath.Join(t.TempDir(), "checked.db")
	run := func(args ...string) (int, *result.Result, string) {
		js := filepath.Join(t.TempDir(), "r.json")
		var out, errb strings.Builder
		code := cli.Main(context.Background(), append([]string{"run", "checked", "--target", db, "--json", js, "--no-store", "--iterations", "2"}, args...), &out, &errb,
			func(a *cli.App) { a.Workloads.Register("checked", checked) })
		return code, readResult(t, js), errb.String()
	}
	code, r, errs := run()
	if code != 0 || r.Status != result.StatusOK {
		t.Fatalf("right answers: exit %d, status %s: %s", code, r.Status, errs)
	}
	code, r, errs = run("--wrong")
	if code != 2 || r.Status != result.StatusFailed || !strings.Contains(r.Error, "Q1 (wrong answer: the first column sums to 5050, want 5051)") {
		t.Fatalf("a wrong answer: exit %d, status %s (%s): %s", code, r.Status, r.Error, errs)
	}
	q1 := byLabel(t, r, "Q1")
	if q1.Errors != 2 || q1.Runs[0].Kind != result.QueryWrongAnswer {
		t.Errorf("Q1: %+v", q1)
	}
	if q2 := byLabel(t, r, "Q2"); q2.Errors != 0 {
		t.Errorf("Q2 failed beside Q1: %+v", q2)
	}
}

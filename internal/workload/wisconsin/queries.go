package wisconsin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload/query"
)

// Query is one labelled query of the suite and the check of its answer,
// as the runner of query suites takes it.
type Query = query.Query

// Answer is what running a query gave: the rows it returned (or, for a
// statement that returns none, the rows it affected) and the wrapping
// int64 sum of its first column over the returned rows, when that column
// is an integer (SumValid).
type Answer = query.Answer

// ErrWrongAnswer marks a check that found an answer other than the one
// the data's rules give.
var ErrWrongAnswer = errors.New("wrong answer")

// expect is a query's right answer: its rows and, for a query that
// returns rows, the sum of its first column.
type expect struct {
	rows   int64
	sum    int64
	hasSum bool
}

func rowsSum(rows, sum int64) expect { return expect{rows: rows, sum: sum, hasSum: true} }
func affected(rows int64) expect     { return expect{rows: rows} }

func (e expect) check(a Answer) error {
	if a.Rows != e.rows {
		what := "rows returned"
		if !e.hasSum {
			what = "rows changed"
		}
		return fmt.Errorf("%w: %d %s, the data gives %d", ErrWrongAnswer, a.Rows, what, e.rows)
	}
	if !e.hasSum {
		return nil
	}
	if !a.SumValid {
		return fmt.Errorf("%w: the first column was not read as integers, so its sum (%d) could not be checked", ErrWrongAnswer, e.sum)
	}
	if a.Sum != e.sum {
		return fmt.Errorf("%w: the first column sums to %d, the data gives %d", ErrWrongAnswer, a.Sum, e.sum)
	}
	return nil
}

// checked is a Query with the name of its first column, which its check
// sums ("" for a statement that returns no rows).
type checked struct {
	Query
	first string
}

// Suite returns the 32 queries on data prepared at data's scale and seed,
// in the paper's numbering and order, each with its check. Every query is
// a single statement that returns its rows to the client (the paper
// stores most results in a relation; here the rows are what the check
// reads). The write queries (26 to 32) change only tuples that no other
// query reads, so every check holds in any order and after any number of
// runs, but for a delete (27, 30) run more often than its insert (26, 29).
func Suite(d target.Dialect, data Data) ([]Query, error) {
	return queries(d, data, false)
}

// Reads is the suite without its write queries (26 to 32): what streams
// run at once, since concurrent inserts, deletes and key toggles of the
// same tuples would make their answers depend on the order.
func Reads(d target.Dialect, data Data) ([]Query, error) {
	return queries(d, data, true)
}

func queries(d target.Dialect, data Data, readsOnly bool) ([]Query, error) {
	qs, err := suite(d, data)
	if err != nil {
		return nil, err
	}
	var out []Query
	for _, q := range qs {
		if readsOnly && q.first == "" {
			continue
		}
		out = append(out, q.Query)
	}
	return out, nil
}

func suite(d target.Dialect, data Data) ([]checked, error) {
	if err := checkScale(data.Scale); err != nil {
		return nil, err
	}
	f := computeFacts(data)
	n, m, p1, lo, k7 := f.n, f.m, f.p1, f.lo, f.k7
	var qs []checked
	add := func(label string, e expect, first, sql string) {
		qs = append(qs, checked{Query: Query{Label: label, SQL: sql, Check: e.check}, first: first})
	}
	t1 := func(s set) string { return s.table(tenKTup1) }

	// 1-8: selections. The clustered and non-indexed ones select on
	// unique2 and lead with unique1 (their sum depends on the seed's
	// permutation); the non-clustered ones select on unique1 and lead
	// with unique2.
	sel1, sel10 := fmt.Sprintf("BETWEEN 0 AND %d", p1-1), fmt.Sprintf("BETWEEN %d AND %d", lo, lo+m-1)
	add("q1_sel1pct_noindex", rowsSum(p1, f.selU2P1), "unique1", "SELECT * FROM "+t1(noIndex)+" WHERE unique2 "+sel1)
	add("q2_sel10pct_noindex", rowsSum(m, f.selU2Ten), "unique1", "SELECT * FROM "+t1(noIndex)+" WHERE unique2 "+sel10)
	add("q3_sel1pct_clustered", rowsSum(p1, f.selU2P1), "unique1", "SELECT * FROM "+t1(indexed)+" WHERE unique2 "+sel1)
	add("q4_sel10pct_clustered", rowsSum(m, f.selU2Ten), "unique1", "SELECT * FROM "+t1(indexed)+" WHERE unique2 "+sel10)
	byU1 := selectList(col{"", "unique2"}, "")
	add("q5_sel1pct_nonclustered", rowsSum(p1, f.selU1P1), "unique2", "SELECT "+byU1+" FROM "+t1(indexed)+" WHERE unique1 "+sel1)
	add("q6_sel10pct_nonclustered", rowsSum(m, f.selU1Ten), "unique2", "SELECT "+byU1+" FROM "+t1(indexed)+" WHERE unique1 "+sel10)
	add("q7_select1_clustered", rowsSum(1, f.u1AtK7), "unique1", fmt.Sprintf("SELECT * FROM %s WHERE unique2 = %d", t1(indexed), k7))
	add("q8_sel1pct_clustered_screen", rowsSum(p1, f.selU2P1), "unique1", "SELECT * FROM "+t1(indexed)+" WHERE unique2 "+sel1)

	// 9-17: joins, each of A = TENKTUP1, B = TENKTUP2 (or BPRIME, its
	// first tenth) and C = ONEKTUP, giving m rows. Every result column is
	// named by its relation (a_unique1), as the paper's result relation
	// must name them.
	joins := func(s set, from int, kind string) {
		a, b, bp, c := t1(s), s.table(tenKTup2), s.table(bPrime), s.table(oneKTup)
		first := col{"a", "unique1"}
		add(fmt.Sprintf("q%d_join_aselb_%s", from, kind), rowsSum(m, f.joinA), first.out(),
			fmt.Sprintf("SELECT %s FROM %s a, %s b WHERE a.unique2 = b.unique2 AND b.unique2 < %d", selectList(first, "a", "b"), a, b, m))
		add(fmt.Sprintf("q%d_join_abprime_%s", from+1, kind), rowsSum(m, f.joinA), first.out(),
			fmt.Sprintf("SELECT %s FROM %s a, %s b WHERE a.unique2 = b.unique2", selectList(first, "a", "b"), a, bp))
		add(fmt.Sprintf("q%d_join_cselaselb_%s", from+2, kind), rowsSum(m, f.joinA), first.out(),
			fmt.Sprintf("SELECT %s FROM %s c, %s a, %s b WHERE c.unique2 = a.unique2 AND a.unique2 = b.unique2 AND a.unique2 < %d",
				selectList(first, "c", "a", "b"), c, a, b, m))
	}
	joins(noIndex, 9, "noindex")
	joins(indexed, 12, "clustered")
	a, b, bp, c := t1(indexed), indexed.table(tenKTup2), indexed.table(bPrime), indexed.table(oneKTup)
	bu2, au2 := col{"b", "unique2"}, col{"a", "unique2"}
	add("q15_join_aselb_nonclustered", rowsSum(m, f.joinU1B), bu2.out(),
		fmt.Sprintf("SELECT %s FROM %s a, %s b WHERE a.unique1 = b.unique1 AND a.unique2 < %d", selectList(bu2, "a", "b"), a, b, m))
	add("q16_join_abprime_nonclustered", rowsSum(m, f.joinU1BPrime), au2.out(),
		fmt.Sprintf("SELECT %s FROM %s a, %s b WHERE a.unique1 = b.unique1", selectList(au2, "a", "b"), a, bp))
	add("q17_join_cselaselb_nonclustered", rowsSum(m, f.joinU1C), au2.out(),
		fmt.Sprintf("SELECT %s FROM %s c, %s a, %s b WHERE c.unique1 = a.unique1 AND a.unique1 = b.unique1 AND a.unique1 < %d",
			selectList(au2, "c", "a", "b"), c, a, b, m))

	// 18-19: projections, led by the attribute whose sum says most.
	add("q18_project1pct", rowsSum(f.proj1Rows, f.proj1Sum), "onePercent",
		"SELECT DISTINCT onePercent, two, four, ten, twenty, string4 FROM "+a)
	add("q19_project100pct", rowsSum(n, n*(n-1)/2), "unique3",
		"SELECT DISTINCT unique3, two, four, ten, twenty, onePercent, tenPercent, twentyPercent, fiftyPercent, "+
			"evenOnePercent, oddOnePercent, stringu1, stringu2, string4 FROM "+a)

	// 20-25: aggregates. A SUM is divided by 1 as integers: MySQL's SUM
	// of integers is a DECIMAL, which a runner need not read as one.
	aggregates := func(s set, from int, kind string) {
		add(fmt.Sprintf("q%d_min_%s", from, kind), rowsSum(1, 0), "min_unique2", "SELECT MIN(unique2) AS min_unique2 FROM "+t1(s))
		add(fmt.Sprintf("q%d_min_grouped_%s", from+1, kind), rowsSum(100, 99*100/2), "min_unique3",
			"SELECT MIN(unique3) AS min_unique3 FROM "+t1(s)+" GROUP BY onePercent")
		add(fmt.Sprintf("q%d_sum_grouped_%s", from+2, kind), rowsSum(100, n*(n-1)/2), "sum_unique3",
			"SELECT SUM(unique3) "+d.IntDiv()+" 1 AS sum_unique3 FROM "+t1(s)+" GROUP BY onePercent")
	}
	aggregates(noIndex, 20, "noindex")
	aggregates(indexed, 23, "clustered")

	// 26-32: updates, on tuples no other query reads. An inserted tuple
	// copies every attribute of the tuple whose unique1 is 0 but its keys,
	// which lie above the scale: no selection, join or aggregate sees it,
	// and the projections find it equal to that tuple. Without indexes
	// the insert is a copy at unique2 = n and the delete removes one
	// copy; with them the keys must stay unique, so the insert takes the
	// next key in n..2n-1 and the delete the highest one there. An update
	// moves a key of a tuple no query reads to a value beyond the scale
	// and back, one row each time it runs.
	tCols := strings.Join(columns, ", ")
	add("q26_insert1_noindex", affected(1), "",
		fmt.Sprintf("INSERT INTO %s (%s) VALUES (%d, %d, %s)", t1(noIndex), tCols, n, n, f.copyValues()))
	add("q27_delete1_noindex", affected(1), "", d.DeleteOne(t1(noIndex), fmt.Sprintf("unique2 = %d", n)))
	add("q28_update_key_noindex", affected(1), "", toggle(t1(noIndex), "unique2", f.keyTuple.unique2, 2*n))
	inserted := fmt.Sprintf("(SELECT MAX(unique2) AS m FROM %s WHERE unique2 BETWEEN %d AND %d)", t1(indexed), n, 2*n-1)
	add("q29_insert1_indexed", affected(1), "",
		fmt.Sprintf("INSERT INTO %s (%s) SELECT COALESCE(k.m, %d) + 1, COALESCE(k.m, %[3]d) + 1, %s FROM %s k",
			t1(indexed), tCols, n-1, f.copyValues(), inserted))
	add("q30_delete1_indexed", affected(1), "",
		fmt.Sprintf("DELETE FROM %s WHERE unique2 = (SELECT k.m FROM %s k)", t1(indexed), inserted))
	add("q31_update_key_indexed", affected(1), "", toggle(t1(indexed), "unique2", f.keyTuple.unique2, 2*n))
	add("q32_update_nonkey_indexed", affected(1), "", toggle(t1(indexed), "unique1", f.attrTuple.unique1, 4*n))
	return qs, nil
}

// toggle is an UPDATE that moves one tuple's column from v to v+by and,
// run again, back: one row changed each time, the table's state after
// two runs the same as before.
func toggle(table, column string, v, by int64) string {
	return fmt.Sprintf("UPDATE %s SET %s = CASE WHEN %[2]s = %d THEN %d ELSE %[3]d END WHERE %[2]s IN (%[3]d, %[4]d)",
		table, column, v, v+by)
}

// col is an attribute of the relation aliased alias ("" for a query of
// one relation).
type col struct{ alias, name string }

// out is the column's name in the result: alias_name when aliased.
func (c col) out() string {
	if c.alias == "" {
		return c.name
	}
	return c.alias + "_" + c.name
}

func (c col) expr() string {
	if c.alias == "" {
		return c.name
	}
	return c.alias + "." + c.name + " AS " + c.out()
}

// selectList is every attribute of the aliased relations, in order,
// first moved to the front: the paper's SELECT * with the checked
// column leading and, in a join, every column named apart.
func selectList(first col, aliases ...string) string {
	out := []string{first.expr()}
	for _, a := range aliases {
		for _, name := range columns {
			if c := (col{a, name}); c != first {
				out = append(out, c.expr())
			}
		}
	}
	return strings.Join(out, ", ")
}

package wisconsin

import "github.com/dbmark/dbmark/internal/target"

// FirstColumns are the names of the suite's first columns, the ones its
// checks sum ("" for a statement that returns no rows): a test sums them
// through a wrapping query where the engines cannot stream rows to it.
func FirstColumns(d target.Dialect, data Data) ([]string, error) {
	qs, err := suite(d, data)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.first
	}
	return out, nil
}

// Permutation is relation stream's unique1 column at scale n under seed,
// in unique2 order.
func Permutation(n int64, seed, stream uint64) []int64 {
	q := newPerm(n, seed, stream)
	out := make([]int64, n)
	for i := range out {
		out[i] = q.next()
	}
	return out
}

// StringU and String4 are the string attributes' values.
func StringU(v int64) string  { return string(appendStringU(nil, v)) }
func String4(u2 int64) string { return string(string4(u2)) }

// CreateTable is a relation's CREATE TABLE.
func CreateTable(d target.Dialect, name string, keyed bool) (string, error) {
	return createTable(d, name, keyed, "innodb")
}

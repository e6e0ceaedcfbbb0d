package store

import "context"

// SetBeforeCommit makes every later save through s call f after its write
// and before its commit; an error from f fails the save there.
func SetBeforeCommit(s Store, f func(context.Context) error) {
	s.(*sqlStore).beforeCommit = f
}

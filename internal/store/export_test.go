package store

import "context"

// SetBeforeCommit makes every later save through s call f after its write
// and before its commit; an error from f fails the save there.
func SetBeforeCommit(s Store, f func(context.Context) error) {
	if ss, ok := s.(*sqliteStore); ok {
		s = ss.sqlStore
	}
	s.(*sqlStore).beforeCommit = f
}

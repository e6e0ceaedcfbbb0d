package cli

import "github.com/dbmark/dbmark/internal/store"

// keptNote says where a failed or interrupted run's partial result went:
// kept, or nowhere when --no-store was given without --json.
func keptNote(st store.Store, jsonPath string) string {
	if st == nil && jsonPath == "" {
		return "the partial result was not kept: --no-store without --json"
	}
	return "the partial result was kept"
}

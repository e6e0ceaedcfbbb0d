package site

import (
	"encoding/json"
	"fmt"

	"github.com/dbmark/dbmark/internal/site/sitestore"
)

// DerivedVersion is the version of the rules that derive an entry's
// columns from its document: 1 is a sweep's headline as its best cell's
// median, and durability. Raise it when they change: every server then
// derives the stored entries again when it starts (Store.Rederive).
const DerivedVersion = 1

// rederive derives an entry's columns from its stored document as a new
// submission's are.
func (s *Server) rederive(doc []byte) (*sitestore.Entry, error) {
	var sub Submission
	if err := json.Unmarshal(doc, &sub); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(sub.Runs) == 0 {
		return nil, fmt.Errorf("no runs")
	}
	e := sub.columns()
	e.Facets["durability"] = s.durabilityFacet(&sub)
	return e, nil
}

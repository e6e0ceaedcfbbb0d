package site

import (
	"github.com/dbmark/dbmark/internal/compare"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site/sitestore"
	"github.com/dbmark/dbmark/internal/target"
)

// The durability facet's values.
const (
	durable    = "durable"
	notDurable = "not durable"
)

// unsafe lists r's engine settings that do not keep every commit through
// a crash, by its engine's rule.
func (s *Server) unsafe(r *result.Result) []target.Unsafe {
	return s.cfg.Durability(r.Target.Kind, r.Target.Settings)
}

// durabilityFacet is a submission's durability as lists filter and mark
// it, from the run that stands for it (a sweep may set the settings per
// cell): "" when no engine settings were recorded (files).
func (s *Server) durabilityFacet(sub *Submission) string {
	p := sub.Primary()
	switch {
	case len(p.Target.Settings) == 0:
		return ""
	case len(s.unsafe(p)) > 0:
		return notDurable
	}
	return durable
}

// notDurable is compare.NotDurable over the entries' standing runs.
func (s *Server) notDurableLines(es []*sitestore.Entry, runs []*result.Result) []string {
	labels := make([]string, len(es))
	for i, e := range es {
		labels[i] = e.ID
	}
	return compare.NotDurable(labels, runs, s.cfg.Durability)
}

// durableApart splits entries into those ranked and those kept apart:
// results whose engine did not keep every commit through a crash are
// never ranked beside durable ones.
func durableApart(es []sitestore.Entry) (ranked, apart []sitestore.Entry) {
	for _, e := range es {
		if e.Facets["durability"] == notDurable {
			apart = append(apart, e)
		} else {
			ranked = append(ranked, e)
		}
	}
	return ranked, apart
}

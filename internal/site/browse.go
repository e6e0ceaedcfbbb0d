package site

import (
	"bytes"
	"context"
	_ "embed"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/dbmark/dbmark/internal/site/sitestore"
)

// feedCSS styles the Atom feed for a browser; feedStylesheet is the
// processing instruction the feed names it with.
//
//go:embed static/feed.css
var feedCSS []byte

const feedStylesheet = `<?xml-stylesheet type="text/css" href="/static/feed.css"?>` + "\n"

// browseRoutes are the pages that help a reader find and compare results
// without pasting ids: where a result stands, and the API's reference.
func (s *Server) browseRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /standing/{workload}", s.admitted(s.pageStanding))
	m.HandleFunc("GET /api", s.pageAPI)
	m.HandleFunc("GET /static/feed.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		http.ServeContent(w, r, "", s.pages.started, bytes.NewReader(feedCSS))
	})
}

// feedType is the feed's content type: Atom's for a feed reader, and
// plain XML for a browser (one that asks for HTML first), which shows
// Atom's own type as text but lays XML out with its style sheet.
func feedType(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if strings.Contains(accept, "text/html") && !strings.Contains(accept, "application/atom+xml") {
		return "application/xml; charset=utf-8"
	}
	return "application/atom+xml; charset=utf-8"
}

// compareIDs are the ids a comparison names: ids=A,B (typed or pasted)
// and id=A&id=B (the checkboxes of a list), in that order.
func compareIDs(q url.Values) string {
	ids := q["ids"]
	return strings.Join(append(slices.Clone(ids), q["id"]...), ",")
}

// compareWith offers the results e may be compared with: the same work
// (its comparable key) on the same engine, newest first.
type compareWith struct {
	ID   string
	Rows []row
}

// maxCompareWith is how many results "compare with" offers.
const maxCompareWith = 20

func (s *Server) compareWith(ctx context.Context, e *sitestore.Entry) (*compareWith, error) {
	if e.Comparable == "" {
		return nil, nil
	}
	es, _, err := s.cfg.Store.List(ctx, sitestore.Query{Comparable: e.Comparable, Filters: map[string]string{"engine": e.Facets["engine"]}, Limit: maxCompareWith + 1})
	if err != nil {
		return nil, err
	}
	es = slices.DeleteFunc(es, func(x sitestore.Entry) bool { return x.ID == e.ID })
	if len(es) == 0 {
		return nil, nil
	}
	if len(es) > maxCompareWith {
		es = es[:maxCompareWith]
	}
	return &compareWith{ID: e.ID, Rows: rowsOf(es)}, nil
}

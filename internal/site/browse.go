package site

import (
	"bytes"
	_ "embed"
	"net/http"
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

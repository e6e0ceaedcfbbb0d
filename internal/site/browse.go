package site

import "net/http"

// browseRoutes are the pages that help a reader find and compare results
// without pasting ids: where a result stands, and the API's reference.
func (s *Server) browseRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /standing/{workload}", s.admitted(s.pageStanding))
}

package site

import "net/http"

type pages struct{ library []byte }

func newPages(library []byte) (*pages, error) { return &pages{library: library}, nil }

func (s *Server) pageRoutes(m *http.ServeMux) {}

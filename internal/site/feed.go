package site

import (
	"encoding/xml"
	"net/http"
	"time"

	"github.com/dbmark/dbmark/internal/site/sitestore"
)

type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Title   string      `xml:"title"`
	ID      string      `xml:"id"`
	Updated string      `xml:"updated"`
	Links   []atomLink  `xml:"link"`
	Entries []atomEntry `xml:"entry"`
}

type atomLink struct {
	Href string `xml:"href,attr"`
	Rel  string `xml:"rel,attr,omitempty"`
}

type atomEntry struct {
	Title   string   `xml:"title"`
	ID      string   `xml:"id"`
	Updated string   `xml:"updated"`
	Link    atomLink `xml:"link"`
	Summary string   `xml:"summary"`
	Author  struct {
		Name string `xml:"name"`
	} `xml:"author"`
}

// feed is the newest results as Atom: titles and summaries are plain text,
// which encoding/xml escapes.
func (s *Server) feed(w http.ResponseWriter, r *http.Request) {
	rows, _, err := s.cfg.Store.List(r.Context(), sitestore.Query{Limit: 50})
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	base := s.baseURL(r)
	f := atomFeed{Title: "dbmark results: new", ID: base + "/feed.atom", Updated: time.Unix(0, 0).UTC().Format(time.RFC3339),
		Links: []atomLink{{Href: base + "/feed.atom", Rel: "self"}, {Href: base + "/"}}}
	for i := range rows {
		e := &rows[i]
		x := rowOf(e)
		if i == 0 {
			f.Updated = e.SubmittedAt.Format(time.RFC3339)
		}
		ae := atomEntry{Title: x.Workload + " on " + x.Engine + ": " + x.Headline, ID: base + "/r/" + e.ID,
			Updated: e.SubmittedAt.Format(time.RFC3339), Link: atomLink{Href: base + "/r/" + e.ID},
			Summary: x.CPU + ", " + x.CPUs + " CPUs, " + x.Memory + ", " + x.Storage + "; status " + x.Status}
		ae.Author.Name = "dbmark submit"
		f.Entries = append(f.Entries, ae)
	}
	b, err := xml.MarshalIndent(f, "", "  ")
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	w.Header().Set("Content-Type", feedType(r))
	w.Header().Set("Vary", "Accept")
	w.Write([]byte(xml.Header))
	w.Write([]byte(feedStylesheet))
	w.Write(b)
}

package site

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"github.com/dbmark/dbmark/internal/site/sitestore"
)

// board is a leaderboard: its sets of comparable results (the one shown
// chosen by the URL parameter param), the options that made the set and
// its results ranked, each scored as its ratio to the best.
type board struct {
	Classes []classLink
	Work    [][2]string
	Rows    []rankRow
}

func (s *Server) board(r *http.Request, wl string, es []sitestore.Entry, param, anchor string) (board, error) {
	var b board
	keys, by := classes(es)
	class := r.URL.Query().Get(param)
	if _, ok := by[class]; !ok && len(keys) > 0 {
		class = keys[0]
	}
	for i, k := range keys {
		b.Classes = append(b.Classes, classLink{Label: fmt.Sprintf("set %d", i+1),
			Link: link("/leaderboard/"+url.PathEscape(wl), url.Values{param: {k}}) + template.URL(anchor), Count: len(by[k]), On: k == class})
	}
	if class == "" {
		return b, nil
	}
	rows, scores := ranked(by[class])
	_, sub, err := s.visiblePage(r, rows[0].ID)
	if err != nil {
		return b, err
	}
	b.Work = WorkOptions(sub.Primary())
	for i := range rows {
		x := rowOf(&rows[i])
		b.Rows = append(b.Rows, rankRow{ID: x.ID, Engine: x.Engine, CPU: x.CPU, CPUs: x.CPUs, Storage: x.Storage, Headline: x.Headline,
			Score: strconv.FormatFloat(scores[i], 'f', 3, 64)})
	}
	return b, nil
}

// sourceBoard is the leaderboard of results from unreleased builds (built
// from source, or modified), shown apart from the released one and only
// when the operator asks for it (Config.LeaderboardUnreleased).
type sourceBoard struct {
	Workload string
	board
}

// fromSource is workload's from-source board; nil when the site shows none.
func (s *Server) fromSource(r *http.Request, wl string) (*sourceBoard, error) {
	if !s.cfg.LeaderboardUnreleased {
		return nil, nil
	}
	es, err := s.cfg.Store.FromSource(r.Context(), wl)
	if err != nil {
		return nil, err
	}
	b, err := s.board(r, wl, es, "sclass", "#from-source")
	return &sourceBoard{Workload: wl, board: b}, err
}

// sourceWorkloads are the workloads with from-source results and their
// counts; nil when the site shows no from-source boards.
func (s *Server) sourceWorkloads(r *http.Request) ([]facetValue, bool, error) {
	if !s.cfg.LeaderboardUnreleased {
		return nil, false, nil
	}
	es, err := s.cfg.Store.FromSource(r.Context(), "")
	if err != nil {
		return nil, false, err
	}
	counts := map[string]int{}
	for _, e := range es {
		counts[e.Facets["workload"]]++
	}
	var out []facetValue
	for wl, n := range counts {
		out = append(out, facetValue{Value: wl, Count: n, Link: link("/leaderboard/"+url.PathEscape(wl), nil) + "#from-source"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out, true, nil
}

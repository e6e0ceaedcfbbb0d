package site

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/report"
	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site/sitestore"
	"github.com/dbmark/dbmark/internal/stats"
)

var (
	// Every page's template is a file of its own or a block in pages.html;
	// all of them share one namespace.
	//go:embed templates/*.html
	templateFS embed.FS
	//go:embed static/site.css
	siteCSS []byte
)

type pages struct {
	t       *template.Template
	library []byte
	script  []byte
	style   []byte
	started time.Time
}

func newPages(library []byte) (*pages, error) {
	t, err := template.New("pages").Funcs(template.FuncMap{"inc": func(i int) int { return i + 1 }}).
		ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("site: parse templates: %w", err)
	}
	return &pages{t: t, library: library, script: []byte(htmlreport.Script()), style: []byte(htmlreport.Style()), started: time.Now()}, nil
}

func (s *Server) pageRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /{$}", s.admitted(s.pageHome))
	m.HandleFunc("GET /results", s.admitted(s.pageResults))
	m.HandleFunc("GET /r/{file}", s.admitted(s.pageResult))
	m.HandleFunc("GET /compare", s.admitted(s.pageCompare))
	m.HandleFunc("GET /leaderboard", s.admitted(s.pageLeaderboards))
	m.HandleFunc("GET /leaderboard/{workload}", s.admitted(s.pageLeaderboard))
	m.HandleFunc("GET /feed.atom", s.admitted(s.feed))
	m.HandleFunc("GET /static/{name}", s.static)
	m.HandleFunc("GET /admin", s.pageAdmin)
	s.browseRoutes(m)
	m.HandleFunc("POST /admin/login", s.adminLogin)
	m.HandleFunc("POST /admin/results/{id}/{action}", s.adminAction)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.pageError(w, r, http.StatusNotFound, "Not found", "There is no page here.")
	})
}

// static serves the chart library, the chart script and the style sheets:
// the only scripts and styles a page loads (the CSP allows no others).
func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	var b []byte
	var ct string
	switch r.PathValue("name") {
	case "echarts.min.js":
		b, ct = s.pages.library, "text/javascript; charset=utf-8"
	case "report.js":
		b, ct = s.pages.script, "text/javascript; charset=utf-8"
	case "report.css":
		b, ct = s.pages.style, "text/css; charset=utf-8"
	case "site.css":
		b, ct = siteCSS, "text/css; charset=utf-8"
	}
	if b == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	http.ServeContent(w, r, "", s.pages.started, bytes.NewReader(b))
}

// page is what every page's frame reads.
type page struct {
	Title, Search string
	Charts        []htmlreport.ChartSection
	Data          template.JS
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, v any) {
	var buf bytes.Buffer
	if err := s.pages.t.ExecuteTemplate(&buf, name, v); err != nil {
		s.cfg.Logger.ErrorContext(r.Context(), "render page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (s *Server) pageError(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	s.render(w, r, status, "error", struct {
		page
		Error string
	}{page{Title: title}, msg})
}

func (s *Server) pageFailed(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	switch {
	case errors.As(err, &e):
		s.pageError(w, r, e.Status, http.StatusText(e.Status), e.Error())
	case errors.Is(err, sitestore.ErrNotFound):
		s.pageError(w, r, http.StatusNotFound, "Not found", "No such result.")
	case errors.Is(err, sitestore.ErrBadQuery):
		s.pageError(w, r, http.StatusBadRequest, "Bad request", err.Error())
	default:
		s.cfg.Logger.ErrorContext(r.Context(), "page failed", "path", r.URL.Path, "err", err)
		s.pageError(w, r, http.StatusInternalServerError, "Internal error", "Something went wrong on the server.")
	}
}

// row is a result as tables show it.
type row struct {
	ID, Kind, Submitted, Workload, Engine, CPU, CPUs, Memory, Storage, Headline, Status string
	Runs                                                                                int
	Released, Hidden                                                                    bool
	// HeadlineOf names a sweep's cell; NotDurable marks a result whose
	// engine did not keep every commit through a crash.
	HeadlineOf string
	NotDurable bool
}

func rowOf(e *sitestore.Entry) row {
	f := e.Facets
	storage := f["disk_model"]
	if f["rotational"] != "" {
		storage += map[string]string{"yes": " (rotational)", "no": " (solid state)"}[f["rotational"]]
	}
	if f["raid"] != "" && f["raid"] != "none" {
		storage += ", " + f["raid"]
	}
	return row{ID: e.ID, Kind: e.Kind, Runs: e.Runs, Submitted: e.SubmittedAt.Format("2006-01-02 15:04"), Workload: f["workload"],
		Engine: strings.TrimSpace(f["engine"] + " " + f["engine_version"]), CPU: f["cpu_model"], CPUs: f["cpus"], Memory: f["memory"],
		Storage: storage, Headline: num(e.Headline) + " " + e.HeadlineUnit, Status: e.Status, Released: e.Released, Hidden: e.Hidden,
		HeadlineOf: e.HeadlineOf, NotDurable: f["durability"] == notDurable}
}

func rowsOf(es []sitestore.Entry) []row {
	out := make([]row, len(es))
	for i := range es {
		out[i] = rowOf(&es[i])
	}
	return out
}

// num prints a measurement with three significant digits or more.
func num(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "-"
	case math.Abs(f) >= 100 || f == 0:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case math.Abs(f) >= 1:
		return strconv.FormatFloat(f, 'f', 2, 64)
	}
	return strconv.FormatFloat(f, 'g', 3, 64)
}

// link is a same-site URL with a query, built here so the template neither
// escapes it twice nor lets a value become a scheme.
func link(path string, q url.Values) template.URL {
	if len(q) == 0 {
		return template.URL(path)
	}
	return template.URL(path + "?" + q.Encode())
}

type facetValue struct {
	Value string
	Count int
	Link  template.URL
	On    bool
}

func (s *Server) pageHome(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rows, _, err := s.cfg.Store.List(ctx, sitestore.Query{Limit: 20})
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	counts, err := s.cfg.Store.Facets(ctx, sitestore.Query{}, "workload", "engine")
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	values := func(key string) []facetValue {
		var out []facetValue
		for _, c := range counts[key] {
			out = append(out, facetValue{Value: c.Value, Count: c.Count, Link: link("/results", url.Values{key: {c.Value}})})
		}
		return out
	}
	total := 0
	for _, c := range counts["workload"] {
		total += c.Count
	}
	s.render(w, r, http.StatusOK, "home", struct {
		page
		Total              int
		Base               string
		Workloads, Engines []facetValue
		Rows               []row
	}{page{Title: "Home"}, total, s.baseURL(r), values("workload"), values("engine"), rowsOf(rows)})
}

type facetBlock struct {
	Label  string
	Open   bool
	Values []facetValue
}

type chip struct {
	Label, Value string
	Link         template.URL
}

type sortLink struct {
	Label string
	Link  template.URL
	On    bool
}

func (s *Server) pageResults(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	v := r.URL.Query()
	q, err := listQuery(v)
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	rows, next, err := s.cfg.Store.List(ctx, q)
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	counts, err := s.cfg.Store.Facets(ctx, sitestore.Query{Filters: q.Filters, Search: q.Search})
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	// Every link keeps the filters, search and sort, and starts at page one.
	base := url.Values{}
	for k, val := range v {
		if k != "cursor" && len(val) > 0 && val[0] != "" {
			base.Set(k, val[0])
		}
	}
	with := func(k, val string) template.URL {
		c := maps.Clone(base)
		if val == "" {
			c.Del(k)
		} else {
			c.Set(k, val)
		}
		return link("/results", c)
	}
	var blocks []facetBlock
	var active []chip
	for _, f := range sitestore.Facets {
		b := facetBlock{Label: f.Label, Open: q.Filters[f.Key] != "" || f.Key == "workload" || f.Key == "engine"}
		for _, c := range counts[f.Key] {
			on := q.Filters[f.Key] == c.Value
			l := with(f.Key, c.Value)
			if on {
				l = with(f.Key, "")
			}
			b.Values = append(b.Values, facetValue{Value: c.Value, Count: c.Count, Link: l, On: on})
		}
		blocks = append(blocks, b)
		if val := q.Filters[f.Key]; val != "" {
			active = append(active, chip{Label: f.Label, Value: val, Link: with(f.Key, "")})
		}
	}
	var sorts []sortLink
	for _, so := range [][2]string{{sitestore.SortNew, "newest"}, {sitestore.SortHeadline, "headline, highest first"}, {sitestore.SortLow, "headline, lowest first"}} {
		sorts = append(sorts, sortLink{Label: so[1], Link: with("sort", so[0]), On: q.Sort == so[0] || q.Sort == "" && so[0] == sitestore.SortNew})
	}
	var nextLink template.URL
	if next != "" {
		c := maps.Clone(base)
		c.Set("cursor", next)
		nextLink = link("/results", c)
	}
	s.render(w, r, http.StatusOK, "results", struct {
		page
		Active []chip
		Facets []facetBlock
		Sorts  []sortLink
		Rows   []row
		Next   template.URL
	}{page{Title: "Results", Search: q.Search}, active, blocks, sorts, rowsOf(rows), nextLink})
}

// visiblePage is visible for pages: an admin is known by the cookie.
func (s *Server) visiblePage(r *http.Request, id string) (*sitestore.Entry, *Submission, error) {
	e, err := s.cfg.Store.Get(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	if e.Hidden && !s.adminCookie(r) {
		return nil, nil, fmt.Errorf("%w: hidden", sitestore.ErrNotFound)
	}
	var sub Submission
	if err := json.Unmarshal(e.Document, &sub); err != nil {
		return nil, nil, fmt.Errorf("decode stored result %s: %w", id, err)
	}
	return e, &sub, nil
}

func (s *Server) pageResult(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	id, ext, _ := strings.Cut(file, ".")
	e, sub, err := s.visiblePage(r, id)
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	switch ext {
	case "json":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Disposition", `attachment; filename="dbmark-`+e.ID+`.json"`)
		w.Write(e.Document)
		return
	case "csv":
		var buf bytes.Buffer
		for i, run := range sub.Runs {
			if i > 0 {
				buf.WriteString("\n")
			}
			if err := report.SeriesCSV(&buf, run); err != nil {
				s.pageFailed(w, r, err)
				return
			}
		}
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="dbmark-`+e.ID+`.csv"`)
		w.Write(buf.Bytes())
		return
	case "":
	default:
		s.pageError(w, r, http.StatusNotFound, "Not found", "A result is a page, .json or .csv.")
		return
	}
	v, err := s.resultView(r, e, sub)
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "result", v)
}

type kv struct{ K, V string }

type reproduction struct{ ID, CPU, Headline, Ratio string }

type resultView struct {
	page
	ID, Kind, Workload, Engine, Submitted, Started, Tool, Status, Error string
	Runs                                                                int
	Hidden, Released                                                    bool
	Warnings                                                            []string
	Headline, Unit, Better, Note, Comparable, Command, Base             string
	ReproducesID                                                        string
	Tags, Percentiles, Machine, NonDefault, Settings, Options           []kv
	Ops                                                                 [][6]string
	Work                                                                [][2]string
	Reproductions                                                       []reproduction
	// Client is the client's CPU per event and share of the machine (of
	// the primary run); Limited, when a run's client limited its figure,
	// says so and what to do.
	Client, Limited string
	// A degraded run's outages: client, lost at, back at, disconnected,
	// wait (seconds since the start); and the waits' and the latency's
	// maximum with them.
	Disconnects                   [][5]string
	ReconnectWait, WithReconnects string
	// Standing is where the result stands among comparable results;
	// CompareWith offers those to compare it with.
	Standing    *standingView
	CompareWith *compareWith
	resultDetail
}

// chartsOf draws runs, each named in legends by the site's id of its
// result (labels, by position), never by its local UUID.
func (s *Server) chartsOf(runs []*result.Result, labels []string) ([]htmlreport.ChartSection, template.JS, error) {
	hr := make([]htmlreport.Run, len(runs))
	for i, r := range runs {
		hr[i] = htmlreport.Run{Result: r, Label: labels[i]}
	}
	secs, data, err := htmlreport.Charts(hr)
	if err != nil {
		return nil, "", err
	}
	return secs, template.JS(data), nil // json.Marshal escapes <, > and &
}

func (s *Server) resultView(r *http.Request, e *sitestore.Entry, sub *Submission) (*resultView, error) {
	p := sub.Primary()
	secs, data, err := s.chartsOf(sub.Runs, slices.Repeat([]string{e.ID}, len(sub.Runs)))
	if err != nil {
		return nil, err
	}
	v := &resultView{
		page: page{Title: e.ID + " " + p.Workload.Name, Charts: secs, Data: data},
		ID:   e.ID, Kind: e.Kind, Runs: e.Runs, Workload: p.Workload.Name,
		Engine:    strings.TrimSpace(p.Target.Engine + " " + p.Target.Version),
		Submitted: e.SubmittedAt.Format("2006-01-02 15:04 MST"), Started: p.StartedAt.UTC().Format("2006-01-02 15:04 MST"),
		Tool: strings.TrimSpace(p.Tool.Version + " " + p.Tool.Revision), Status: e.Status, Error: p.Error,
		Hidden: e.Hidden, Released: e.Released, Warnings: p.Warnings,
		Headline: num(e.Headline), Unit: e.HeadlineUnit, Better: e.Better, Note: sub.Note, Comparable: e.Comparable,
		Command: strings.Join(p.Command, " "), Base: s.baseURL(r), ReproducesID: sub.Reproduces, Work: WorkOptions(p),
	}
	for _, k := range slices.Sorted(maps.Keys(sub.Tags)) {
		v.Tags = append(v.Tags, kv{k, sub.Tags[k]})
	}
	v.Client, v.Limited = clientCost(p, sub.Runs)
	for _, d := range p.Summary.Disconnects {
		back, wait := "not back", "-"
		if d.Back {
			back = num(d.BackS)
		}
		if d.WaitS > 0 {
			wait = num(d.WaitS)
		}
		v.Disconnects = append(v.Disconnects, [5]string{strconv.Itoa(d.Client), num(d.StartS), back, num(d.DisconnectedS), wait})
	}
	if l := p.Summary.ReconnectWait; l != nil {
		v.ReconnectWait = num(l.MaxMS)
	}
	if l := p.Summary.LatencyWithReconnects; l != nil {
		v.WithReconnects = num(l.MaxMS)
	}
	if l := p.Summary.Latency; l != nil {
		v.Percentiles = append(v.Percentiles, kv{"min ms", num(l.MinMS)}, kv{"mean ms", num(l.MeanMS)})
		for _, q := range l.Percentiles {
			v.Percentiles = append(v.Percentiles, kv{"p" + strconv.FormatFloat(q.P, 'g', -1, 64) + " ms", num(q.MS)})
		}
		v.Percentiles = append(v.Percentiles, kv{"max ms", num(l.MaxMS)})
	}
	for _, op := range p.Summary.Ops {
		row := [6]string{op.Name, strconv.FormatInt(op.Count, 10), num(op.PerS), "", "", ""}
		if op.Latency != nil {
			row[3] = num(op.Latency.MeanMS)
			if x, ok := op.Latency.Get(95); ok {
				row[4] = num(x)
			}
			if x, ok := op.Latency.Get(99); ok {
				row[5] = num(x)
			}
		}
		v.Ops = append(v.Ops, row)
	}
	for _, f := range sitestore.Facets {
		if val := e.Facets[f.Key]; val != "" {
			v.Machine = append(v.Machine, kv{f.Label, val})
		}
	}
	if env := p.Environment; env != nil {
		v.Machine = append(v.Machine, kv{"OS", env.OS + "/" + env.Arch}, kv{"clock source", env.ClockSrc})
		if m := env.MachineFacts; m != nil {
			v.Machine = append(v.Machine, kv{"distribution", m.Distribution}, kv{"governor", m.Governor}, kv{"transparent huge pages", m.THP})
		}
	}
	if f := p.Target.EngineFacts; f != nil {
		for _, k := range slices.Sorted(maps.Keys(f.NonDefault)) {
			nd := f.NonDefault[k]
			v.NonDefault = append(v.NonDefault, kv{k, nd.Value + " (default " + nd.Default + ")"})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Target.Settings)) {
		v.Settings = append(v.Settings, kv{k, p.Target.Settings[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(p.Workload.Options)) {
		v.Options = append(v.Options, kv{k, p.Workload.Options[k]})
	}
	if v.Standing, err = s.resultStanding(r.Context(), e, p); err != nil {
		return nil, err
	}
	if v.CompareWith, err = s.compareWith(r.Context(), e); err != nil {
		return nil, err
	}
	v.resultDetail = s.detail(sub, v.Base, e.ID)
	reps, err := s.cfg.Store.Reproductions(r.Context(), e.ID)
	if err != nil {
		return nil, err
	}
	for i := range reps {
		x := &reps[i]
		v.Reproductions = append(v.Reproductions, reproduction{ID: x.ID, CPU: x.Facets["cpu_model"],
			Headline: namedHeadline(x), Ratio: num(ratio(e.Better, x.Headline, e.Headline))})
	}
	return v, nil
}

type compareCol struct{ ID, Headline, Ratio, Significance string }

func (s *Server) pageCompare(w http.ResponseWriter, r *http.Request) {
	ids := compareIDs(r.URL.Query())
	v := struct {
		page
		IDs, Error string
		Cols       []compareCol
		Comparison Comparison
		Queries    *queryCompare
		Counters   []counterCompare
		Uncounted  []string
	}{page: page{Title: "Compare"}, IDs: ids}
	es, subs, err := s.compare(r, ids, s.visiblePage)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			s.pageFailed(w, r, err)
			return
		}
		v.Error = e.Msg
		s.render(w, r, e.Status, "compare", v)
		return
	}
	c := s.comparison(es, subs, func(e *sitestore.Entry) ResultSummary { return ResultSummary{ID: e.ID} })
	var runs []*result.Result
	var labels []string
	for i, e := range es {
		v.Cols = append(v.Cols, compareCol{ID: e.ID, Headline: namedHeadline(e),
			Ratio: num(c.Ratios[i]), Significance: significance(subs[0], subs[i], i)})
		runs = append(runs, subs[i].Primary())
		labels = append(labels, e.ID)
	}
	v.Comparison = c
	v.Queries = queriesCompared(entryIDs(es), c.Queries)
	v.Counters = countersCompared(es[0].ID, c.Counters)
	v.Uncounted = uncounted(entryIDs(es), c.Counters)
	if v.Charts, v.Data, err = s.chartsOf(runs, labels); err != nil {
		s.pageFailed(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "compare", v)
}

// repeats are the headlines of the runs in the primary run's sweep cell:
// the samples a significance test can use.
func repeats(sub *Submission) []float64 {
	p := sub.Primary()
	var out []float64
	for _, r := range sub.Runs {
		if r.Status == result.StatusOK && (p.Sweep == nil && r == p || p.Sweep != nil && r.Sweep != nil && maps.Equal(r.Sweep.Cell, p.Sweep.Cell)) {
			out = append(out, r.Summary.Headline)
		}
	}
	return out
}

func significance(base, sub *Submission, i int) string {
	if i == 0 {
		return "(the base)"
	}
	a, b := repeats(base), repeats(sub)
	t, err := stats.Welch(a, b)
	if err != nil {
		return "single runs: no test (submit sweeps with --iterations 3 or more)"
	}
	verdict := "not significant"
	if t.Significant() {
		verdict = "significant"
	}
	// Fieller's interval: it holds 1 exactly when the test is not
	// significant, so the two never disagree.
	ci, err := stats.RatioOf(a, b)
	if errors.Is(err, stats.ErrUnbounded) {
		return fmt.Sprintf("%s (p = %.3f; no interval for the ratio: the base's mean is not clearly away from zero; %d and %d repeats)", verdict, t.P, len(a), len(b))
	}
	if err != nil {
		return "-"
	}
	return fmt.Sprintf("%s (p = %.3f; mean ratio %s, 95%% CI %s to %s, %d and %d repeats)", verdict, t.P, num(ci.Value), num(ci.Low), num(ci.High), len(a), len(b))
}

type classLink struct {
	Label string
	Link  template.URL
	Count int
	On    bool
}

type rankRow struct{ ID, Engine, CPU, CPUs, Storage, Headline, Score string }

// classes groups eligible entries by their comparable key, largest first.
func classes(es []sitestore.Entry) (keys []string, by map[string][]sitestore.Entry) {
	by = map[string][]sitestore.Entry{}
	for _, e := range es {
		if len(by[e.Comparable]) == 0 {
			keys = append(keys, e.Comparable)
		}
		by[e.Comparable] = append(by[e.Comparable], e)
	}
	sort.SliceStable(keys, func(i, j int) bool { return len(by[keys[i]]) > len(by[keys[j]]) })
	return keys, by
}

// ranked sorts a class best first and scores each entry as its ratio to
// the best (1 for the best, less for the others).
func ranked(es []sitestore.Entry) ([]sitestore.Entry, []float64) {
	es = slices.Clone(es)
	sort.SliceStable(es, func(i, j int) bool { return betterThan(es[i].Better, es[i].Headline, es[j].Headline) })
	scores := make([]float64, len(es))
	for i := range es {
		scores[i] = ratio(es[i].Better, es[i].Headline, es[0].Headline)
	}
	return es, scores
}

func (s *Server) pageLeaderboard(w http.ResponseWriter, r *http.Request) {
	wl := r.PathValue("workload")
	es, err := s.cfg.Store.Eligible(r.Context(), wl)
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	v := struct {
		page
		Workload string
		board
		Source *sourceBoard
	}{page: page{Title: "Leaderboard " + wl}, Workload: wl}
	if v.board, err = s.board(r, wl, es, "class", ""); err != nil {
		s.pageFailed(w, r, err)
		return
	}
	if v.Source, err = s.fromSource(r, wl); err != nil {
		s.pageFailed(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "leaderboard", v)
}

type machineRow struct {
	Machine, Engine, Score string
	Sets                   int
	score                  float64
}

func (s *Server) pageLeaderboards(w http.ResponseWriter, r *http.Request) {
	es, err := s.cfg.Store.Eligible(r.Context(), "")
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	es, _ = durableApart(es)
	counts := map[string]int{}
	var names []string
	for _, e := range es {
		wl := e.Facets["workload"]
		if counts[wl] == 0 {
			names = append(names, wl)
		}
		counts[wl]++
	}
	sort.Strings(names)
	var wls []facetValue
	for _, n := range names {
		wls = append(wls, facetValue{Value: n, Count: counts[n]})
	}
	// A machine's score in each set is its best result's ratio to the
	// set's best; its overall score the geometric mean over its sets.
	type mkey struct{ machine, engine string }
	best := map[mkey]map[string]float64{}
	keys, by := classes(es)
	for _, k := range keys {
		rows, scores := ranked(by[k])
		for i, e := range rows {
			m := mkey{machineOf(&e), strings.TrimSpace(e.Facets["engine"] + " " + e.Facets["engine_version"])}
			if best[m] == nil {
				best[m] = map[string]float64{}
			}
			best[m][k] = max(best[m][k], scores[i])
		}
	}
	var ms []machineRow
	for m, sets := range best {
		logSum := 0.0
		for _, sc := range sets {
			logSum += math.Log(sc)
		}
		g := math.Exp(logSum / float64(len(sets)))
		ms = append(ms, machineRow{Machine: m.machine, Engine: m.engine, Sets: len(sets), score: g, Score: strconv.FormatFloat(g, 'f', 3, 64)})
	}
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].score != ms[j].score {
			return ms[i].score > ms[j].score
		}
		return ms[i].Machine+ms[i].Engine < ms[j].Machine+ms[j].Engine
	})
	src, srcOn, err := s.sourceWorkloads(r)
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "leaderboards", struct {
		page
		Workloads []facetValue
		Machines  []machineRow
		Source    []facetValue
		SourceOn  bool
	}{page{Title: "Leaderboards"}, wls, ms, src, srcOn})
}

// machineOf names the machine a result ran on, from its facets.
func machineOf(e *sitestore.Entry) string {
	f := e.Facets
	parts := []string{f["cpu_model"], f["cpus"] + " CPUs", f["memory"], f["disk_model"], f["virtualization"]}
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" || s == " CPUs" }), ", ")
}

// clientCost describes the primary run's client CPU, and says when the
// client limited a run's figure: the first such run's note, with how many
// of a sweep's runs were.
func clientCost(p *result.Result, runs []*result.Result) (client, limited string) {
	if c := p.Summary.Client; c != nil {
		client = c.Describe()
	}
	n := 0
	for _, r := range runs {
		if note := r.Summary.Client.LimitedNote(); note != "" {
			if n == 0 {
				limited = note
			}
			n++
		}
	}
	if len(runs) > 1 && n > 0 {
		limited = fmt.Sprintf("%d of the %d runs are %s", n, len(runs), limited)
	}
	return client, limited
}

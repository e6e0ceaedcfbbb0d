package promexport_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/promexport"
)

// samples stand for a sampler's last values: what the series are named
// after is the exporter's, not the sampler's.
type samples map[string]float64

func (s samples) Latest() map[string]float64 { return s }
func (s samples) Units() map[string]string {
	u := map[string]string{}
	for k := range s {
		u[k] = "/s"
	}
	return u
}

// dashboard is what the test reads of a Grafana dashboard.
type dashboard struct {
	Title      string `json:"title"`
	Panels     []panel
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title      string `json:"title"`
	Type       string `json:"type"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

var (
	identRE    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:.]*`)
	matcherRE  = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)`)
	groupingRE = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
	stringRE   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	durationRE = regexp.MustCompile(`\[[^\]]*\]`)
)

// TestDashboardQueriesWhatIsExported holds deploy/grafana/dbmark.json to
// the code: every metric and label its queries name is one dbmark serves
// (or Prometheus adds: job, instance, le), and its data source is a
// variable.
func TestDashboardQueriesWhatIsExported(t *testing.T) {
	b, err := os.ReadFile("../../deploy/grafana/dbmark.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("not JSON: %v", err)
	}

	// What a served run exports: its families and their labels.
	srv, reg := served(t, logUniform(100))
	srv.Serve(promexport.Run{Labels: promexport.Labels{Workload: "w", Engine: "e", ClientID: "c", RunID: "r", SweepID: "s", Cell: "threads=1"},
		Metrics: reg, Samples: samples{"os.cpu.user": 10, "db.commits": 100}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fams, err := promexport.Scrape(ctx, srv.URL(), false)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	labels := map[string]bool{"job": true, "instance": true, "le": true}
	for name, f := range fams {
		names[name] = true
		if f.GetType().String() == "HISTOGRAM" {
			for _, s := range []string{"_bucket", "_count", "_sum"} {
				names[name+s] = true
			}
		}
		for _, m := range f.Metric {
			for _, lp := range m.Label {
				labels[lp.GetName()] = true
			}
		}
	}

	var exprs []string
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
				t.Errorf("panel %q: its data source must be the variable ${datasource}, and it must query something", p.Title)
			}
			for _, tg := range p.Targets {
				exprs = append(exprs, tg.Expr)
			}
		}
	}
	walk(d.Panels)
	hasDS := false
	for _, v := range d.Templating.List {
		hasDS = hasDS || (v.Name == "datasource" && v.Type == "datasource")
		if q, ok := v.Query.(map[string]any); ok {
			exprs = append(exprs, q["query"].(string))
		}
	}
	if !hasDS || len(exprs) < 10 {
		t.Fatalf("dashboard %q: a datasource variable %v, %d queries", d.Title, hasDS, len(exprs))
	}

	metricsSeen := map[string]bool{}
	for _, e := range exprs {
		for _, m := range groupingRE.FindAllStringSubmatch(e, -1) {
			for _, l := range strings.Split(m[1], ",") {
				if l = strings.TrimSpace(l); l != "" && !labels[l] {
					t.Errorf("%s: groups by %q, a label no series has", e, l)
				}
			}
		}
		for _, m := range matcherRE.FindAllStringSubmatch(e, -1) {
			if !labels[m[1]] {
				t.Errorf("%s: matches on %q, a label no series has", e, m[1])
			}
		}
		bare := durationRE.ReplaceAllString(stringRE.ReplaceAllString(e, `""`), "")
		for _, id := range identRE.FindAllString(bare, -1) {
			if strings.HasPrefix(id, "dbmark_") || strings.HasPrefix(id, "process_") {
				metricsSeen[id] = true
				if !names[id] {
					t.Errorf("%s: queries %s, which dbmark does not export", e, id)
				}
			}
		}
	}
	// The dashboard shows a multi-host run: tps, latency, errors, counters.
	for _, want := range []string{"dbmark_events_total", "dbmark_latency_seconds_bucket", "dbmark_latency_seconds", "dbmark_errors_total", "dbmark_os_sample", "dbmark_engine_sample"} {
		if !metricsSeen[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
	if !strings.Contains(string(b), "client_id") {
		t.Error("the dashboard does not split by client host")
	}
}

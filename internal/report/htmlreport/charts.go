package htmlreport

import (
	"encoding/json"
	"fmt"
)

// ChartSection is one titled set of charts, for a page that lays the
// charts out itself (the results site) rather than rendering a report.
type ChartSection struct {
	Workload, ID, Title, Note string
	Small                     bool // two charts a row
	Charts                    []ChartBox
}

// ChartBox is where one chart goes: an element with this id, which the
// script fills.
type ChartBox struct{ ID, Title, Kind string }

// Charts lays out the charts of runs as Render does: the sections to place
// (each chart's element must carry its ID and class "chart") and the JSON
// that Script draws them from, to put in a
// <script type="application/json" id="dbmark-data"> element.
func Charts(runs []Run) ([]ChartSection, []byte, error) {
	var out []ChartSection
	var charts []chart
	for _, g := range groups(runs) {
		for _, s := range g.Sections {
			cs := ChartSection{Workload: g.Workload, ID: s.ID, Title: s.Title, Note: s.Note, Small: s.Small}
			for _, c := range s.Charts {
				cs.Charts = append(cs.Charts, ChartBox{ID: c.ID, Title: c.Title, Kind: c.Kind})
				charts = append(charts, c)
			}
			out = append(out, cs)
		}
	}
	data, err := json.Marshal(struct {
		Charts []chart `json:"charts"`
	}{charts})
	if err != nil {
		return nil, nil, fmt.Errorf("encode charts: %w", err)
	}
	return out, data, nil
}

// Script is the script that draws the charts of Charts' JSON; the chart
// library must be loaded before it. It sets data-points on each chart's
// element and data-charts on the body once it has drawn.
func Script() string { return pageScript }

// Style is the report's style sheet, which the chart elements' sizes come
// from.
func Style() string { return pageStyle }

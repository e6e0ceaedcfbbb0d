package result

import (
	"fmt"
	"strings"
)

// Counters are the OS and database counters sampled during a run.
type Counters struct {
	// IntervalS is the sampling interval. A long run's series hold each
	// counter's mean over several samples per point, so that they stay
	// within a fixed number of points (see sampler.Config.MaxPoints).
	IntervalS float64         `json:"interval_s"`
	Series    []CounterSeries `json:"series"`
	// Unknown maps a source ("os", "db") to why it could not be sampled.
	Unknown map[string]string `json:"unknown,omitempty"`
}

// CounterSeries is one counter over time. A cumulative counter is stored as
// its rate over each sampling interval; a gauge as its value.
type CounterSeries struct {
	Name   string `json:"name"` // "os.cpu.iowait", "os.disk.nvme0n1.util", "db.buffer_pool_reads"
	Unit   string `json:"unit"` // "%", "/s", "MiB/s", "ms", "bytes", "pages"...
	Kind   string `json:"kind"` // "rate" or "gauge"
	Source string `json:"source"`
	// Points are [t, value]: t in seconds since the run's start, like the
	// series' t, at the end of the sampling interval.
	Points [][2]float64 `json:"points"`
	// Gaps are where samples are missing because the source lost its
	// connection (the server restarted): [from, to] in seconds on the
	// same axis, from the last sample before to the first after (to the
	// run's end when it never came back). A chart breaks its line there.
	Gaps [][2]float64 `json:"gaps,omitempty"`
}

// Counter kinds.
const (
	CounterRate  = "rate"
	CounterGauge = "gauge"
)

// Missing says where a source's samples are missing, one line per source
// with gaps ("db counters: no samples 12.3-15.8 s (their connection was
// lost)"): the series of one source share their gaps.
func (c *Counters) Missing() []string {
	if c == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range c.Series {
		if len(s.Gaps) == 0 || seen[s.Source] {
			continue
		}
		seen[s.Source] = true
		spans := make([]string, len(s.Gaps))
		for i, g := range s.Gaps {
			spans[i] = fmt.Sprintf("%.1f-%.1f s", g[0], g[1])
		}
		out = append(out, fmt.Sprintf("%s counters: no samples %s (their connection was lost and made again)", s.Source, strings.Join(spans, ", ")))
	}
	return out
}

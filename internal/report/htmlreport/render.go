// Package htmlreport renders results as one self-contained HTML file: a
// summary table, the configuration and environment, and charts drawn by an
// embedded chart library (Apache ECharts) from whatever series the results
// hold. The file needs no network to open or print.
package htmlreport

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/result"
)

// Options are what a report shows besides the runs.
type Options struct {
	Title string
	// Notes are lines shown under the title (steps a suite skipped).
	Notes []string
	// Generated is when the report was made; Tool the dbmark that made it.
	Generated time.Time
	Tool      string
	// Library is the chart library's script (ChartLibrary).
	Library []byte
}

var (
	//go:embed page.html.tmpl
	pageTemplate string
	//go:embed report.js
	pageScript string
	//go:embed report.css
	pageStyle string

	//go:embed findings.html.tmpl
	findingsTemplate string

	page = template.Must(template.Must(template.Must(template.New("page").Funcs(template.FuncMap{"join": strings.Join}).
		Parse(pageTemplate)).Parse(queriesTemplate)).Parse(findingsTemplate))
)

// Render writes the report of runs to w.
func Render(w io.Writer, runs []Run, opt Options) error {
	if len(runs) == 0 {
		return errors.New("render report: no runs")
	}
	if len(opt.Library) == 0 {
		return ErrNoChartLibrary
	}
	gs := groups(runs)
	var charts []chart
	for _, g := range gs {
		for _, s := range g.Sections {
			charts = append(charts, s.Charts...)
		}
	}
	data, err := json.Marshal(struct {
		Charts []chart `json:"charts"`
	}{charts})
	if err != nil {
		return fmt.Errorf("render report: encode charts: %w", err)
	}
	v := view{
		Title:     opt.Title,
		Notes:     opt.Notes,
		Generated: opt.Generated.Local().Format("2006-01-02 15:04:05 MST"),
		Tool:      opt.Tool,
		Summary:   summaryRows(runs),
		Groups:    gs,
		Config:    configOf(runs),
		Style:     template.CSS(pageStyle),
		Library:   template.JS(scriptSafe(opt.Library)),
		Script:    template.JS(pageScript),
		Data:      template.JS(data), // json.Marshal escapes <, > and &
	}
	if v.Title == "" {
		v.Title = "dbmark report"
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// scriptSafe keeps a script from closing its own <script> element early.
func scriptSafe(js []byte) string {
	return closeScript.ReplaceAllStringFunc(string(js), func(s string) string { return `<\/` + s[2:] })
}

var closeScript = regexp.MustCompile(`(?i)</script`)

type view struct {
	Title, Generated, Tool string
	Notes                  []string
	Summary                []summaryRow
	Groups                 []group
	Config                 config
	Style                  template.CSS
	Library, Script, Data  template.JS
}

type summaryRow struct {
	Ref, Anchor, Started, Workload, Target, Cell, Status, Error string
	// Outage sums up a degraded run's: how many, the longest wait.
	Outage string
	// Missed says how many reads that must find rows found none.
	Missed                               string
	Threads                              int
	Duration, Headline, P95, P99, Errors string
	// Client is the client's CPU per event and share of the machine;
	// Limited, when the client limited the figure, says so and what to do.
	Client, Limited string
	// Findings sums up the run's findings, which FindingsID leads to.
	Findings, FindingsID string
}

func summaryRows(runs []Run) []summaryRow {
	lb := newLabeler(runs)
	anchors := map[string]string{}
	own := map[string]bool{} // the findings ids on the page
	for _, g := range groups(runs) {
		anchors[g.Workload] = g.Anchor
		for _, f := range g.Findings {
			own[f.ID] = true
		}
	}
	out := make([]summaryRow, 0, len(runs))
	for _, r := range runs {
		res := r.Result
		s := res.Summary
		row := summaryRow{
			Ref:      r.ref(),
			Anchor:   anchors[res.Workload.Name],
			Started:  res.StartedAt.Local().Format("2006-01-02 15:04:05"),
			Workload: res.Workload.Name,
			Target:   strings.TrimSpace(res.Target.Engine + " " + res.Target.Version),
			Cell:     cellLabel(res.Sweep, lb.axes),
			Status:   string(res.Status),
			Error:    res.Error,
			Threads:  res.Run.Threads,
			Duration: fmt.Sprintf("%.1f s", s.DurationS),
			Headline: fmt.Sprintf("%s %s", num(s.Headline), s.HeadlineUnit),
			Errors:   strconv.FormatInt(s.ErrorsTotal, 10),
		}
		if len(s.Disconnects) > 0 {
			clients := map[int]bool{}
			for _, d := range s.Disconnects {
				clients[d.Client] = true
			}
			row.Outage = fmt.Sprintf("%d clients lost their connection", len(clients))
			if s.ReconnectWait != nil {
				row.Outage += fmt.Sprintf("; reconnect wait max %s ms", num(s.ReconnectWait.MaxMS))
			}
		}
		if c := s.ReadCheck; c != nil && c.Missed > 0 {
			row.Missed = fmt.Sprintf("%d of %d reads that must find rows found none", c.Missed, c.Checked)
		}
		f := findingsOf(r, "")
		row.Findings, row.FindingsID = cmp.Or(f.Brief(), "none"), row.Anchor+"-findings"
		if own[f.ID] {
			row.FindingsID = f.ID
		}
		if c := s.Client; c != nil {
			row.Client = c.Describe()
			row.Limited = c.LimitedNote()
		}
		if v, ok := s.Latency.Get(95); ok {
			row.P95 = num(v)
		}
		if v, ok := s.Latency.Get(99); ok {
			row.P99 = num(v)
		}
		out = append(out, row)
	}
	return out
}

// num prints a measurement with three significant digits or more.
func num(f float64) string {
	switch {
	case !finite(f):
		return "-"
	case f >= 100 || f == 0:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case f >= 1:
		return strconv.FormatFloat(f, 'f', 2, 64)
	default:
		return strconv.FormatFloat(f, 'g', 3, 64)
	}
}

type kv struct{ K, V string }

// config is the configuration and environment: the machine once, each
// distinct target once with the runs it applies to, and the options split
// into those every run shared and those that differed.
type config struct {
	Machine   machine
	Targets   []block
	Common    []kv
	Refs      []string
	Differing []diffRow
}

type block struct {
	Runs     string
	Rows     []kv
	Settings []kv
}

type diffRow struct {
	Name   string
	Values []string
}

func configOf(runs []Run) config {
	var c config
	c.Machine = machineOf(runs)
	tgts := newBlocks()
	for _, r := range runs {
		res := r.Result
		t := res.Target
		rows := []kv{{"kind", t.Kind}, {"URL", t.URL}, {"engine", t.Engine + " " + t.Version}, {"driver", t.Driver},
			{"data directory", t.DataDir}}
		var settings []kv
		for _, k := range slices.Sorted(maps.Keys(t.Settings)) {
			v := t.Settings[k]
			if f := t.EngineFacts; f != nil {
				if nd, ok := f.NonDefault[k]; ok {
					v += " (not the default " + nd.Default + ")"
					if nd.Source != "" {
						v = strings.TrimSuffix(v, ")") + ", from " + nd.Source + ")"
					}
				}
			}
			settings = append(settings, kv{k, v})
		}
		if f := t.EngineFacts; f != nil {
			rows = append(rows, kv{"cache", bytesText(f.CacheBytes)}, kv{"data size", bytesText(f.DataBytes)})
			for _, k := range slices.Sorted(maps.Keys(f.Sizes)) {
				rows = append(rows, kv{k, f.Sizes[k]})
			}
			if n := len(f.NonDefault); n > 0 {
				rows = append(rows, kv{"settings not at their default", strconv.Itoa(n) + " (marked below)"})
			}
		}
		tgts.add(r.ref(), rows, settings)
	}
	c.Targets = tgts.list()

	opts := make([]map[string]string, len(runs))
	names := map[string]bool{}
	for i, r := range runs {
		res := r.Result
		o := maps.Clone(res.Workload.Options)
		if o == nil {
			o = map[string]string{}
		}
		o["seed"] = strconv.FormatUint(res.Seed, 10)
		o["command"] = strings.Join(res.Command, " ")
		o["workload version"] = res.Workload.Version
		o["dbmark"] = strings.TrimSpace(res.Tool.Version + " " + res.Tool.Revision)
		opts[i] = o
		for k := range o {
			names[k] = true
		}
		c.Refs = append(c.Refs, r.ref())
	}
	for _, k := range slices.Sorted(maps.Keys(names)) {
		vals := make([]string, len(runs))
		same := true
		for i := range runs {
			vals[i] = opts[i][k]
			same = same && vals[i] == vals[0]
		}
		if same {
			c.Common = append(c.Common, kv{k, vals[0]})
		} else {
			c.Differing = append(c.Differing, diffRow{k, vals})
		}
	}
	return c
}

// blocks collects distinct key/value tables with the runs sharing each.
type blocks struct {
	order []string
	by    map[string]*block
	refs  map[string][]string
}

func newBlocks() *blocks { return &blocks{by: map[string]*block{}, refs: map[string][]string{}} }

func (b *blocks) add(ref string, rows, settings []kv) {
	var kept []kv
	for _, r := range rows {
		if strings.TrimSpace(r.V) != "" {
			kept = append(kept, r)
		}
	}
	key, _ := json.Marshal([]any{kept, settings})
	k := string(key)
	if _, ok := b.by[k]; !ok {
		b.order = append(b.order, k)
		b.by[k] = &block{Rows: kept, Settings: settings}
	}
	b.refs[k] = append(b.refs[k], ref)
}

func (b *blocks) list() []block {
	out := make([]block, 0, len(b.order))
	for _, k := range b.order {
		bl := *b.by[k]
		bl.Runs = strings.Join(b.refs[k], " ")
		out = append(out, bl)
	}
	return out
}

func bytesText(n uint64) string {
	switch {
	case n == 0:
		return ""
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// machineRows are the machine's facts beyond the basics: what the reader
// needs to know what the numbers are of (the disks, where the data lives,
// the CPU's governor, a RAID check running).
func machineRows(f *result.MachineFacts) []kv {
	rows := []kv{{"distribution", f.Distribution}}
	if f.Sockets > 0 {
		rows = append(rows, kv{"sockets, cores", fmt.Sprintf("%d, %d", f.Sockets, f.Cores)})
	}
	if f.CPUMHz > 0 {
		mhz := fmt.Sprintf("%.0f", f.CPUMHz)
		if f.CPUMaxMHz > 0 { // 0: cpufreq not readable (a VM, a container): no maximum known
			mhz += fmt.Sprintf(" (max %.0f)", f.CPUMaxMHz)
		}
		rows = append(rows, kv{"CPU MHz", mhz})
	}
	virt := strings.Join(slices.DeleteFunc([]string{f.Virtualization, f.Container, f.SystemVendor, f.ProductName, f.InstanceType},
		func(s string) bool { return s == "" }), ", ")
	rows = append(rows, kv{"governor", f.Governor}, kv{"virtualization", virt},
		kv{"swap", bytesText(f.SwapBytes)}, kv{"swap in use", bytesText(f.SwapUsedBytes)},
		kv{"transparent huge pages", f.THP})
	for _, d := range f.Disks {
		kind := ""
		if d.Rotational != nil {
			kind = "SSD or virtual"
			if *d.Rotational {
				kind = "rotational"
			}
		}
		rows = append(rows, kv{"disk " + d.Name, strings.Join(slices.DeleteFunc([]string{d.Model, bytesText(d.SizeBytes), kind,
			"scheduler " + d.Scheduler, fmt.Sprintf("nr_requests %d, read-ahead %d KiB", d.QueueDepth, d.ReadAheadK)},
			func(s string) bool { return s == "" || s == "scheduler " }), ", ")})
	}
	for _, a := range f.RAID {
		rows = append(rows, kv{"RAID " + a.Name, fmt.Sprintf("%s, chunk %s, %s, state %s, sync_action %s",
			a.Level, bytesText(a.ChunkBytes), strings.Join(a.Members, " "), a.State, a.SyncAction)})
	}
	for _, lv := range f.LVM {
		rows = append(rows, kv{"device-mapper " + lv.Device, lv.Name + " on " + strings.Join(lv.Slaves, " ")})
	}
	for _, m := range f.Mounts {
		// The space apart: it changes from run to run where the file
		// system does not.
		where := strings.ReplaceAll(m.Role, "_", " ") + " " + m.Path
		rows = append(rows, kv{where, fmt.Sprintf("%s (%s) on %s, %s", m.FSType, strings.Join(m.Options, ","), m.MountPoint, m.Device)})
		space := bytesText(m.FreeBytes) + " free"
		if m.UsedBytes > 0 {
			space += ", " + bytesText(m.UsedBytes) + " in it"
		}
		rows = append(rows, kv{where + ", space", space})
	}
	return rows
}

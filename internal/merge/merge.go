// Package merge makes one result of several hosts' results of the same
// workload and work options (dbmark merge): the load several client
// machines put on one server, measured over the same window (run
// --start-at), as if one client had run all their clients.
//
// What is exact and what is not:
//   - Latency distributions are merged bucket by bucket from the encoded
//     HDR histograms: the merged percentiles are those of every event of
//     every host, never averages of the hosts' percentiles.
//   - Counts (events, queries, errors, retries, reconnects) are summed;
//     rates are the sum of the hosts' rates, each over its own window.
//   - The interval series are aligned by wall clock (each host's
//     StartedAt + t) onto a grid from the earliest measured window's
//     start, and summed. A point's latency percentiles are the highest of
//     the hosts' at that point: the series carry no histograms.
//   - Little's law's count in flight is the merged rate times the merged
//     mean latency, over the sum of the clients.
//   - The sampled OS and engine counters are kept per host, each series
//     named with the host's id as a prefix ("web1/os.cpu.user").
package merge

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbmark/dbmark/internal/result"
)

// Note is what every merged result says of how it was made.
const Note = "merged by dbmark merge: latency distributions merged bucket by bucket from the hosts' histograms (exact percentiles of all events); " +
	"counts summed, rates the sum of the hosts' rates; series aligned by wall clock and summed, a point's percentiles the highest of the hosts'; " +
	"counters kept per host, named with the host's id"

// Merge makes one result of rs, the results of several hosts' runs of
// the same workload and work options (only the number of clients may
// differ). It refuses, with one line naming the problem, fewer than two
// results, one given twice, different workloads, engines or work
// options (the clients and an open loop's rate may differ: they add up),
// an open loop with a closed one, a workload whose headline is better lower (a query suite's
// times do not add), and measured windows that do not all overlap. The
// merged result has no id, tool or command: the caller gives them.
func Merge(rs []*result.Result) (*result.Result, error) {
	if err := check(rs); err != nil {
		return nil, err
	}
	hosts := hostIDs(rs)
	first := rs[0]
	m := &result.Result{
		SchemaVersion: result.SchemaVersion,
		Workload:      first.Workload,
		Target:        first.Target,
		Seed:          first.Seed,
		Run:           first.Run,
		StartedAt:     first.StartedAt,
		EndedAt:       first.EndedAt,
		Status:        result.StatusOK,
		Merged:        &result.Merged{Note: Note},
	}
	m.Workload.Options = make(map[string]string, len(first.Workload.Options))
	for k, v := range first.Workload.Options {
		m.Workload.Options[k] = v
	}
	threads, rate := 0, 0.0
	var errs []string
	for i, r := range rs {
		threads += r.Run.Threads
		rate += r.Run.Rate
		if r.StartedAt.Before(m.StartedAt) {
			m.StartedAt = r.StartedAt
		}
		if r.EndedAt.After(m.EndedAt) {
			m.EndedAt = r.EndedAt
		}
		if rank(r.Status) > rank(m.Status) {
			m.Status = r.Status
		}
		if r.Error != "" {
			errs = append(errs, hosts[i]+": "+r.Error)
		}
		for _, w := range r.Warnings {
			m.Warnings = append(m.Warnings, hosts[i]+": "+w)
		}
		m.Merged.Results = append(m.Merged.Results, r.ID)
		m.Clients = append(m.Clients, host(hosts[i], r))
	}
	m.Error = strings.Join(errs, "; ")
	m.Environment = sharedEnvironment(rs)
	// The clients, and an open loop's rate, are the hosts' together.
	m.Run.Threads, m.Run.Rate = threads, rate
	if _, ok := m.Workload.Options["threads"]; ok {
		m.Workload.Options["threads"] = strconv.Itoa(threads)
	}
	if _, ok := m.Workload.Options["rate"]; ok && rate > 0 {
		m.Workload.Options["rate"] = strconv.FormatFloat(rate, 'g', -1, 64)
	}
	if first.Plan != nil {
		p := *first.Plan
		p.Clients, p.Connections, p.Events, p.Rate = 0, 0, 0, rate
		for _, r := range rs {
			if r.Plan != nil {
				p.Clients += r.Plan.Clients
				p.Connections += r.Plan.Connections
				p.Events += r.Plan.Events
			}
		}
		m.Plan = &p
	}
	hists, err := mergeHistograms(rs)
	if err != nil {
		return nil, err
	}
	m.Histograms = hists.encoded
	if err := summarize(m, rs, hosts, hists); err != nil {
		return nil, err
	}
	m.Series = alignSeries(m.StartedAt, rs)
	m.Counters = counters(m.StartedAt, rs, hosts)
	m.Rows = rows(rs)
	return m, nil
}

// check refuses what cannot be merged, one line each.
func check(rs []*result.Result) error {
	if len(rs) < 2 {
		return fmt.Errorf("merge needs the results of at least two hosts (got %d)", len(rs))
	}
	seen := map[string]bool{}
	for _, r := range rs {
		if seen[r.ID] {
			return fmt.Errorf("result %s is given twice: give each host's result once", r.ID)
		}
		seen[r.ID] = true
	}
	first := rs[0]
	if first.Workload.Better == "lower" || first.Queries != nil {
		return fmt.Errorf("result %s is a %s run, whose headline is better lower: merge adds the throughputs of hosts, which such times do not", first.ID, first.Workload.Name)
	}
	for _, r := range rs[1:] {
		switch {
		case r.Workload.Name != first.Workload.Name:
			return fmt.Errorf("results %s and %s ran different workloads (%s, %s): merge takes one workload's runs", first.ID, r.ID, first.Workload.Name, r.Workload.Name)
		case r.Target.Kind != first.Target.Kind:
			return fmt.Errorf("results %s and %s ran on different engines (%s, %s): merge takes runs against one server", first.ID, r.ID, first.Target.Kind, r.Target.Kind)
		}
		if (first.Run.Rate > 0) != (r.Run.Rate > 0) {
			return fmt.Errorf("results %s and %s: one ran an open loop (--rate), the other a closed one: merge takes runs of the same work", first.ID, r.ID)
		}
		if name, a, b, ok := differentWork(first, r); ok {
			return fmt.Errorf("results %s and %s differ in the work option --%s (%q, %q): merge takes runs of the same work, only --threads and --rate may differ", first.ID, r.ID, name, a, b)
		}
	}
	// Every window must overlap every other: the latest start before the
	// earliest end.
	latest, earliest := 0, 0
	for i, r := range rs {
		if windowStart(r).After(windowStart(rs[latest])) {
			latest = i
		}
		if windowEnd(r).Before(windowEnd(rs[earliest])) {
			earliest = i
		}
	}
	if !windowStart(rs[latest]).Before(windowEnd(rs[earliest])) {
		a, b := rs[earliest], rs[latest]
		return fmt.Errorf("the measured windows of results %s (%s to %s) and %s (from %s) do not overlap: start the hosts together with run --start-at",
			a.ID, windowStart(a).Format(time.RFC3339), windowEnd(a).Format(time.RFC3339), b.ID, windowStart(b).Format(time.RFC3339))
	}
	return nil
}

// differentWork finds a work option other than the client count that a
// and b do not share.
func differentWork(a, b *result.Result) (name, va, vb string, ok bool) {
	names := map[string]bool{}
	for k := range a.Workload.Options {
		names[k] = true
	}
	for k := range b.Workload.Options {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if k == "threads" || k == "rate" || result.ClassOf(k) != result.WorkOption || !result.AppliesTo(k, a.Target.Kind) {
			continue
		}
		x, inA := a.Workload.Options[k]
		y, inB := b.Workload.Options[k]
		if x != y || inA != inB {
			return k, x, y, true
		}
	}
	return "", "", "", false
}

// windowStart is when r's measured window began, as the runner measured
// it: the --start-at instant (or later, when its clients were ready only
// after it), else the end of the warm-up.
func windowStart(r *result.Result) time.Time {
	if r.StartAt != nil {
		return r.StartAt.At.Add(seconds(r.StartAt.LateS))
	}
	return at(r.StartedAt, r.Run.WarmupS)
}

func windowEnd(r *result.Result) time.Time {
	return windowStart(r).Add(seconds(r.Summary.DurationS))
}

func at(t time.Time, s float64) time.Time { return t.Add(seconds(s)) }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func rank(s result.Status) int { return slices.Index(result.Statuses, s) }

// hostIDs names each result's host: its --client-id, else its place (not
// its hostname, which results export and submit remove); a name given
// twice gets its place added.
func hostIDs(rs []*result.Result) []string {
	ids := make([]string, len(rs))
	count := map[string]int{}
	for i, r := range rs {
		switch {
		case r.ClientID != "":
			ids[i] = r.ClientID
		default:
			ids[i] = "client" + strconv.Itoa(i+1)
		}
		count[ids[i]]++
	}
	for i := range ids {
		if count[ids[i]] > 1 {
			ids[i] += "#" + strconv.Itoa(i+1)
		}
	}
	return ids
}

// host is one host's share of the merge.
func host(id string, r *result.Result) result.ClientHost {
	h := result.ClientHost{ID: id, Result: r.ID, Threads: r.Run.Threads, StartedAt: r.StartedAt, EndedAt: r.EndedAt,
		WindowStart: windowStart(r).UTC(), DurationS: r.Summary.DurationS, Status: r.Status, Events: r.Summary.Events,
		EventsPerS: r.Summary.EventsPerS, Headline: r.Summary.Headline, HeadlineUnit: r.Summary.HeadlineUnit,
		StartAt: r.StartAt, Client: r.Summary.Client, Saturated: r.Summary.Saturated}
	if e := r.Environment; e != nil {
		h.Hostname, h.OS, h.Arch, h.CPUs, h.CPUModel = e.Hostname, e.OS, e.Arch, e.CPUs, e.CPUModel
	}
	return h
}

// histograms are the hosts' histograms merged, by operation and kind.
type histograms struct {
	encoded []result.Histogram
	byKey   map[[2]string]*hdr.Histogram
}

func (h histograms) get(op, kind string) *hdr.Histogram { return h.byKey[[2]string{op, kind}] }

// mergeHistograms merges every host's histogram of each operation and
// kind into one, bucket by bucket.
func mergeHistograms(rs []*result.Result) (histograms, error) {
	out := histograms{byKey: map[[2]string]*hdr.Histogram{}}
	var order [][2]string
	for _, r := range rs {
		for _, hh := range r.Histograms {
			h, err := hh.Decode()
			if err != nil {
				return out, fmt.Errorf("result %s: %w", r.ID, err)
			}
			key := [2]string{hh.Op, hh.Kind}
			into, ok := out.byKey[key]
			if !ok {
				out.byKey[key] = h
				order = append(order, key)
				continue
			}
			if dropped := into.Merge(h); dropped > 0 {
				return out, fmt.Errorf("result %s: histogram %s/%s: %d values out of the merged histogram's range", r.ID, hh.Op, hh.Kind, dropped)
			}
		}
	}
	for _, key := range order {
		hh, err := result.EncodeHistogram(key[0], key[1], out.byKey[key])
		if err != nil {
			return out, err
		}
		out.encoded = append(out.encoded, hh)
	}
	return out, nil
}

// summarize fills m's summary from the hosts' summaries and the merged
// histograms.
func summarize(m *result.Result, rs []*result.Result, hosts []string, hists histograms) error {
	s := &m.Summary
	ps := m.Run.Percentiles
	ws, we := windowStart(rs[0]), windowEnd(rs[0])
	errs := map[[2]string]int64{}
	ops := map[string]*result.OpSummary{}
	var opOrder []string
	var checks *result.ReadCheck
	offset := 0
	closed := true
	for i, r := range rs {
		hs := r.Summary
		ws, we = minTime(ws, windowStart(r)), maxTime(we, windowEnd(r))
		s.Events += hs.Events
		s.EventsPerS += hs.EventsPerS
		s.Queries.Read += hs.Queries.Read
		s.Queries.Write += hs.Queries.Write
		s.Queries.Other += hs.Queries.Other
		s.Queries.Total += hs.Queries.Total
		s.QueriesPerS += hs.QueriesPerS
		s.ReadMiBPerS += hs.ReadMiBPerS
		s.WriteMiBPerS += hs.WriteMiBPerS
		for _, e := range hs.Errors {
			errs[[2]string{e.Class, e.Code}] += e.Count
		}
		s.ErrorsTotal += hs.ErrorsTotal
		s.Retries += hs.Retries
		s.Reconnects += hs.Reconnects
		s.Clamped += hs.Clamped
		s.DrainS = max(s.DrainS, hs.DrainS)
		s.DrainEvents += hs.DrainEvents
		shift := r.StartedAt.Sub(m.StartedAt).Seconds()
		for _, d := range hs.Disconnects {
			d.Client += offset
			d.StartS += shift
			if d.Back {
				d.BackS += shift
			}
			s.Disconnects = append(s.Disconnects, d)
		}
		offset += r.Run.Threads
		for _, w := range hs.Warnings {
			s.Warnings = append(s.Warnings, hosts[i]+": "+w)
		}
		for _, o := range hs.Ops {
			sum, ok := ops[o.Name]
			if !ok {
				sum = &result.OpSummary{Name: o.Name, Kind: o.Kind}
				ops[o.Name] = sum
				opOrder = append(opOrder, o.Name)
			}
			sum.Count += o.Count
			sum.PerS += o.PerS
			sum.MiBPerS += o.MiBPerS
		}
		if c := hs.ReadCheck; c != nil {
			if checks == nil {
				checks = &result.ReadCheck{}
			}
			checks.Checked += c.Checked
			checks.Missed += c.Missed
			checks.Ops = addReadChecks(checks.Ops, c.Ops)
		}
		if r.Run.Rate > 0 || hs.Concurrency == 0 {
			closed = false
		}
	}
	s.DurationS = we.Sub(ws).Seconds()
	// The merged warm-up is what came before the earliest window.
	m.Run.WarmupS = max(ws.Sub(m.StartedAt).Seconds(), 0)
	for k, n := range errs {
		s.Errors = append(s.Errors, result.ErrorCount{Class: k[0], Code: k[1], Count: n})
	}
	slices.SortFunc(s.Errors, func(a, b result.ErrorCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Class, b.Class), cmp.Compare(a.Code, b.Code))
	})
	s.ReadCheck = checks
	first := rs[0].Summary
	s.LatencyOps, s.HeadlineSeries, s.HeadlineUnit = first.LatencyOps, first.HeadlineSeries, first.HeadlineUnit
	s.Extra = sharedExtra(rs)
	var head *hdr.Histogram
	var event *result.OpSummary
	for _, name := range opOrder {
		o := ops[name]
		o.Latency = result.LatencyOf(hists.get(name, "latency"), ps)
		o.Service = result.LatencyOf(hists.get(name, "service"), ps)
		s.Ops = append(s.Ops, *o)
		if (len(s.LatencyOps) == 0 && o.Kind == "event") || slices.Contains(s.LatencyOps, name) {
			if h := hists.get(name, "latency"); h != nil {
				head = mergedInto(head, h)
			}
			if o.Kind == "event" && hists.get(name, "service") != nil {
				event = o
			}
		}
	}
	s.Latency = result.LatencyOf(head, ps)
	if m.Run.Rate > 0 {
		if event != nil {
			s.Service = event.Service
		}
		s.ScheduleLag = result.LatencyOf(hists.get("events", "lag"), ps)
	}
	if closed && head != nil && head.TotalCount() > 0 {
		s.Concurrency = s.EventsPerS * head.Mean() / 1e9
	}
	// Throughputs add: the headline is the sum of the hosts', the merged
	// rate where each host's was its events per second.
	rate := true
	for _, r := range rs {
		s.Headline += r.Summary.Headline
		rate = rate && r.Summary.Headline == r.Summary.EventsPerS
	}
	if rate {
		s.Headline = s.EventsPerS
	}
	if math.IsNaN(s.Headline) {
		return errors.New("merge: the hosts' headlines do not add up to a number")
	}
	return nil
}

// mergedInto merges h into into, a copy of h when into is nil.
func mergedInto(into, h *hdr.Histogram) *hdr.Histogram {
	if into == nil {
		return hdr.Import(h.Export())
	}
	into.Merge(h)
	return into
}

func addReadChecks(into, from []result.ReadCheckOp) []result.ReadCheckOp {
	for _, f := range from {
		i := slices.IndexFunc(into, func(o result.ReadCheckOp) bool { return o.Op == f.Op })
		if i < 0 {
			into = append(into, f)
			continue
		}
		into[i].Checked += f.Checked
		into[i].Missed += f.Missed
	}
	return into
}

// sharedExtra keeps the workload's own figures that every host has alike.
func sharedExtra(rs []*result.Result) map[string]string {
	var out map[string]string
	for k, v := range rs[0].Summary.Extra {
		same := true
		for _, r := range rs[1:] {
			same = same && r.Summary.Extra[k] == v
		}
		if same {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// rows adds up what workloads that grow a table inserted (iibench); the
// series keyed by rows is each host's own and is not kept.
func rows(rs []*result.Result) *result.Rows {
	var out *result.Rows
	for _, r := range rs {
		if r.Rows == nil {
			continue
		}
		if out == nil {
			c := *r.Rows
			c.Series, c.Inserted, c.PerS, c.Deleted = nil, 0, 0, 0
			out = &c
		}
		out.Inserted += r.Rows.Inserted
		out.PerS += r.Rows.PerS
		out.Deleted += r.Rows.Deleted
		out.TableRows = max(out.TableRows, r.Rows.TableRows)
		out.DataBytes = max(out.DataBytes, r.Rows.DataBytes)
		out.IndexBytes = max(out.IndexBytes, r.Rows.IndexBytes)
	}
	return out
}

// counters keeps every host's counter series, named with the host's id
// as a prefix, on the merged result's time axis.
func counters(start time.Time, rs []*result.Result, hosts []string) *result.Counters {
	var out *result.Counters
	for i, r := range rs {
		c := r.Counters
		if c == nil {
			continue
		}
		if out == nil {
			out = &result.Counters{IntervalS: c.IntervalS}
		}
		shift := r.StartedAt.Sub(start).Seconds()
		for _, s := range c.Series {
			s.Name = hosts[i] + "/" + s.Name
			pts := make([][2]float64, len(s.Points))
			for j, p := range s.Points {
				pts[j] = [2]float64{p[0] + shift, p[1]}
			}
			s.Points = pts
			gaps := make([][2]float64, len(s.Gaps))
			for j, g := range s.Gaps {
				gaps[j] = [2]float64{g[0] + shift, g[1] + shift}
			}
			if len(gaps) == 0 {
				gaps = nil
			}
			s.Gaps = gaps
			out.Series = append(out.Series, s)
		}
		for src, why := range c.Unknown {
			if out.Unknown == nil {
				out.Unknown = map[string]string{}
			}
			out.Unknown[hosts[i]+"/"+src] = why
		}
	}
	return out
}

// sharedEnvironment is the hosts' machine when every host's is the same
// but for its name (a fleet of like clients), else none: each host's is in
// Clients.
func sharedEnvironment(rs []*result.Result) *result.Environment {
	var env *result.Environment
	for i, r := range rs {
		if r.Environment == nil {
			return nil
		}
		e := *r.Environment
		e.Hostname = ""
		if i == 0 {
			env = &e
			continue
		}
		if !reflect.DeepEqual(*env, e) {
			return nil
		}
	}
	return env
}

package sweep

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
)

// Metric is one figure of a run that a sweep keeps per cell: its name
// (what --metric takes) and its unit.
type Metric struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
}

// Measure is a metric's value in one run.
type Measure struct {
	Metric
	Value float64
}

// Headline is the metric a sweep shows unless told otherwise: the
// workload's headline (tps, rows/s, ...).
const Headline = "headline"

// The run-wide metrics, named as --metric takes them. Latency percentiles
// are "p" and the percentile (p50, p95, p99, p99.9: those the run kept).
const (
	MetricQPS        = "qps"
	MetricMeanMS     = "mean"
	MetricReadMiB    = "read-mib/s"
	MetricWriteMiB   = "write-mib/s"
	MetricErrors     = "errors"
	MetricRetries    = "retries"
	MetricReconnects = "reconnects"
	opPrefix         = "op:"
	opUnit           = "/s" // an operation's rate
)

// fixed are the run-wide metrics every run may have, in the order they are
// listed; percentiles follow the headline.
var fixed = []string{Headline, "p50", "p95", "p99", MetricMeanMS, MetricQPS, MetricReadMiB, MetricWriteMiB, MetricErrors, MetricRetries, MetricReconnects}

// Measures are every metric of r: the headline, the event latency's
// percentiles and mean, queries per second, MiB/s where bytes move, errors,
// retries and reconnects, then per operation that ran ("op:NAME") its rate
// and, where it was timed, its percentiles and mean ("op:NAME:p95",
// "op:NAME:mean") and its MiB/s where it moves bytes ("op:NAME:mib/s"). An
// operation that never ran in r is left out.
func Measures(r *result.Result) []Measure {
	s := &r.Summary
	unit := s.HeadlineUnit
	if unit == "" {
		unit = r.Workload.Headline
	}
	out := []Measure{{Metric{Headline, unit}, s.Headline}}
	out = appendLatency(out, "", s.Latency)
	out = append(out, Measure{Metric{MetricQPS, "queries/s"}, s.QueriesPerS})
	if s.ReadMiBPerS > 0 || s.WriteMiBPerS > 0 {
		out = append(out, Measure{Metric{MetricReadMiB, "MiB/s"}, s.ReadMiBPerS}, Measure{Metric{MetricWriteMiB, "MiB/s"}, s.WriteMiBPerS})
	}
	out = append(out,
		Measure{Metric{MetricErrors, "errors"}, float64(s.ErrorsTotal)},
		Measure{Metric{MetricRetries, "retries"}, float64(s.Retries)},
		Measure{Metric{MetricReconnects, "reconnects"}, float64(s.Reconnects)})
	for _, op := range s.Ops {
		if op.Count == 0 {
			continue
		}
		name := opPrefix + op.Name
		out = append(out, Measure{Metric{name, opUnit}, op.PerS})
		out = appendLatency(out, name+":", op.Latency)
		if op.MiBPerS > 0 {
			out = append(out, Measure{Metric{name + ":mib/s", "MiB/s"}, op.MiBPerS})
		}
	}
	return out
}

// appendLatency adds l's percentiles ("p95") and mean, their names after
// prefix; the mean of the events' latency is latency-mean, an
// operation's prefix:mean.
func appendLatency(out []Measure, prefix string, l *result.Latency) []Measure {
	if l == nil {
		return out
	}
	for _, p := range l.Percentiles {
		out = append(out, Measure{Metric{prefix + percentileName(p.P), "ms"}, p.MS})
	}
	mean := MetricMeanMS
	if prefix != "" {
		mean = prefix + "mean"
	}
	return append(out, Measure{Metric{mean, "ms"}, l.MeanMS})
}

func percentileName(p float64) string { return "p" + strconv.FormatFloat(p, 'f', -1, 64) }

// CheckMetric says whether name can be a metric at all, before any run: one
// of the run-wide names, a percentile (pNN), or an operation's ("op:NAME",
// whose operations only a run shows, so its name is not checked here).
func CheckMetric(name string) error {
	if name == "" || slices.Contains(fixed, name) || strings.HasPrefix(name, opPrefix) && len(name) > len(opPrefix) {
		return nil
	}
	if p, ok := strings.CutPrefix(name, "p"); ok {
		if f, err := strconv.ParseFloat(p, 64); err == nil && f > 0 && f < 100 {
			return nil
		}
	}
	return fmt.Errorf("--metric %q: not a metric; valid: %s, pNN (a latency percentile), op:NAME[:p95|:mean|:mib/s] (an operation's rate, latency or MiB/s)", name, strings.Join(fixed, ", "))
}

// Known is every metric measured in runs, in the order Measures gives
// them, each once.
func Known(runs [][]Measure) []Metric {
	var out []Metric
	seen := map[string]bool{}
	for _, ms := range runs {
		for _, m := range ms {
			if !seen[m.Name] {
				seen[m.Name] = true
				out = append(out, m.Metric)
			}
		}
	}
	return out
}

// CheckKnown says whether name is among known, naming every one when it
// is not: the run-wide metrics, then the operations, whose latency and
// MiB/s metrics are their name and a suffix.
func CheckKnown(name string, known []Metric) error {
	if name == "" || slices.ContainsFunc(known, func(m Metric) bool { return m.Name == name }) {
		return nil
	}
	var wide, ops, suffixes []string
	for _, m := range known {
		op, isOp := strings.CutPrefix(m.Name, opPrefix)
		switch {
		case !isOp:
			wide = append(wide, m.Name)
		case m.Unit == opUnit:
			ops = append(ops, op)
		default:
			// A suffix follows the operation's own name: the longest
			// operation it starts with.
			base := ""
			for _, o := range ops {
				if strings.HasPrefix(op, o+":") && len(o) > len(base) {
					base = o
				}
			}
			if sfx := op[len(base):]; base != "" && !slices.Contains(suffixes, sfx) {
				suffixes = append(suffixes, sfx)
			}
		}
	}
	msg := fmt.Sprintf("--metric %q: not measured in this sweep's runs; valid: %s", name, strings.Join(wide, ", "))
	if len(ops) > 0 {
		msg += fmt.Sprintf("; op:NAME (the operation's rate), with %s after it for its latency or MiB/s, for NAME one of %s", strings.Join(suffixes, ", "), strings.Join(ops, ", "))
	}
	return errors.New(msg)
}

package htmlreport

import (
	"slices"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
)

// labeler names a run in a legend: its reference, plus what tells it apart
// from the others of its group (sweep cell, every option and server
// setting that differs, engine). Nothing that differs is dropped: a long
// label is shortened instead.
type labeler struct {
	axes        []string
	options     []string // options that differ between the runs outside sweeps
	short       bool     // name the options by their abbreviations
	showEngines bool
}

// abbreviateOver is how many differing options a label names in full;
// beyond it each name is shortened (abbreviate) and the values kept.
const abbreviateOver = 2

func newLabeler(runs []Run) labeler {
	engines := map[string]bool{}
	for _, r := range runs {
		engines[r.Result.Target.Engine+" "+r.Result.Target.Version] = true
	}
	opts := differingOptions(runs)
	return labeler{axes: varyingAxes(runs), options: opts, short: len(opts) > abbreviateOver, showEngines: len(engines) > 1}
}

// differingOptions names the options whose values differ between the runs
// that are not part of a sweep (a sweep's cell already tells its runs
// apart): those that change the work first (threads first), then how the
// runs were measured. Output options and the seed say nothing about what
// was measured.
func differingOptions(runs []Run) []string {
	var free []map[string]string
	keys := map[string]bool{}
	for _, r := range runs {
		if r.Result.Sweep == nil {
			free = append(free, r.Result.Workload.Options)
			for k := range r.Result.Workload.Options {
				keys[k] = true
			}
		}
	}
	var out []string
	for k := range keys {
		if k == "seed" || result.ClassOf(k) == result.OutputOption {
			continue
		}
		for _, o := range free[1:] {
			if o[k] != free[0][k] {
				out = append(out, k)
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if ca, cb := result.ClassOf(a), result.ClassOf(b); ca != cb {
			return int(ca) - int(cb)
		}
		return threadsFirst(a, b)
	})
	return out
}

func threadsFirst(a, b string) int {
	if (a == "threads") != (b == "threads") {
		if a == "threads" {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func (l labeler) label(r Run) string {
	parts := []string{r.ref()}
	if c := cellLabel(r.Result.Sweep, l.axes); c != "" {
		parts = append(parts, c)
	}
	if r.Result.Sweep == nil {
		for _, k := range l.options {
			name := k
			if l.short {
				name = abbreviate(k)
			}
			v := r.Result.Workload.Options[k]
			if v == "" {
				v = "-"
			}
			parts = append(parts, name+"="+v)
		}
	}
	if l.showEngines {
		parts = append(parts, r.Result.Target.Engine+" "+r.Result.Target.Version)
	}
	return strings.Join(parts, " ")
}

// abbreviate shortens an option's name to the first three letters of each
// of its words, keeping the separators: "secondary-indexes" is "sec-ind",
// "server.innodb_flush_log_at_trx_commit" is "ser.inn_flu_log_at_trx_com".
// Threads stay threads: every reader knows them.
func abbreviate(name string) string {
	if name == "threads" {
		return name
	}
	var b strings.Builder
	word := 0
	for _, c := range name {
		if c == '-' || c == '_' || c == '.' {
			b.WriteRune(c)
			word = 0
			continue
		}
		if word < 3 {
			b.WriteRune(c)
		}
		word++
	}
	return b.String()
}

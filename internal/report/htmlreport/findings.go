package htmlreport

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/saturation"
)

// runFindings is what a run found about itself, shown before its charts:
// why it dipped, what ran out, and what makes its figures doubtful.
type runFindings struct {
	ID    string // the element's id, which the summary links to
	Ref   string
	Label string // what tells the run apart in its group (sweep cell, engine)
	Items []finding
}

// Finding kinds, in the order a run's findings are listed: what ended the
// run, then why throughput dipped, what ran out, and the warnings.
const (
	findFailed  = "failed"
	findDip     = "dip"
	findLimit   = "limit"
	findClient  = "client"
	findWarning = "warning"
	findGap     = "gap"
	findMachine = "preflight"
	findNone    = "none" // nothing sampled was at its limit: said, as it answers "what ran out"
)

// finding is one line of a run's findings, with the details under it (a
// dip's counters).
type finding struct {
	Kind    string
	Head    string // the line's lead: "dip 41-44 s", "ran out"
	Text    string
	Short   string // what ran out and for how much of the run, for the summary table: "cpu 100%"
	Details []string
}

// Serious says whether the finding is one a reader must see: everything but
// the note that nothing ran out.
func (f finding) Serious() bool { return f.Kind != findNone }

// findingsID is the id of a run's findings on the page.
func findingsID(r Run) string { return "findings-" + strings.TrimPrefix(r.ref(), "#") }

// findingsOf lists r's findings, most telling first.
func findingsOf(r Run, label string) runFindings {
	res := r.Result
	s := res.Summary
	out := runFindings{ID: findingsID(r), Ref: r.ref(), Label: label}
	add := func(kind, head, text string, details ...string) {
		out.Items = append(out.Items, finding{Kind: kind, Head: head, Text: text, Details: details})
	}
	if res.Error != "" && res.Status != result.StatusOK {
		add(findFailed, string(res.Status), res.Error)
	}
	unit := cmp.Or(s.HeadlineUnit, "events/s")
	for _, d := range s.Dips {
		var movers []string
		for _, m := range d.Movers {
			movers = append(movers, fmt.Sprintf("%s %s (typically %s)", m.Name, withUnit(m.During, m.Unit), withUnit(m.Typical, m.Unit)))
		}
		text := fmt.Sprintf("%s %+.0f%% against its running median", unit, d.Change*100)
		if len(movers) == 0 {
			text += "; no sampled counter stood out"
		} else {
			text += "; the counters that moved most then:"
		}
		add(findDip, fmt.Sprintf("dip %s-%s s", secs(d.FromS), secs(d.ToS)), text, movers...)
	}
	for _, l := range s.Saturated {
		add(findLimit, "ran out", fmt.Sprintf("%s, %.0f%% of the run", l.Detail, l.Share*100))
		out.Items[len(out.Items)-1].Short = fmt.Sprintf("%s %.0f%%", l.Resource, l.Share*100)
	}
	if note := s.Client.LimitedNote(); note != "" {
		add(findClient, "client-limited", strings.TrimPrefix(note, "client-limited: "))
	}
	for _, w := range s.Warnings {
		add(findWarning, "warning", w)
	}
	for _, m := range res.Counters.Missing() {
		add(findGap, "counters", m)
	}
	for _, w := range res.Warnings {
		add(findMachine, "before the run", w)
	}
	if len(s.Saturated) == 0 && res.Counters != nil && len(res.Counters.Series) > 0 {
		add(findNone, "ran out", saturation.Line(nil))
	}
	return out
}

// Serious says whether any of the run's findings is more than the note
// that nothing ran out.
func (f runFindings) Serious() bool {
	for _, it := range f.Items {
		if it.Serious() {
			return true
		}
	}
	return false
}

// Brief sums up the findings in a few words for the summary table: "2
// dips; ran out: cpu 93%, disk vda 30%; 1 warning", a share being of the
// run.
func (f runFindings) Brief() string {
	n := map[string]int{}
	var limits []string
	for _, it := range f.Items {
		n[it.Kind]++
		if it.Kind == findLimit {
			limits = append(limits, it.Short)
		}
	}
	var parts []string
	if n[findFailed] > 0 {
		parts = append(parts, "failed")
	}
	if k := n[findDip]; k > 0 {
		parts = append(parts, plural(k, "dip"))
	}
	if len(limits) > 0 {
		parts = append(parts, "ran out: "+strings.Join(limits, ", "))
	}
	if n[findClient] > 0 {
		parts = append(parts, "client-limited")
	}
	if k := n[findWarning] + n[findGap] + n[findMachine]; k > 0 {
		parts = append(parts, plural(k, "warning"))
	}
	return strings.Join(parts, "; ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// withUnit is a counter's value as a reader reads it: "98%", "6", "12.5
// ms", "5.09 GiB", "3.20 MiB/s".
func withUnit(v float64, unit string) string {
	if rest, ok := strings.CutPrefix(unit, "bytes"); ok && math.Abs(v) >= 1<<10 {
		binaryPrefixes := [...]string{"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"}
		i := 0
		for ; math.Abs(v) >= 1<<10 && i < len(binaryPrefixes)-1; i++ {
			v /= 1 << 10
		}
		return strconv.FormatFloat(v, 'f', 2, 64) + " " + binaryPrefixes[i] + rest
	}
	s := strconv.FormatFloat(v, 'g', 3, 64) // three digits: 76.1%, 6, 0.25
	if math.Abs(v) >= 100 {
		s = strconv.FormatFloat(v, 'f', 0, 64)
	}
	switch unit {
	case "":
		return s
	case "%":
		return s + "%"
	}
	return s + " " + unit
}

// secs is a time on the run's axis to a tenth of a second: "41", "4.5".
func secs(f float64) string { return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) }

// sharedFinding is a finding that several runs of a group share (the
// same resource ran out, the same warning before the run): said once, with
// the runs it applies to and the words of the first of them.
type sharedFinding struct {
	finding
	Runs string // "#8 #9 #11", or "every run"
	Of   string // "8 of 10 runs"
	// Varies says the runs' figures differ: Text has the first's.
	Varies bool
}

// groupFindings lays out a group's findings: those that several runs
// share once, then each run's own (its dips always), then the runs that
// found nothing. A lone run's are all its own.
func groupFindings(runs []Run, lb labeler) (shared []sharedFinding, own []runFindings, quiet string) {
	all := make([]runFindings, len(runs))
	count := map[string]int{}
	for i, r := range runs {
		all[i] = findingsOf(r, lb.label(r))
		seen := map[string]bool{}
		for _, it := range all[i].Items {
			if k := it.key(); k != "" && !seen[k] {
				seen[k] = true
				count[k]++
			}
		}
	}
	byKey := map[string]int{}
	var quietRefs []string
	for i, f := range all {
		mine := f
		mine.Items = nil
		for _, it := range f.Items {
			k := it.key()
			if len(runs) == 1 || k == "" || count[k] < 2 {
				mine.Items = append(mine.Items, it)
				continue
			}
			j, ok := byKey[k]
			if !ok {
				j = len(shared)
				byKey[k] = j
				shared = append(shared, sharedFinding{finding: it})
			}
			shared[j].Varies = shared[j].Varies || it.Text != shared[j].Text
			shared[j].Runs = strings.TrimSpace(shared[j].Runs + " " + runs[i].ref())
		}
		switch {
		case len(mine.Items) > 0:
			own = append(own, mine)
		case len(f.Items) == 0:
			quietRefs = append(quietRefs, runs[i].ref())
		}
	}
	// In the order of a run's own: what ran out before the warnings,
	// and the note that nothing did last.
	rank := []string{findFailed, findDip, findLimit, findClient, findWarning, findGap, findMachine, findNone}
	slices.SortStableFunc(shared, func(a, b sharedFinding) int {
		return slices.Index(rank, a.Kind) - slices.Index(rank, b.Kind)
	})
	for i := range shared {
		n := count[shared[i].key()]
		shared[i].Of = fmt.Sprintf("%d of %d runs", n, len(runs))
		if n == len(runs) {
			shared[i].Runs, shared[i].Of = "every run", ""
		}
	}
	return shared, own, strings.Join(quietRefs, " ")
}

// key is what makes two runs' findings the same one, their figures apart
// ("CPUs 85% busy" in one run and 90% in the next); "" for the findings
// that are each run's own: its failure and its dips.
func (f finding) key() string {
	if f.Kind == findFailed || f.Kind == findDip {
		return ""
	}
	var b strings.Builder
	b.WriteString(f.Kind + "\x00" + f.Head + "\x00")
	digits := false
	for _, c := range f.Text {
		d := c >= '0' && c <= '9' || (digits && c == '.')
		if !d {
			b.WriteRune(c)
		} else if !digits {
			b.WriteByte('#')
		}
		digits = d
	}
	return b.String()
}

// dipBands are r's dips as ranges to shade on its time axis, labelled with
// how far throughput fell.
func dipBands(r Run) []band {
	var out []band
	for _, d := range r.Result.Summary.Dips {
		out = append(out, band{From: d.FromS, To: d.ToS, Label: fmt.Sprintf("dip %+.0f%%", d.Change*100)})
	}
	return out
}

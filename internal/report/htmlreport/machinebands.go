package htmlreport

import "strings"

// machineBands are the stretches of a run during which the machine itself
// was busy with something that lowers its figures, read from the sampled
// counters: an md array's sync (a RAID check that began on its timer in
// the middle of the run), from its first sample to its last.
func machineBands(r Run) []band {
	c := r.Result.Counters
	if c == nil {
		return nil
	}
	var out []band
	for _, s := range c.Series {
		md, ok := strings.CutPrefix(s.Name, "os.raid.")
		if !ok || !strings.HasSuffix(md, ".sync_pct") || len(s.Points) == 0 {
			continue
		}
		from, to := s.Points[0][0]-c.IntervalS, s.Points[len(s.Points)-1][0]
		out = append(out, band{From: max(from, 0), To: to, Label: "RAID " + strings.TrimSuffix(md, ".sync_pct") + " sync"})
	}
	return out
}

package report

import (
	"fmt"
	"sort"
	"strings"
)

// Shown renders the counters named by --show for the live line: a name
// matches a counter whose full name ends with it ("iowait" is os.cpu.iowait,
// "util" is every disk's utilisation). Names matching nothing are skipped.
// A stale value (its source had not read it by the line's tick) is the
// previous interval's and says so.
func Shown(names []string, latest map[string]float64, units map[string]string, stale map[string]bool) string {
	if len(names) == 0 || len(latest) == 0 {
		return ""
	}
	keys := make([]string, 0, len(latest))
	for k := range latest {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, n := range names {
		for _, k := range keys {
			if k != n && !strings.HasSuffix(k, "."+n) {
				continue
			}
			// A cluster's server's counter keeps its server: "server2/cache_hit".
			label := strings.Replace(strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(k, "os."), "db."), "disk."), "/db.", "/", 1)
			fmt.Fprintf(&b, " %s: %s", label, counterValue(latest[k], units[k]))
			if stale[k] {
				b.WriteString(" (stale)")
			}
		}
	}
	return b.String()
}

func counterValue(v float64, unit string) string {
	switch unit {
	case "bytes":
		return fmt.Sprintf("%.1fMiB", v/(1<<20))
	case "bytes/s":
		return fmt.Sprintf("%.1fMiB/s", v/(1<<20))
	case "%":
		return fmt.Sprintf("%.1f%%", v)
	case "", "requests", "pages":
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.1f%s", v, unit)
}

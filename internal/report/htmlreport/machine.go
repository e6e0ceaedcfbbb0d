package htmlreport

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
)

// machine is the machine the runs ran on, shown once: the facts every run
// shares, then a row per fact that differed, a column per run (another
// host, the swap in use, the free space that a run used up).
type machine struct {
	Runs      string // the runs it applies to, when not all of them
	Common    []kv
	Refs      []string
	Differing []diffRow
}

func machineOf(runs []Run) machine {
	var m machine
	var per []map[string]string
	var keys []string
	seen := map[string]bool{}
	for _, r := range runs {
		e := r.Result.Environment
		if e == nil {
			continue
		}
		vals := map[string]string{}
		for _, row := range environmentRows(e) {
			if strings.TrimSpace(row.V) == "" {
				continue
			}
			vals[row.K] = row.V
			if !seen[row.K] {
				seen[row.K] = true
				keys = append(keys, row.K)
			}
		}
		per = append(per, vals)
		m.Refs = append(m.Refs, r.ref())
	}
	if len(per) < len(runs) {
		m.Runs = strings.Join(m.Refs, " ")
	}
	for _, k := range keys {
		vals := make([]string, len(per))
		same := true
		for i, p := range per {
			vals[i] = p[k]
			same = same && vals[i] == vals[0]
		}
		if same {
			m.Common = append(m.Common, kv{k, vals[0]})
		} else {
			m.Differing = append(m.Differing, diffRow{k, vals})
		}
	}
	return m
}

// environmentRows are a machine's facts as the report names them. The
// preflight warnings are not among them: they are each run's findings.
func environmentRows(e *result.Environment) []kv {
	rows := []kv{{"host", e.Hostname}, {"OS", e.OS + "/" + e.Arch}, {"kernel", e.Kernel},
		{"CPU", fmt.Sprintf("%d × %s", e.CPUs, e.CPUModel)}, {"memory", bytesText(e.MemoryB)},
		{"clock source", e.ClockSrc}, {"clock read", fmt.Sprintf("%.1f ns", e.ClockNowNS)},
		{"GOMAXPROCS", strconv.Itoa(e.GoMaxProcs)}}
	if f := e.MachineFacts; f != nil {
		rows = append(rows, machineRows(f)...)
	}
	return rows
}

package htmlreport

import "testing"

// TestHostCountersKeepTheirKind: a merged result's counters, named with
// their host ("web1/os.cpu.user"), are grouped as the host's own are.
func TestHostCountersKeepTheirKind(t *testing.T) {
	kinds := counterKinds()
	for name, want := range map[string]string{
		"web1/os.cpu.user":       "cpu",
		"h2/db.blocks_read":      "engine",
		"os.disk.nvme0n1.util":   "disks",
		"client3/os.disk.x.util": "disks",
		"inserts_per_s":          "workload",
	} {
		if got := kinds[kindOf(kinds, name)].Key; got != want {
			t.Errorf("%s: kind %s, want %s", name, got, want)
		}
	}
}

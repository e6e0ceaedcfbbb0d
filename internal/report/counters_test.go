package report

import "testing"

func TestShown(t *testing.T) {
	latest := map[string]float64{"os.cpu.iowait": 3.25, "os.disk.sda.util": 50, "os.disk.md0.util": 12.5, "db.dirty_pages": 40, "os.mem.dirty": 3 << 20}
	units := map[string]string{"os.cpu.iowait": "%", "os.disk.sda.util": "%", "os.disk.md0.util": "%", "db.dirty_pages": "pages", "os.mem.dirty": "bytes"}
	got := Shown([]string{"iowait", "util", "dirty_pages", "dirty", "nosuch"}, latest, units, map[string]bool{"db.dirty_pages": true})
	want := " cpu.iowait: 3.2% md0.util: 12.5% sda.util: 50.0% dirty_pages: 40.0 (stale) mem.dirty: 3.0MiB"
	if got != want {
		t.Errorf("Shown:\n got %q\nwant %q", got, want)
	}
}

// A cluster's servers' counters are shown each with its server.
func TestShownByServer(t *testing.T) {
	latest := map[string]float64{"server1/db.cache_hit": 99, "server2/db.cache_hit": 97.5}
	units := map[string]string{"server1/db.cache_hit": "%", "server2/db.cache_hit": "%"}
	if got, want := Shown([]string{"cache_hit"}, latest, units, nil), " server1/cache_hit: 99.0% server2/cache_hit: 97.5%"; got != want {
		t.Errorf("Shown:\n got %q\nwant %q", got, want)
	}
}

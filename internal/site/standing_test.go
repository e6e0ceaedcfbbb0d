package site_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site"
	"github.com/dbmark/dbmark/internal/site/sitestore"
)

// onDisk puts r's data directory on an NVMe or a rotational disk, with
// a file system and CPU model given.
func onDisk(r *result.Result, nvme bool, fs, cpu string) {
	disk := result.Disk{Name: "sda", Model: "WDC WD40EFRX", Rotational: new(true)}
	if nvme {
		disk = result.Disk{Name: "nvme0n1", Model: "Samsung SSD 980 PRO", Rotational: new(false)}
	}
	if r.Environment == nil {
		r.Environment = &result.Environment{}
	}
	r.Environment.CPUModel = cpu
	r.Environment.MachineFacts = &result.MachineFacts{Disks: []result.Disk{disk},
		Mounts: []result.Mount{{Role: "data_dir", Device: disk.Name + "p1", FSType: fs}}}
}

// plantedSite submits n results of one set: NVMe doubles the headline,
// with ±15% noise; CPU model and file system are drawn at random and do
// nothing. It returns the ids, NVMe ones at even positions.
func plantedSite(t *testing.T, ts *testServer, n int, seed uint64) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	base := realRun(t, "oltp_point_select")
	var ids []string
	for i := range n {
		r := variant(t, base, func(r *result.Result) {
			released(r)
			onDisk(r, i%2 == 0, []string{"ext4", "xfs"}[rng.IntN(2)], []string{"EPYC 7763", "Xeon 6338"}[rng.IntN(2)])
			h := 1000.0
			if i%2 == 0 {
				h = 2000
			}
			r.Summary.Headline = h * math.Exp(rng.NormFloat64()*0.15)
		})
		ids = append(ids, ts.mustSubmit(submission(r)))
	}
	return ids
}

var percentileRE = regexp.MustCompile(`id="percentile">(\d+)%</strong> of the (\d+) other`)

func percentileOn(t *testing.T, ts *testServer, id string) (pct, others int) {
	t.Helper()
	a := ts.do("GET", "/r/"+id, nil)
	if a.Status != http.StatusOK {
		t.Fatalf("/r/%s: %d", id, a.Status)
	}
	m := percentileRE.FindSubmatch(a.Body)
	if m == nil {
		t.Fatalf("/r/%s shows no percentile", id)
	}
	fmt.Sscan(string(m[1]), &pct)
	fmt.Sscan(string(m[2]), &others)
	return pct, others
}

// TestStandingFindsPlantedEffect: on a site holding a set where NVMe
// doubles the headline, a result's page places it and names storage kind
// NVMe, with a ratio near 2 and the counts behind it; the workload's page
// shows the same set; a new result and a hide are seen at once.
func TestStandingFindsPlantedEffect(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ts := newServer(t, dsn, nil)
		ids := plantedSite(t, ts, 40, 1)
		a := ts.do("GET", "/r/"+ids[0], nil)
		body := string(a.Body)
		for _, want := range []string{"Where it stands", "storage kind</td><td>NVMe", "20 / 20", "has it", "not a cause"} {
			if !strings.Contains(body, want) {
				t.Errorf("the result page lacks %q", want)
			}
		}
		ratio := regexp.MustCompile(`storage kind</td><td>NVMe</td><td class="n ratio">([0-9.]+)×`).FindStringSubmatch(body)
		if ratio == nil {
			t.Fatal("no ratio for NVMe")
		}
		var r float64
		fmt.Sscan(ratio[1], &r)
		if r < 1.8 || r > 2.2 {
			t.Errorf("NVMe's ratio %.2f, want about 2", r)
		}
		for _, noise := range []string{"CPU model</td>", "file system</td>"} {
			if strings.Contains(body, noise) {
				t.Errorf("a fact with no effect is reported: %s", noise)
			}
		}
		// An NVMe result stands in the upper half, an HDD one in the lower.
		if p, n := percentileOn(t, ts, ids[0]); p < 50 || n != 39 {
			t.Errorf("NVMe result at %d%% of %d", p, n)
		}
		if p, _ := percentileOn(t, ts, ids[1]); p >= 50 {
			t.Errorf("HDD result at %d%%", p)
		}
		page := ts.do("GET", "/standing/oltp_point_select", nil)
		if page.Status != http.StatusOK || !strings.Contains(string(page.Body), "storage kind</td><td>NVMe") ||
			!strings.Contains(string(page.Body), "<h2>SQLite 3, threads 1</h2>") {
			t.Errorf("the workload's page: %d\n%.2000s", page.Status, page.Body)
		}
		// A new best result: every page counts it and the best stands at 100%.
		best := variant(t, realRun(t, "oltp_point_select"), func(r *result.Result) {
			released(r)
			onDisk(r, true, "ext4", "EPYC 7763")
			r.Summary.Headline = 1e6
		})
		bestID := ts.mustSubmit(submission(best))
		if p, n := percentileOn(t, ts, bestID); p != 100 || n != 40 {
			t.Errorf("the new best at %d%% of %d, want 100%% of 40", p, n)
		}
		if _, n := percentileOn(t, ts, ids[0]); n != 40 {
			t.Errorf("after a new result, %d others, want 40", n)
		}
		if a := ts.do("POST", "/api/v1/admin/results/"+bestID+"/hide", nil, "Authorization", "Bearer s3cret-admin-token"); a.Status != http.StatusOK {
			t.Fatalf("hide: %d %s", a.Status, a.Body)
		}
		if _, n := percentileOn(t, ts, ids[0]); n != 39 {
			t.Errorf("after a hide, %d others, want 39", n)
		}
		if a := ts.do("DELETE", "/api/v1/admin/results/"+ids[2], nil, "Authorization", "Bearer s3cret-admin-token"); a.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", a.Status, a.Body)
		}
		if _, n := percentileOn(t, ts, ids[0]); n != 38 {
			t.Errorf("after a delete, %d others, want 38", n)
		}
		// Another engine major version is another set.
		other := variant(t, realRun(t, "oltp_point_select"), func(r *result.Result) { released(r); r.Target.Version = "4.0.1" })
		if a := ts.do("GET", "/r/"+ts.mustSubmit(submission(other)), nil); !strings.Contains(string(a.Body), "No other result did the same work") {
			t.Errorf("a result alone in its set:\n%.3000s", a.Body)
		}
	})
}

// TestStandingShuffledInventsNothing: the same site with the headlines
// shuffled over the results reports no fact.
func TestStandingShuffledInventsNothing(t *testing.T) {
	ts := newServer(t, t.TempDir()+"/site.db", nil)
	rng := rand.New(rand.NewPCG(9, 9))
	base := realRun(t, "oltp_point_select")
	var id string
	for i := range 40 {
		r := variant(t, base, func(r *result.Result) {
			released(r)
			onDisk(r, i%2 == 0, []string{"ext4", "xfs"}[rng.IntN(2)], []string{"EPYC 7763", "Xeon 6338"}[rng.IntN(2)])
			r.Summary.Headline = 1000 * math.Exp(rng.NormFloat64()*0.5) // nothing planted
		})
		id = ts.mustSubmit(submission(r))
	}
	a := ts.do("GET", "/r/"+id, nil)
	if !strings.Contains(string(a.Body), "No fact separates the better half from the worse") {
		t.Errorf("facts were reported on random headlines:\n%s", a.Body)
	}
}

// TestStandingOfOldResults: results stored before the store kept standing
// facts get them when a server starts.
func TestStandingOfOldResults(t *testing.T) {
	dsn := t.TempDir() + "/site.db"
	st, err := sitestore.Open(t.Context(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 12 {
		r := variant(t, realRun(t, "oltp_point_select"), func(r *result.Result) { released(r); r.Summary.Headline = float64(100 + i) })
		e, err := submission(r).Entry(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		e.Peer = nil // as stored before
		if _, _, _, err := st.Put(t.Context(), e, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	st.Close()
	ts := newServer(t, dsn, nil)
	if p, n := percentileOn(t, ts, ids[11]); p != 100 || n != 11 {
		t.Errorf("after the backfill, the best at %d%% of %d others, want 100%% of 11", p, n)
	}
}

// TestPeerOf: the set is the same work on the same engine's major
// version, and its facts name the data directory's storage kind.
func TestPeerOf(t *testing.T) {
	base := realRun(t, "oltp_point_select")
	with := func(fn func(*result.Result)) *sitestore.Peer { return site.PeerOf(variant(t, base, fn)) }
	a := with(func(r *result.Result) { r.Target.Version = "16.4"; onDisk(r, true, "xfs", "EPYC") })
	if b := with(func(r *result.Result) { r.Target.Version = "16.9"; onDisk(r, false, "ext4", "Xeon") }); b.Key != a.Key {
		t.Error("16.4 and 16.9 are in different sets")
	}
	if b := with(func(r *result.Result) { r.Target.Version = "17.0" }); b.Key == a.Key {
		t.Error("16 and 17 are in one set")
	}
	if b := with(func(r *result.Result) { r.Target.Version = "16.4"; r.Run.Threads = 8 }); b.Key == a.Key {
		t.Error("1 and 8 threads are in one set")
	}
	if a.Facts["storage"] != "NVMe" || a.Facts["fs"] != "xfs" || a.Facts["cpu_model"] != "EPYC" {
		t.Errorf("facts %v", a.Facts)
	}
	for _, c := range []struct {
		disk result.Disk
		want string
	}{
		{result.Disk{Name: "sda", Rotational: new(true)}, "HDD"},
		{result.Disk{Name: "sda", Rotational: new(false)}, "SSD"},
		{result.Disk{Name: "sda"}, ""},
		{result.Disk{Name: "nvme0n1"}, "NVMe"},
	} {
		p := with(func(r *result.Result) {
			onDisk(r, false, "ext4", "EPYC")
			r.Environment.MachineFacts.Disks = []result.Disk{c.disk}
			r.Environment.MachineFacts.Mounts[0].Device = c.disk.Name + "p1"
		})
		if p.Facts["storage"] != c.want {
			t.Errorf("%+v: storage %q, want %q", c.disk, p.Facts["storage"], c.want)
		}
	}
}

package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestPercentilesMatchSortedSamples(t *testing.T) {
	specs := []OpSpec{{"txn", Event}, {"select", Read}}
	start := time.Now()
	r := NewRegistry(specs, start)
	rng := rand.New(rand.NewPCG(1, 2))
	var all []int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		h := r.NewHandle()
		seed := uint64(w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 9))
			var mine []int64
			for i := 0; i < 20000; i++ {
				// Log-normal-ish latencies from 10 µs to seconds.
				v := int64(10_000 * (1 + rng.ExpFloat64()*rng.ExpFloat64()*50))
				h.Record(0, time.Duration(v))
				h.Record(1, time.Duration(v/3))
				mine = append(mine, v)
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	// Ticks while the workers record: nothing may be lost or counted twice.
	for i := 0; i < 5; i++ {
		r.Tick(time.Now(), false)
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	r.Tick(time.Now(), false)
	_ = rng
	tot, _ := r.Cumulative()
	if tot.Ops[0].Count != int64(len(all)) || tot.Ops[0].Hist.TotalCount() != int64(len(all)) {
		t.Fatalf("count %d / hist %d, want %d", tot.Ops[0].Count, tot.Ops[0].Hist.TotalCount(), len(all))
	}
	if tot.KindCount(Read) != int64(len(all)) || tot.KindCount(Event) != int64(len(all)) {
		t.Fatalf("kind counts %d %d", tot.KindCount(Read), tot.KindCount(Event))
	}
	slices.Sort(all)
	for _, p := range []float64{50, 90, 99, 99.9} {
		exact := all[int(float64(len(all))*p/100+0.5)-1]
		got := tot.Ops[0].Hist.ValueAtQuantile(p)
		if diff := float64(got-exact) / float64(exact); diff > 0.002 || diff < -0.002 {
			t.Errorf("p%v = %d, exact %d (%.3f%% off)", p, got, exact, diff*100)
		}
	}
	if tot.Ops[0].Hist.Max() < all[len(all)-1] {
		t.Errorf("max %d below the largest sample %d", tot.Ops[0].Hist.Max(), all[len(all)-1])
	}
}

func TestWarmupIsNotCumulative(t *testing.T) {
	r := NewRegistry([]OpSpec{{"txn", Event}}, time.Now())
	h := r.NewHandle()
	h.Record(0, time.Millisecond)
	h.Error("retryable", "40001")
	iv := r.Tick(time.Now(), true)
	if iv.Ops[0].Count != 1 || !iv.Warmup || iv.ErrorCount("retryable") != 1 {
		t.Fatalf("warm-up interval: %+v", iv.Ops[0])
	}
	h.Record(0, 2*time.Millisecond)
	h.AddRetries(1)
	h.Reconnect()
	r.Tick(time.Now(), false)
	tot, _ := r.Cumulative()
	if tot.Ops[0].Count != 1 || tot.Retries != 1 || tot.Reconnects != 1 || tot.ErrorCount("") != 0 {
		t.Fatalf("cumulative counted the warm-up: count %d retries %d reconnects %d errors %d",
			tot.Ops[0].Count, tot.Retries, tot.Reconnects, tot.ErrorCount(""))
	}
	if min := tot.Ops[0].Hist.Min(); min < int64(2*time.Millisecond)*999/1000 {
		t.Fatalf("cumulative min %d: the warm-up sample leaked in", min)
	}
}

func TestScheduledKeepsBothHistogramsAndLag(t *testing.T) {
	r := NewRegistry([]OpSpec{{"txn", Event}}, time.Now())
	h := r.NewHandle()
	h.RecordScheduled(0, 10*time.Millisecond, 2*time.Millisecond, 8*time.Millisecond)
	r.Tick(time.Now(), false)
	tot, _ := r.Cumulative()
	o := tot.Ops[0]
	if o.Service == nil || tot.Lag == nil {
		t.Fatal("service or lag histogram missing")
	}
	if got := o.Hist.Max(); got < int64(9*time.Millisecond) {
		t.Fatalf("latency %d: want about 10ms from the intended start", got)
	}
	if got := o.Service.Max(); got > int64(3*time.Millisecond) {
		t.Fatalf("service %d: want about 2ms", got)
	}
}

func TestClampedValuesAreCounted(t *testing.T) {
	r := NewRegistry([]OpSpec{{"txn", Event}}, time.Now())
	h := r.NewHandle()
	h.Record(0, 2*time.Hour)
	r.Tick(time.Now(), false)
	tot, _ := r.Cumulative()
	if tot.Clamped != 1 || tot.Ops[0].Count != 1 {
		t.Fatalf("clamped %d count %d", tot.Clamped, tot.Ops[0].Count)
	}
}

func TestParsePercentiles(t *testing.T) {
	ps, err := ParsePercentiles([]string{"99", "50", "99.9"})
	if err != nil || !slices.Equal(ps, []float64{50, 99, 99.9}) {
		t.Fatalf("%v %v", ps, err)
	}
	for _, bad := range []string{"0", "101", "x", "-5"} {
		if _, err := ParsePercentiles([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	r := NewRegistry([]OpSpec{{"txn", Event}}, time.Now())
	h := r.NewHandle()
	h.Record(0, time.Millisecond)
	if n := testing.AllocsPerRun(1000, func() { h.Record(0, 1234*time.Microsecond) }); n != 0 {
		t.Fatalf("Record allocates %v times", n)
	}
}

// TestCountsWithoutTimes checks that untimed completions count toward
// their operation and kind, leave its histogram empty, and are taken by
// one tick only.
func TestCountsWithoutTimes(t *testing.T) {
	r := NewRegistry([]OpSpec{{"txn", Event}, {"select", Read}, {"update", Write}}, time.Now())
	h := r.NewHandle()
	ops := []Op{1, -1, 2}
	n := []int64{3, 5, 2}
	h.AddCounts(ops, n)
	if n[0] != 0 || n[1] != 0 || n[2] != 0 {
		t.Fatalf("AddCounts left %v, want zeros", n)
	}
	h.Record(0, time.Millisecond)
	iv := r.Tick(time.Now(), false)
	if iv.Ops[1].Count != 3 || iv.Ops[2].Count != 2 || iv.Ops[1].Hist.TotalCount() != 0 {
		t.Fatalf("interval: select %d (hist %d), update %d; want 3 (0), 2", iv.Ops[1].Count, iv.Ops[1].Hist.TotalCount(), iv.Ops[2].Count)
	}
	n[0] = 4
	h.AddCounts(ops, n)
	r.Tick(time.Now(), false)
	tot, _ := r.Cumulative()
	if tot.KindCount(Read) != 7 || tot.KindCount(Write) != 2 || tot.KindCount(Event) != 1 {
		t.Fatalf("cumulative reads %d writes %d events %d; want 7, 2, 1", tot.KindCount(Read), tot.KindCount(Write), tot.KindCount(Event))
	}
}

// Bins reads an exported histogram's counts back into the buckets its
// values were recorded in.
func TestBinsHoldTheValuesRecorded(t *testing.T) {
	h := NewHistogram()
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[int64]int64{}
	for range 20000 {
		v := int64(math.Exp(rng.Float64()*math.Log(float64(highestNS)))) + 1
		h.RecordValue(v)
		want[v]++
	}
	got := map[int64]int64{} // values found in each bucket Bins names
	var total int64
	Bins(h.Export().Counts, func(low, width, n int64) {
		if low != bucketFloor(low) || bucketFloor(low+width-1) != low || bucketFloor(low+width) == low {
			t.Fatalf("bucket [%d, +%d) is not one of the histogram's", low, width)
		}
		got[low] += n
		total += n
	})
	for v, n := range want {
		got[bucketFloor(v)] -= n
	}
	for low, n := range got {
		if n != 0 {
			t.Fatalf("bucket at %d: %d more than recorded there", low, n)
		}
	}
	if total != h.TotalCount() {
		t.Fatalf("bins hold %d values, the histogram %d", total, h.TotalCount())
	}
}

// TestGroupsKeepEachServersPart: with groups (a run's servers), each
// handle's data goes to its group's totals as well as to the run's, the
// groups' add up to the run's exactly, bucket by bucket, and the warm-up
// stays out of both cumulative views.
func TestGroupsKeepEachServersPart(t *testing.T) {
	specs := []OpSpec{{"txn", Event}, {"select", Read}}
	start := time.Now()
	r := NewRegistry(specs, start)
	r.SetGroups(2)
	hs := []*Handle{r.NewHandleIn(0), r.NewHandleIn(1), r.NewHandleIn(0), r.NewHandleIn(1)}
	record := func(scale int) {
		for i, h := range hs {
			for k := range 100 * (i + 1) {
				h.Record(0, time.Duration((i+1)*scale*(k+1))*time.Microsecond)
				h.Record(1, time.Duration(k+1)*time.Microsecond)
			}
			h.Error("retryable", "40001")
		}
	}
	record(1)
	r.Tick(start.Add(time.Second), true) // the warm-up
	record(7)
	iv := r.Tick(start.Add(2*time.Second), false)
	if len(iv.Groups) != 2 {
		t.Fatalf("%d groups in the interval", len(iv.Groups))
	}
	// Group 0 holds handles 0 and 2 (100 + 300 events), group 1 handles
	// 1 and 3 (200 + 400).
	for g, want := range []int64{400, 600} {
		if got := iv.Groups[g].KindCount(Event); got != want {
			t.Errorf("interval: group %d has %d events, want %d", g, got, want)
		}
	}
	tot, _ := r.Cumulative()
	groups := r.GroupCumulative()
	var events, errs int64
	sum := NewHistogram()
	for _, g := range groups {
		events += g.KindCount(Event)
		errs += g.ErrorCount("")
		sum.Merge(g.Ops[0].Hist)
	}
	if events != tot.KindCount(Event) || events != 1000 || errs != tot.ErrorCount("") || errs != 4 {
		t.Errorf("groups add up to %d events and %d errors; the run has %d and %d", events, errs, tot.KindCount(Event), tot.ErrorCount(""))
	}
	if !slices.Equal(sum.Export().Counts, tot.Ops[0].Hist.Export().Counts) {
		t.Error("the groups' histograms do not add up to the run's, bucket by bucket")
	}
	if got, want := groups[1].Ops[0].Hist.Max(), tot.Ops[0].Hist.Max(); got < want*99/100 {
		t.Errorf("group 1 (the slowest handle's) max %d, the run's %d", got, want)
	}
}

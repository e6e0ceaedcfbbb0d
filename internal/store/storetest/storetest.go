// Package storetest is the conformance suite every results store backend
// passes, so that SQLite and PostgreSQL behave the same to their callers.
package storetest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/store"
)

// NewResult returns a result with every field set, started at started, with
// the given UUID. Strings hold what trips encoders: quotes, markup, non-ASCII.
func NewResult(id string, started time.Time) *result.Result {
	lat := &result.Latency{MinMS: 0.101, MeanMS: 1.5, StdDevMS: 0.25, MaxMS: 12.75,
		Percentiles: []result.Percentile{{P: 50, MS: 1.25}, {P: 99, MS: 7.5}, {P: 99.9, MS: 11}}}
	return &result.Result{
		SchemaVersion: result.SchemaVersion,
		ID:            id,
		Tool:          result.Tool{Name: "dbmark", Version: "0.1.0", Revision: "abc123", Go: "go1.26"},
		Command:       []string{"dbmark", "run", "oltp_read_write", "--threads=8", `--note="quoted" <&> é ✓`},
		Workload: result.Workload{Name: "oltp_read_write", Version: "1", Headline: "tps", Better: "higher",
			Options: map[string]string{"tables": "4", "table_size": "10000"}},
		Target: result.Target{Kind: "postgres", URL: "postgres://bench@127.0.0.1:5432/bench", Engine: "PostgreSQL",
			Version: "17.2", Driver: "pgx", Settings: map[string]string{"shared_buffers": "128MB"}},
		Environment: &result.Environment{Hostname: "bench-1", OS: "linux", Arch: "amd64", Kernel: "6.1", CPUs: 2,
			CPUModel: "Test CPU @ 2.0GHz", MemoryB: 24 << 30, ClockSrc: "tsc", ClockNowNS: 21.5, GoMaxProcs: 2},
		Warnings: []string{"tables are smaller than the buffer pool"},
		Seed:     math.MaxUint64 - 12345, // beyond float64 precision: the store must keep JSON numbers exact
		Run: result.RunOptions{Threads: 8, DurationS: 60, WarmupS: 5, ReportInterval: 1, Rate: 0, MaxTries: 3,
			IgnoreErrors: []string{"40001"}, Percentiles: []float64{50, 99, 99.9}},
		StartedAt: started,
		EndedAt:   started.Add(65*time.Second + 123456789*time.Nanosecond),
		Status:    result.StatusOK,
		Summary: result.Summary{
			DurationS: 60.000001, Events: 123456, EventsPerS: 2057.6, QueriesPerS: 41152.1,
			Queries:     result.QueryCounts{Read: 1728384, Write: 493824, Other: 246912, Total: 2469120},
			Errors:      []result.ErrorCount{{Class: "serialization", Code: "40001", Count: 7}},
			ErrorsTotal: 7, Retries: 7, Reconnects: 1,
			Latency: lat, Service: lat, ScheduleLag: lat,
			Ops:      []result.OpSummary{{Name: "point_select", Kind: "read", Count: 1234560, PerS: 20576, Latency: lat}},
			Clamped:  0,
			Extra:    map[string]string{"note": "line one\nline two\t\"tab\" \\ back"},
			Headline: 2057.6, HeadlineUnit: "tps",
		},
		Histograms: []result.Histogram{{Op: "point_select", Kind: "latency", Unit: "ns", Encoded: "HISTFAAAACR4nJNpmSzMwMDAxAABzFCaEUzOmNJgDwApVwJQ"}},
		Series: []result.Interval{
			{T: 1, DurationS: 1, Warmup: true, EventsPerS: 1500, ReadsPerS: 21000, Latency: []result.Percentile{{P: 99, MS: 9}}},
			{T: 2, DurationS: 1.0000002, EventsPerS: 2000.5, ReadsPerS: 28007, WritesPerS: 8002, OtherPerS: 4001,
				ErrorsPerS: 0.5, RetriesPerS: 0.5, LagMeanMS: 1e-7, Extra: map[string]float64{"tiny": 5e-324, "huge": 1.7e308}},
		},
		Sweep: &result.SweepRef{ID: "sweep-1", Cell: map[string]string{"threads": "8"}, Iteration: 2},
	}
}

// newUUID returns a random UUID whose text starts with prefix (hex digits).
func newUUID(prefix string) string {
	s := uuid.NewString()
	return prefix + s[len(prefix):]
}

// baseTime is the start time the tests count from: not UTC, with
// nanoseconds, to check both survive a save.
func baseTime() time.Time {
	return time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.FixedZone("", 2*3600))
}

// roundTrip is r as any reader of its JSON document sees it.
func roundTrip(t *testing.T, r *result.Result) *result.Result {
	t.Helper()
	b, err := result.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	out, err := result.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustSave(t *testing.T, s store.Store, r *result.Result) store.ID {
	t.Helper()
	id, err := s.Save(context.Background(), r)
	if err != nil {
		t.Fatalf("save %s: %v", r.ID, err)
	}
	if id <= 0 {
		t.Fatalf("save %s: id %d, want > 0", r.ID, id)
	}
	return id
}

func mustList(t *testing.T, s store.Store, f store.Filter) []store.Summary {
	t.Helper()
	l, err := s.List(context.Background(), f)
	if err != nil {
		t.Fatalf("list %+v: %v", f, err)
	}
	return l
}

func ids(l []store.Summary) []store.ID {
	out := make([]store.ID, len(l))
	for i, s := range l {
		out[i] = s.ID
	}
	return out
}

func assertSameDocument(t *testing.T, want, got *result.Result) {
	t.Helper()
	if !reflect.DeepEqual(roundTrip(t, want), got) {
		w, _ := json.MarshalIndent(want, "", " ")
		g, _ := json.MarshalIndent(got, "", " ")
		t.Fatalf("stored document differs\nwant %s\ngot  %s", w, g)
	}
}

// assertEmpty checks that the store holds no run.
func assertEmpty(t *testing.T, s store.Store) {
	t.Helper()
	if l := mustList(t, s, store.Filter{}); len(l) != 0 {
		t.Fatalf("store holds %d runs, want none: %+v", len(l), l)
	}
}

// Run runs the suite. open returns a new, empty store; the suite closes it.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	opened := func(t *testing.T) store.Store {
		s := open(t)
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
		return s
	}
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, opened(t)) })
	t.Run("ListOrderAndFilters", func(t *testing.T) { testList(t, opened(t)) })
	t.Run("Resolve", func(t *testing.T) { testResolve(t, opened(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, opened(t)) })
	t.Run("SaveTwiceReplaces", func(t *testing.T) { testReplace(t, opened(t)) })
	t.Run("FailedAndInterrupted", func(t *testing.T) { testStatuses(t, opened(t)) })
	t.Run("ConcurrentSaves", func(t *testing.T) { testConcurrentSaves(t, opened(t)) })
	t.Run("FailedSaveLeavesNothing", func(t *testing.T) { testFailedSave(t, opened(t)) })
	t.Run("Sweeps", func(t *testing.T) { testSweeps(t, opened(t)) })
}

// RunDSN runs Run on stores opened with store.Open, plus what needs a
// store opened more than once. newDSN returns the DSN of a new, empty store.
func RunDSN(t *testing.T, newDSN func(t *testing.T) string) {
	base := baseTime()
	openDSN := func(t *testing.T, dsn string) store.Store {
		t.Helper()
		s, err := store.Open(context.Background(), dsn, nil)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return s
	}
	Run(t, func(t *testing.T) store.Store { return openDSN(t, newDSN(t)) })

	t.Run("Reopen", func(t *testing.T) {
		dsn := newDSN(t)
		s := openDSN(t, dsn)
		r := NewResult(uuid.NewString(), base)
		id := mustSave(t, s, r)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = openDSN(t, dsn)
		defer s.Close()
		got, err := s.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("get after reopen: %v", err)
		}
		assertSameDocument(t, r, got)
		if id2 := mustSave(t, s, NewResult(uuid.NewString(), base)); id2 <= id {
			t.Errorf("id after reopen = %d, want > %d", id2, id)
		}
	})

	// Two processes saving into one store at the same moment: each has its
	// own connections, so they contend in the database, not in a pool.
	t.Run("TwoStoresConcurrently", func(t *testing.T) {
		dsn := newDSN(t)
		a, b := openDSN(t, dsn), openDSN(t, dsn)
		defer a.Close()
		defer b.Close()
		const perStore = 10
		var wg sync.WaitGroup
		errs := make(chan error, 2*perStore)
		for _, s := range []store.Store{a, b} {
			for i := range perStore {
				wg.Go(func() {
					r := NewResult(uuid.NewString(), base.Add(time.Duration(i)*time.Second))
					if _, err := s.Save(context.Background(), r); err != nil {
						errs <- err
					}
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent save: %v", err)
		}
		for _, s := range []store.Store{a, b} {
			if n := len(mustList(t, s, store.Filter{})); n != 2*perStore {
				t.Errorf("listed %d runs, want %d", n, 2*perStore)
			}
		}
	})

	// Several processes starting on a store nobody created yet: all must
	// succeed in creating or finding the schema.
	t.Run("ConcurrentOpen", func(t *testing.T) {
		dsn := newDSN(t)
		const n = 4
		stores := make([]store.Store, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { stores[i], errs[i] = store.Open(context.Background(), dsn, nil) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("open %d: %v", i, err)
			}
			defer stores[i].Close()
		}
		for _, s := range stores {
			mustSave(t, s, NewResult(uuid.NewString(), base))
		}
		if l := mustList(t, stores[0], store.Filter{}); len(l) != n {
			t.Errorf("listed %d runs, want %d", len(l), n)
		}
	})
}

// MigratesOnce checks that processes opening a new store together migrate
// it once, not once each (goose would record, and with a migration that is
// not idempotent fail, a second application). newStore returns how to open
// a new store's database: the backend's own Open, which migrates.
func MigratesOnce(t *testing.T, newStore func(t *testing.T) func(context.Context) (*sql.DB, error)) {
	for range 3 {
		open := newStore(t)
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				db, err := open(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				db.Close()
			})
		}
		wg.Wait()
		db, err := open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var n, distinct int
		err = db.QueryRow("SELECT count(*), count(DISTINCT version_id) FROM goose_db_version").Scan(&n, &distinct)
		db.Close()
		if err != nil || n != distinct {
			t.Fatalf("goose_db_version: %d rows for %d versions (%v)", n, distinct, err)
		}
	}
}

func testRoundTrip(t *testing.T, s store.Store) {
	base := baseTime()
	ctx := context.Background()
	full := NewResult(uuid.NewString(), base)
	id := mustSave(t, s, full)
	got, err := s.Get(ctx, id)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	assertSameDocument(t, full, got)
	if !got.StartedAt.Equal(full.StartedAt) || !got.EndedAt.Equal(full.EndedAt) {
		t.Errorf("times: got %v..%v, want %v..%v", got.StartedAt, got.EndedAt, full.StartedAt, full.EndedAt)
	}
	if _, off := got.StartedAt.Zone(); off != 2*3600 {
		t.Errorf("start time zone offset = %d, want +7200 kept from the document", off)
	}
	if got.Seed != full.Seed {
		t.Errorf("seed = %d, want %d", got.Seed, full.Seed)
	}

	// The least a result can hold: no environment, no sweep, no series.
	minimal := &result.Result{SchemaVersion: result.SchemaVersion, ID: uuid.NewString(),
		StartedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Status: result.StatusOK}
	mid := mustSave(t, s, minimal)
	got, err = s.Get(ctx, mid)
	if err != nil {
		t.Fatalf("get minimal: %v", err)
	}
	assertSameDocument(t, minimal, got)

	l := mustList(t, s, store.Filter{})
	if len(l) != 2 {
		t.Fatalf("listed %d runs, want 2", len(l))
	}
	want := store.Summary{ID: id, UUID: full.ID, StartedAt: full.StartedAt.UTC().Truncate(time.Microsecond),
		Workload: "oltp_read_write", Target: "postgres", Status: "ok", Headline: 2057.6, HeadlineUnit: "tps",
		DurationS: 60.000001, SweepID: "sweep-1"}
	if l[0] != want {
		t.Errorf("summary:\n got %+v\nwant %+v", l[0], want)
	}
	if l[0].StartedAt.Location() != time.UTC {
		t.Errorf("summary start time in %v, want UTC", l[0].StartedAt.Location())
	}
	if l[1].ID != mid || l[1].SweepID != "" || l[1].Workload != "" {
		t.Errorf("minimal summary = %+v", l[1])
	}

	if _, err := s.Get(ctx, id+mid+100); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("get missing: err = %v, want ErrNotFound", err)
	}

	// UUIDs are kept in canonical lower case whatever the document says.
	upper := NewResult(strings.ToUpper(uuid.NewString()), base.Add(time.Hour))
	uid := mustSave(t, s, upper)
	if l := mustList(t, s, store.Filter{Limit: 1}); l[0].ID != uid || l[0].UUID != strings.ToLower(upper.ID) {
		t.Errorf("upper-case uuid listed as %+v", l[0])
	}
}

func testList(t *testing.T, s store.Store) {
	base := baseTime()
	type run struct {
		name            string
		offset          time.Duration
		workload, sweep string
		status          result.Status
	}
	// Saved out of time order; "tie" starts in the same microsecond as "c".
	runs := []run{
		{"c", 3 * time.Minute, "oltp", "", result.StatusOK},
		{"a", 1 * time.Minute, "oltp", "s1", result.StatusOK},
		{"e", 5 * time.Minute, "tpcc", "s1", result.StatusFailed},
		{"b", 2 * time.Minute, "tpcc", "", result.StatusInterrupted},
		{"d", 4 * time.Minute, "oltp", "s1", result.StatusOK},
		{"tie", 3*time.Minute + 100*time.Nanosecond, "oltp", "", result.StatusOK},
	}
	id := map[string]store.ID{}
	for _, r := range runs {
		res := NewResult(uuid.NewString(), base.Add(r.offset))
		res.Workload.Name, res.Status, res.Sweep = r.workload, r.status, nil
		if r.sweep != "" {
			res.Sweep = &result.SweepRef{ID: r.sweep, Iteration: 1}
		}
		id[r.name] = mustSave(t, s, res)
	}
	for _, c := range []struct {
		f    store.Filter
		want []string
	}{
		{store.Filter{}, []string{"e", "d", "tie", "c", "b", "a"}},
		{store.Filter{Limit: 2}, []string{"e", "d"}},
		{store.Filter{Workload: "oltp"}, []string{"d", "tie", "c", "a"}},
		{store.Filter{Status: "ok"}, []string{"d", "tie", "c", "a"}},
		{store.Filter{Status: "failed"}, []string{"e"}},
		{store.Filter{SweepID: "s1"}, []string{"e", "d", "a"}},
		{store.Filter{Workload: "oltp", SweepID: "s1", Limit: 1}, []string{"d"}},
		{store.Filter{Workload: "oltp", Status: "interrupted"}, nil},
		{store.Filter{Workload: "nosuch"}, nil},
	} {
		var want []store.ID
		for _, n := range c.want {
			want = append(want, id[n])
		}
		got := ids(mustList(t, s, c.f))
		if len(got) != len(want) || len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Errorf("list %+v = %v, want %v (%v)", c.f, got, want, c.want)
		}
	}
	if _, err := s.List(context.Background(), store.Filter{Status: "bogus"}); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("list with unknown status: err = %v, want one naming it", err)
	}
}

func testResolve(t *testing.T, s store.Store) {
	base := baseTime()
	ctx := context.Background()
	a := NewResult(newUUID("abcd1"), base)
	b := NewResult(newUUID("abcd2"), base)
	c := NewResult(newUUID("12345"), base) // a prefix that is all digits
	ida, idb, idc := mustSave(t, s, a), mustSave(t, s, b), mustSave(t, s, c)

	for _, tc := range []struct {
		ref  string
		want store.ID
	}{
		{fmt.Sprint(ida), ida},
		{fmt.Sprint(idb), idb},
		{" " + fmt.Sprint(idc) + "\n", idc},
		{a.ID, ida},
		{strings.ToUpper(b.ID), idb},
		{"abcd1", ida},
		{"ABCD2", idb},
		{a.ID[:13], ida}, // through the first dash
		{"1234", idc},    // no run has id 1234: the uuid prefix
	} {
		got, err := s.Resolve(ctx, tc.ref)
		if err != nil || got != tc.want {
			t.Errorf("resolve %q = %d, %v; want %d", tc.ref, got, err, tc.want)
		}
	}

	_, err := s.Resolve(ctx, "abcd")
	if !errors.Is(err, store.ErrAmbiguous) {
		t.Errorf("resolve ambiguous prefix: err = %v, want ErrAmbiguous", err)
	} else if !strings.Contains(err.Error(), a.ID) || !strings.Contains(err.Error(), b.ID) {
		t.Errorf("ambiguity error %q does not name both candidates", err)
	}

	missing := uuid.NewString()
	for _, ref := range []string{"999999", missing, "ffff0", missing[:8]} {
		if _, err := s.Resolve(ctx, ref); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("resolve %q: err = %v, want ErrNotFound", ref, err)
		}
	}
	// Not references at all: clear errors, not "not found".
	for _, ref := range []string{"", "abc", "xyz12", "abcd%", "abcd_", a.ID + "0", "abcd1*"} {
		_, err := s.Resolve(ctx, ref)
		if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrAmbiguous) {
			t.Errorf("resolve %q: err = %v, want an invalid-reference error", ref, err)
		}
	}
}

func testDelete(t *testing.T, s store.Store) {
	base := baseTime()
	ctx := context.Background()
	a, b := NewResult(uuid.NewString(), base), NewResult(uuid.NewString(), base.Add(time.Second))
	ida, idb := mustSave(t, s, a), mustSave(t, s, b)
	if err := s.Delete(ctx, idb); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := s.Get(ctx, idb); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("get deleted: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Resolve(ctx, b.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("resolve deleted: err = %v, want ErrNotFound", err)
	}
	if got := ids(mustList(t, s, store.Filter{})); !reflect.DeepEqual(got, []store.ID{ida}) {
		t.Errorf("list after delete = %v, want [%d]", got, ida)
	}
	if err := s.Delete(ctx, idb); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete twice: err = %v, want ErrNotFound", err)
	}
	// The newest run was deleted: its id must still not come back.
	if idc := mustSave(t, s, NewResult(uuid.NewString(), base)); idc <= idb {
		t.Errorf("id after deleting %d = %d: ids must not be reused", idb, idc)
	}
	if _, err := s.Get(ctx, ida); err != nil {
		t.Errorf("get the run that was not deleted: %v", err)
	}
}

func testReplace(t *testing.T, s store.Store) {
	base := baseTime()
	ctx := context.Background()
	r := NewResult(uuid.NewString(), base)
	id := mustSave(t, s, r)
	other := mustSave(t, s, NewResult(uuid.NewString(), base.Add(-time.Hour)))

	// The same run saved again, e.g. after its report was recomputed.
	r2 := NewResult(r.ID, base.Add(time.Minute))
	r2.Summary.Headline, r2.Workload.Name, r2.Status, r2.Sweep = 99.5, "tpcc", result.StatusInterrupted, nil
	if id2 := mustSave(t, s, r2); id2 != id {
		t.Fatalf("second save of %s: id %d, want %d", r.ID, id2, id)
	}
	got, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	assertSameDocument(t, r2, got)
	l := mustList(t, s, store.Filter{})
	if len(l) != 2 || l[0].ID != id || l[1].ID != other {
		t.Fatalf("list after replace = %+v", l)
	}
	if l[0].Headline != 99.5 || l[0].Workload != "tpcc" || l[0].Status != "interrupted" || l[0].SweepID != "" ||
		!l[0].StartedAt.Equal(r2.StartedAt.Truncate(time.Microsecond)) {
		t.Errorf("summary after replace = %+v", l[0])
	}
}

func testStatuses(t *testing.T, s store.Store) {
	base := baseTime()
	ctx := context.Background()
	failed := NewResult(uuid.NewString(), base)
	failed.Status, failed.Error = result.StatusFailed, "connect: connection refused\n\tat worker 3"
	failed.Summary = result.Summary{} // failed before measuring anything
	failed.Series, failed.Histograms = nil, nil
	interrupted := NewResult(uuid.NewString(), base.Add(time.Second))
	interrupted.Status = result.StatusInterrupted
	interrupted.Summary.DurationS = 12.5

	idf, idi := mustSave(t, s, failed), mustSave(t, s, interrupted)
	for id, want := range map[store.ID]*result.Result{idf: failed, idi: interrupted} {
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		assertSameDocument(t, want, got)
	}
	l := mustList(t, s, store.Filter{})
	if len(l) != 2 || l[0].ID != idi || l[0].Status != "interrupted" || l[0].DurationS != 12.5 ||
		l[1].ID != idf || l[1].Status != "failed" || l[1].Headline != 0 {
		t.Errorf("list = %+v", l)
	}
	if got := ids(mustList(t, s, store.Filter{Status: "failed"})); !reflect.DeepEqual(got, []store.ID{idf}) {
		t.Errorf("failed runs = %v, want [%d]", got, idf)
	}
}

func testConcurrentSaves(t *testing.T, s store.Store) {
	base := baseTime()
	const workers, each = 8, 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[store.ID]bool{}
	shared := uuid.NewString()
	sharedIDs := make([]store.ID, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				r := NewResult(uuid.NewString(), base.Add(time.Duration(w*each+i)*time.Millisecond))
				id, err := s.Save(context.Background(), r)
				if err != nil {
					t.Errorf("worker %d save %d: %v", w, i, err)
					return
				}
				mu.Lock()
				if seen[id] {
					t.Errorf("id %d given twice", id)
				}
				seen[id] = true
				mu.Unlock()
			}
			// Everyone also saves the same run: one row, one id.
			r := NewResult(shared, base)
			r.Summary.Headline = float64(w)
			id, err := s.Save(context.Background(), r)
			if err != nil {
				t.Errorf("worker %d save shared: %v", w, err)
			}
			sharedIDs[w] = id
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, id := range sharedIDs[1:] {
		if id != sharedIDs[0] {
			t.Fatalf("saves of one uuid got ids %v", sharedIDs)
		}
	}
	if n := len(mustList(t, s, store.Filter{})); n != workers*each+1 {
		t.Errorf("listed %d runs, want %d", n, workers*each+1)
	}
}

func testFailedSave(t *testing.T, s store.Store) {
	base := baseTime()
	ctx := context.Background()

	// A run whose headline came out NaN (no events) cannot be encoded.
	nan := NewResult(uuid.NewString(), base)
	nan.Summary.Headline = math.NaN()
	_, err := s.Save(ctx, nan)
	if err == nil || !strings.Contains(err.Error(), nan.ID) || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("save NaN headline: err = %v, want one naming the run and NaN", err)
	}
	assertEmpty(t, s)

	// The caller gave up (Ctrl-C) before the save started.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Save(cancelled, NewResult(uuid.NewString(), base)); !errors.Is(err, context.Canceled) {
		t.Errorf("save with a cancelled context: err = %v, want context.Canceled", err)
	}
	assertEmpty(t, s)

	// Results that must not be stored.
	for name, mod := range map[string]func(*result.Result){
		"bad uuid":       func(r *result.Result) { r.ID = "run-1" },
		"unknown status": func(r *result.Result) { r.Status = "done" },
		"no start time":  func(r *result.Result) { r.StartedAt = time.Time{} },
		"schema 0":       func(r *result.Result) { r.SchemaVersion = 0 },
		"future schema":  func(r *result.Result) { r.SchemaVersion = result.SchemaVersion + 1 },
	} {
		r := NewResult(uuid.NewString(), base)
		mod(r)
		if _, err := s.Save(ctx, r); err == nil {
			t.Errorf("save with %s: no error", name)
		}
	}
	if _, err := s.Save(ctx, nil); err == nil {
		t.Error("save nil: no error")
	}
	assertEmpty(t, s)

	// A failed replacement leaves the stored run as it was.
	good := NewResult(uuid.NewString(), base)
	id := mustSave(t, s, good)
	bad := NewResult(good.ID, base.Add(time.Hour))
	bad.Series[1].Extra["inf"] = math.Inf(1)
	if _, err := s.Save(ctx, bad); err == nil {
		t.Fatal("save with an infinite series value: no error")
	}
	got, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	assertSameDocument(t, good, got)
	if l := mustList(t, s, store.Filter{}); len(l) != 1 || !l[0].StartedAt.Equal(good.StartedAt.Truncate(time.Microsecond)) {
		t.Errorf("list after failed replacement = %+v", l)
	}
}

// EnvPostgres names the PostgreSQL server the PostgreSQL tests use.
const EnvPostgres = "DBMARK_TEST_STORE_POSTGRES"

// PostgresURL returns $DBMARK_TEST_STORE_POSTGRES, or skips the test.
func PostgresURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv(EnvPostgres)
	if u == "" {
		t.Skipf("%s is not set; set it to a PostgreSQL URL such as "+
			"postgres://bench:bench@127.0.0.1:55432/bench_store?sslmode=disable to run the PostgreSQL store tests", EnvPostgres)
	}
	return u
}

package sitestore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/store/storetest"
)

var backends = storetest.Backends

// openStore opens the store at dsn, closed when the test ends.
func openStore(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// testEntry is an ok run of workload w with nothing else said, under id.
func testEntry(id string) *Entry {
	return &Entry{ID: id, Hash: "h" + id, Status: "ok", Kind: "run", Runs: 1, HeadlineUnit: "tps", Better: "higher",
		Facets: map[string]string{"workload": "w"}, Document: []byte("{}")}
}

// reference counts what Facets must answer, from the entries themselves.
func reference(entries map[string]*Entry, hidden map[string]bool, q Query) map[string][]Count {
	out := map[string][]Count{}
	for _, f := range Facets {
		m := map[string]int{}
	entry:
		for id, e := range entries {
			if hidden[id] {
				continue
			}
			for k, v := range q.Filters {
				if k != f.Key && e.Facets[k] != v {
					continue entry
				}
			}
			for _, w := range strings.Fields(strings.ToLower(q.Search)) {
				if !strings.Contains(searchText(e), w) {
					continue entry
				}
			}
			m[e.Facets[f.Key]]++
		}
		out[f.Key] = top(m, 30)
	}
	return out
}

// Two servers on one store count exactly what the store holds, through
// submissions on either and moderation on either.
func TestFacetCountsFollowTheStore(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		a := openStore(t, dsn)
		b := openStore(t, dsn)
		rng := rand.New(rand.NewPCG(1, 2))
		entries := map[string]*Entry{}
		hidden := map[string]bool{}
		pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
		put := func(st *Store, n int) {
			for range n {
				i := len(entries)
				e := &Entry{ID: fmt.Sprintf("id%010d", i), Hash: fmt.Sprintf("hash%d", i), SubmittedAt: time.Now(), StartedAt: time.Now(),
					Status: pick("ok", "failed"), Kind: "run", Runs: 1, Headline: rng.Float64(), HeadlineUnit: "tps", Better: "higher",
					Facets: map[string]string{}, Document: []byte("{}")}
				for _, f := range Facets {
					e.Facets[f.Key] = pick("", "x", "y "+f.Key, strings.ToUpper(f.Key))
				}
				e.Facets["status"] = e.Status
				e.Facets["workload"] = pick("oltp_read_only", "tpcb", "oltp_point_select")
				e.Facets["cpu_model"] = pick("AMD EPYC 7763", "Intel Xeon", "Apple M2")
				if _, _, _, err := st.Put(ctx, e, nil); err != nil {
					t.Fatal(err)
				}
				entries[e.ID] = e
			}
		}
		queries := []Query{
			{},
			{Filters: map[string]string{"workload": "tpcb"}},
			{Filters: map[string]string{"workload": "tpcb", "cpu_model": "Apple M2"}},
			{Filters: map[string]string{"engine": "not there yet"}},
			{Search: "EPYC"},
			{Search: "epyc y", Filters: map[string]string{"status": "ok"}},
			{Search: "id00000000"},
		}
		check := func(when string) {
			t.Helper()
			for _, st := range []*Store{a, b} {
				for _, q := range queries {
					got, err := st.Facets(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					if want := reference(entries, hidden, q); !reflect.DeepEqual(got, want) {
						t.Fatalf("%s: facets of %+v:\n got %v\nwant %v", when, q, got, want)
					}
				}
			}
		}
		put(a, 200)
		check("after the first entries")
		// Kept views are counted on as entries come, on the server that
		// took them at once and on the other within a sync.
		put(b, 60)
		entries["idnotthere"] = testEntry("idnotthere")
		entries["idnotthere"].Facets = map[string]string{"engine": "not there yet", "status": "ok"}
		if _, _, _, err := b.Put(ctx, entries["idnotthere"], nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * syncEvery)
		check("after entries on the other server")
		for i, id := range []string{"id0000000003", "id0000000010", "id0000000250"} {
			st := []*Store{a, b}[i%2]
			if err := st.SetHidden(ctx, id, true); err != nil {
				t.Fatal(err)
			}
			hidden[id] = true
		}
		if err := b.Delete(ctx, "id0000000004"); err != nil {
			t.Fatal(err)
		}
		delete(entries, "id0000000004")
		if err := a.SetHidden(ctx, "id0000000010", false); err != nil {
			t.Fatal(err)
		}
		delete(hidden, "id0000000010")
		time.Sleep(2 * syncEvery)
		check("after moderation")
		if _, err := a.Facets(ctx, Query{Filters: map[string]string{"nope": "x"}}); err == nil {
			t.Error("a filter that is no facet was taken")
		}
		if _, _, err := a.List(ctx, Query{Filters: map[string]string{"nope": "x"}}); err == nil {
			t.Error("a list filter that is no facet was taken")
		}
		// The newest entries of a filter, page by page, as the index finds
		// them: every visible match once, newest first.
		for _, q := range queries {
			if q.Search != "" {
				continue
			}
			var want []string
			for id, e := range entries {
				match := !hidden[id]
				for k, v := range q.Filters {
					match = match && e.Facets[k] == v
				}
				if match {
					want = append(want, id)
				}
			}
			slices.Sort(want)
			slices.Reverse(want)
			var got []string
			q.Limit = 7
			for {
				page, next, err := b.List(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range page {
					got = append(got, e.ID)
				}
				if next == "" {
					break
				}
				q.Cursor = next
			}
			if !slices.Equal(got, want) {
				t.Errorf("list of %v:\n got %v\nwant %v", q.Filters, got, want)
			}
		}
	})
}

// A list's counts cost a pass over memory, not over the table: counting a
// new view of 20,000 entries takes milliseconds.
func BenchmarkFacetView(b *testing.B) {
	x := newFacetIndex(false)
	x.dict = make([]dictionary, len(Facets))
	for i := range x.dict {
		x.dict[i].code = map[string]uint32{}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		for f := range Facets {
			x.rows = append(x.rows, x.dict[f].intern(fmt.Sprint(rng.IntN(8))))
		}
		x.ids = append(x.ids, fmt.Sprintf("id%d", i))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		clear(x.views)
		v, err := x.view(Query{Filters: map[string]string{"workload": "3", "engine": fmt.Sprint(i % 8)}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		v.answer(x)
	}
}

// On PostgreSQL an entry may commit after one with a higher seq was read:
// the index looks for it again, and counts and lists it.
func TestFacetIndexReadsLateCommits(t *testing.T) {
	if os.Getenv(storetest.EnvPostgres) == "" {
		t.Skip(storetest.EnvPostgres + " not set (eval \"$(bash scripts/testenv.sh env)\")")
	}
	ctx := context.Background()
	st := openStore(t, storetest.PostgresDSN(t))
	entry := func(id string) *Entry {
		e := testEntry(id)
		e.Facets["workload"] = "late"
		return e
	}
	// The first insert takes its seq and waits, uncommitted, while a
	// second one commits and is read.
	tx, err := st.w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO entries (id, hash, submitted_us, started_us, released, status, kind, runs, headline,
		headline_unit, better, comparable, workload, workload_version, engine, engine_version, cpu_model, cpus, memory, disk_model,
		rotational, raid, fs, mount_options, virtualization, kernel, dbmark, month, search)
		VALUES ('early', 'hearly', 0, 0, 0, 'ok', 'run', 1, 0, 'tps', 'higher', '', 'late', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '')`); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := st.Put(ctx, entry("later"), nil); err != nil {
		t.Fatal(err)
	}
	q := Query{Filters: map[string]string{"workload": "late"}}
	if f, err := st.Facets(ctx, q); err != nil || len(f["workload"]) != 1 || f["workload"][0].Count != 1 {
		t.Fatalf("before the late commit: %v %v", f["workload"], err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * syncEvery)
	if f, err := st.Facets(ctx, q); err != nil || len(f["workload"]) != 1 || f["workload"][0].Count != 2 {
		t.Fatalf("after the late commit: %v %v", f["workload"], err)
	}
	page, _, err := st.List(ctx, q)
	if err != nil || len(page) != 2 || page[0].ID != "later" || page[1].ID != "early" {
		t.Fatalf("list after the late commit: %v %v", page, err)
	}
}

// Submissions arriving together (committed in groups on SQLite) each get
// the right answer: one entry per hash, its id to every copy, and a
// client's limit spent exactly.
func TestConcurrentPuts(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		st := openStore(t, dsn)
		entry := func(i int) *Entry { return testEntry(fmt.Sprintf("e%d", i)) }
		type answer struct {
			i       int
			id      string
			created bool
			wait    time.Duration
			err     error
		}
		answers := make(chan answer)
		now := time.Now()
		// 10 results, each sent 4 times by its own client; then 12 new
		// ones from one client allowed 5 a minute.
		for i := range 40 {
			go func() {
				q := &Quota{Client: fmt.Sprint("c", i), Now: now, Limits: Limits{PerMinute: 100}}
				id, created, wait, err := st.Put(ctx, entry(i%10), q)
				answers <- answer{i % 10, id, created, wait, err}
			}()
		}
		for i := 100; i < 112; i++ {
			go func() {
				id, created, wait, err := st.Put(ctx, entry(i), &Quota{Client: "busy", Now: now, Limits: Limits{PerMinute: 5}})
				answers <- answer{i, id, created, wait, err}
			}()
		}
		createdOf := map[int]int{}
		waited := 0
		for range 52 {
			a := <-answers
			switch {
			case a.err != nil:
				t.Fatal(a.err)
			case a.wait > 0:
				waited++
			case a.id != fmt.Sprintf("e%d", a.i):
				t.Errorf("result %d answered with id %q", a.i, a.id)
			case a.created:
				createdOf[a.i]++
			}
		}
		for i := range 10 {
			if createdOf[i] != 1 {
				t.Errorf("result %d created %d times", i, createdOf[i])
			}
		}
		busy := 0
		for i := 100; i < 112; i++ {
			busy += createdOf[i]
		}
		if busy != 5 || waited != 7 {
			t.Errorf("a client allowed 5: %d stored, %d told to wait", busy, waited)
		}
		page, _, err := st.List(ctx, Query{Limit: 500})
		if err != nil || len(page) != 15 {
			t.Errorf("stored %d entries (%v), want 15", len(page), err)
		}
	})
}

package sqlite

/*
#include <time.h>

// The C engine is mattn/go-sqlite3's, linked into the same binary; these
// are its public entry points (sqlite3.h), declared here because that
// header is not on this package's include path.
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_mutex sqlite3_mutex;
typedef long long sqlite3_int64;
extern int sqlite3_auto_extension(void (*)(void));
extern int sqlite3_db_status(sqlite3 *, int, int *, int *, int);
extern int sqlite3_status64(int, sqlite3_int64 *, sqlite3_int64 *, int);
extern sqlite3_mutex *sqlite3_db_mutex(sqlite3 *);
extern int sqlite3_mutex_try(sqlite3_mutex *);
extern void sqlite3_mutex_enter(sqlite3_mutex *);
extern void sqlite3_mutex_leave(sqlite3_mutex *);

// The connection this thread opened last, set by SQLite's auto-extension
// hook, which runs inside sqlite3_open_v2 on the opening thread: the one
// public way to learn a connection's handle that the driver keeps private.
static __thread sqlite3 *dbm_opened;

static int dbm_on_open(sqlite3 *db, char **err, const void *api) {
	dbm_opened = db;
	return 0;
}

static void dbm_hook(void) {
	sqlite3_auto_extension((void (*)(void))dbm_on_open);
}

static sqlite3 *dbm_take_opened(void) {
	sqlite3 *db = dbm_opened;
	dbm_opened = 0;
	return db;
}

// Page cache counters, in the order of acc below: hits, misses, writes
// and spills (cumulative), then the cache's bytes (a gauge).
enum { DBM_CUMULATIVE = 4, DBM_N = 5 };
static const int dbm_ops[DBM_N] = {
	7,  // SQLITE_DBSTATUS_CACHE_HIT
	8,  // SQLITE_DBSTATUS_CACHE_MISS
	9,  // SQLITE_DBSTATUS_CACHE_WRITE
	12, // SQLITE_DBSTATUS_CACHE_SPILL
	1,  // SQLITE_DBSTATUS_CACHE_USED
};

// dbm_read adds what db's page cache counted since the previous call to
// acc[0..3], resetting SQLite's counters (which are 32-bit and would wrap
// in a long run), and sets acc[4] to the cache's bytes. It writes acc
// with atomic stores while holding the connection's mutex: every read of
// a connection's counters holds it, so they are added in turn, and Go
// reads acc with atomic loads at any time.
//
// With tries > 0 it reads only if it gets the mutex within about
// tries*20 µs, and returns 0 otherwise: the sampler must not wait for a
// long statement, nor hold up the worker running it. With tries == 0 it
// waits for the mutex: the connection's owner reads between statements,
// when only another reader can hold it, and briefly.
static int dbm_read(sqlite3 *db, sqlite3_int64 *acc, int tries) {
	sqlite3_mutex *m = sqlite3_db_mutex(db);
	if (tries > 0) {
		struct timespec pause = {0, 20000};
		int i;
		for (i = 0; sqlite3_mutex_try(m) != 0; i++) {
			if (i == tries) return 0;
			nanosleep(&pause, 0);
		}
	} else {
		sqlite3_mutex_enter(m);
	}
	int k;
	for (k = 0; k < DBM_N; k++) {
		int cur = 0, hi = 0;
		if (sqlite3_db_status(db, dbm_ops[k], &cur, &hi, k < DBM_CUMULATIVE) != 0) continue;
		if (k < DBM_CUMULATIVE) __atomic_add_fetch(&acc[k], cur, __ATOMIC_RELAXED);
		else __atomic_store_n(&acc[k], (sqlite3_int64)cur, __ATOMIC_RELAXED);
	}
	sqlite3_mutex_leave(m);
	return 1;
}

// dbm_memory_used is the heap SQLite holds in this process, all
// connections together (SQLITE_STATUS_MEMORY_USED).
static sqlite3_int64 dbm_memory_used(void) {
	sqlite3_int64 cur = 0, hi = 0;
	sqlite3_status64(0, &cur, &hi, 0);
	return cur;
}
*/
import "C"

import (
	"context"
	"database/sql/driver"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dbmark/dbmark/internal/target"
)

// nCache is the number of page cache counters dbm_read fills; the first
// nCumulative are cumulative.
const (
	nCache      = C.DBM_N
	nCumulative = C.DBM_CUMULATIVE
)

// cacheNames name the page cache counters as the other engines name theirs
// where the meaning is the same: a hit is a page found in the connection's
// cache, a miss a page read from the file (the OS cache or the disk).
var cacheNames = [nCache]target.Counter{
	{Name: "blocks_hit", Unit: "pages"},
	{Name: "blocks_read", Unit: "pages"},
	{Name: "pages_written", Unit: "pages"},
	{Name: "cache_spills", Unit: "pages"},
	{Name: "cache_bytes", Unit: "bytes", Gauge: true},
}

// sampleTries bounds the sampler's wait for a connection's mutex (about
// 100 µs): a connection busy past it hands its counts over itself, at the
// end of its statement (publishWait).
const sampleTries = 5

// publishWait bounds how long a read waits for busy connections to hand
// over their counts. A connection still in its statement after it (a
// long scan, a wait for the write lock) is summed with the counts it
// handed over last: what it counts meanwhile is in the next sample, as
// the counts of a statement under way always are.
const publishWait = 20 * time.Millisecond

// openRaw opens a connection with the driver and returns it with its C
// handle, which SQLite's auto-extension hook records on the opening thread.
func (t *Target) openRaw() (driver.Conn, *C.sqlite3, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	C.dbm_hook() // SQLite registers a hook once however often it is added
	C.dbm_take_opened()
	dc, err := t.drv.Open(t.dsn)
	db := C.dbm_take_opened()
	if err != nil {
		return nil, nil, err
	}
	return dc, db, nil
}

// connCache is a connection's part in its target's caches: its C handle
// and its counts so far. acc is written by dbm_read under the connection's
// mutex and read with atomic loads.
type connCache struct {
	db  *C.sqlite3
	acc [nCache]int64
	set *caches
	// seen is the last request of the sampler's that the connection's
	// owner has answered (its own goroutine only); answered is the same,
	// for the sampler to wait on.
	seen     uint64
	answered atomic.Uint64
}

// read adds the connection's counts since its last read to acc; with
// tries > 0 only if its mutex is free within them.
func (cc *connCache) read(tries int) bool {
	return C.dbm_read(cc.db, (*C.sqlite3_int64)(unsafe.Pointer(&cc.acc[0])), C.int(tries)) != 0
}

// counts are acc as last read.
func (cc *connCache) counts() (out [nCache]int64) {
	for k := range nCache {
		out[k] = atomic.LoadInt64(&cc.acc[k])
	}
	return out
}

// poll is called by the connection's owner after each statement: when
// the sampler has asked for the counters since the last call, the
// connection reads its own (it is between statements, so its mutex is
// free) and says so. It costs an atomic load when nobody asked.
func (cc *connCache) poll() {
	if cc.db == nil {
		return
	}
	want := cc.set.want.Load()
	if want == cc.seen {
		return
	}
	cc.seen = want
	cc.read(0)
	cc.answered.Store(want)
}

// caches sums the page cache counters of a target's connections, the open
// ones and those closed during the run, so that the sums only grow.
type caches struct {
	mu     sync.Mutex
	open   map[*Conn]struct{}
	closed [nCache]int64
	// want counts the sampler's requests: a connection that sees it move
	// reads its counters at the end of its statement.
	want atomic.Uint64
}

func (cs *caches) add(c *Conn) {
	if c.cache.db == nil {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.open == nil {
		cs.open = map[*Conn]struct{}{}
	}
	cs.open[c] = struct{}{}
}

// remove folds c's counts into the closed ones. Its owner calls it before
// closing c, so no statement of c is running.
func (cs *caches) remove(c *Conn) {
	if c.cache.db == nil {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if _, ok := cs.open[c]; !ok {
		return
	}
	delete(cs.open, c)
	c.cache.read(0)
	acc := c.cache.counts()
	for k := range nCumulative {
		cs.closed[k] += acc[k]
	}
}

// read returns the counters summed over the connections and how many are
// open. It never waits on a statement: a connection whose mutex is free
// is read at once, a busy one reads itself when its statement ends, and
// one still busy after publishWait counts with what it read last. So the
// sums only grow, and a sample is taken however busy the clients are.
func (cs *caches) read() (sum [nCache]int64, open int) {
	gen := cs.want.Add(1)
	cs.mu.Lock()
	var busy []*connCache
	for c := range cs.open {
		if !c.cache.read(sampleTries) {
			busy = append(busy, &c.cache)
		}
	}
	cs.mu.Unlock()
	deadline := time.Now().Add(publishWait)
	for len(busy) > 0 && time.Now().Before(deadline) {
		if busy[0].answered.Load() >= gen {
			busy = busy[1:]
			continue
		}
		time.Sleep(200 * time.Microsecond)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	sum = cs.closed
	for c := range cs.open {
		acc := c.cache.counts()
		for k := range nCache {
			sum[k] += acc[k]
		}
	}
	return sum, len(cs.open)
}

// OpenCounters reads SQLite's page cache statistics for the connections
// this target opens: SQLite keeps them per connection, and has no
// statistics for the file as a whole.
func (t *Target) OpenCounters(context.Context) (target.CounterReader, error) {
	return cacheReader{t: t}, nil
}

type cacheReader struct{ t *Target }

func (r cacheReader) ReadCounters(context.Context) ([]target.Counter, error) {
	sum, open := r.t.caches.read()
	out := make([]target.Counter, 0, nCache+2)
	for k, c := range cacheNames {
		c.Value = float64(sum[k])
		out = append(out, c)
	}
	return append(out,
		target.Counter{Name: "connections", Value: float64(open), Gauge: true},
		target.Counter{Name: "memory_used", Unit: "bytes", Value: float64(C.dbm_memory_used()), Gauge: true},
	), nil
}

func (cacheReader) Close() error { return nil }

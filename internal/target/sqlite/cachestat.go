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
// in a long run), and sets acc[4] to the cache's bytes.
//
// With tries > 0 it reads only if it gets the connection's mutex within
// about tries*20 µs, and returns 0 otherwise: the sampler must not wait
// for a long statement, nor hold up the worker running it. SQLite takes
// the mutex for each call, so a busy connection frees it many times a
// millisecond.
static int dbm_read(sqlite3 *db, sqlite3_int64 *acc, int tries) {
	sqlite3_mutex *m = sqlite3_db_mutex(db);
	if (tries > 0) {
		struct timespec pause = {0, 20000};
		int i;
		for (i = 0; sqlite3_mutex_try(m) != 0; i++) {
			if (i == tries) return 0;
			nanosleep(&pause, 0);
		}
	}
	int k;
	for (k = 0; k < DBM_N; k++) {
		int cur = 0, hi = 0;
		if (sqlite3_db_status(db, dbm_ops[k], &cur, &hi, k < DBM_CUMULATIVE) != 0) continue;
		if (k < DBM_CUMULATIVE) acc[k] += cur; else acc[k] = cur;
	}
	if (tries > 0) sqlite3_mutex_leave(m);
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

// sampleTries bounds the sampler's wait for a busy connection (about 2 ms).
const sampleTries = 100

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
// and its counts so far.
type connCache struct {
	db  *C.sqlite3
	acc [nCache]int64
	set *caches
}

// caches sums the page cache counters of a target's connections, the open
// ones and those closed during the run, so that the sums only grow.
type caches struct {
	mu     sync.Mutex
	open   map[*Conn]struct{}
	closed [nCache]int64
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
	C.dbm_read(c.cache.db, (*C.sqlite3_int64)(unsafe.Pointer(&c.cache.acc[0])), 0)
	for k := range nCumulative {
		cs.closed[k] += c.cache.acc[k]
	}
}

// read returns the counters summed over the connections, how many are
// open and how many were too busy to read: their counts stay as last read
// (and are all there at their next read), so a sum with any busy is not a
// sample of this moment.
func (cs *caches) read() (sum [nCache]int64, open, busy int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	sum = cs.closed
	for c := range cs.open {
		if C.dbm_read(c.cache.db, (*C.sqlite3_int64)(unsafe.Pointer(&c.cache.acc[0])), sampleTries) == 0 {
			busy++
		}
		for k := range nCache {
			sum[k] += c.cache.acc[k]
		}
	}
	return sum, len(cs.open), busy
}

// OpenCounters reads SQLite's page cache statistics for the connections
// this target opens: SQLite keeps them per connection, and has no
// statistics for the file as a whole.
func (t *Target) OpenCounters(context.Context) (target.CounterReader, error) {
	return cacheReader{t: t}, nil
}

type cacheReader struct{ t *Target }

func (r cacheReader) ReadCounters(context.Context) ([]target.Counter, error) {
	sum, open, busy := r.t.caches.read()
	if busy > 0 {
		return nil, target.ErrCountersBusy
	}
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

package sqlite

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/dbmark/dbmark/internal/result"
)

// pragmaDefaults are SQLite's own defaults (sqlite.org/pragma.html) for the
// pragmas Inspect reports; the driver and the URL may change them per
// connection.
var pragmaDefaults = map[string]string{
	"journal_mode": "delete", "synchronous": "2", "page_size": "4096", "cache_size": "-2000",
	"mmap_size": "0", "busy_timeout": "0", "locking_mode": "normal", "temp_store": "0",
	"wal_autocheckpoint": "1000", "auto_vacuum": "0", "foreign_keys": "0", "journal_size_limit": "-1",
}

var sizePragmas = []string{"page_size", "cache_size", "mmap_size", "journal_mode", "synchronous", "wal_autocheckpoint"}

// Facts reports the pragmas that differ from SQLite's defaults on a
// connection as dbmark opens it, the page cache and the file's size.
func (t *Target) Facts(ctx context.Context) (*result.EngineFacts, error) {
	c, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	f := &result.EngineFacts{NonDefault: map[string]result.NonDefault{}, Sizes: map[string]string{}}
	val := map[string]string{}
	for _, p := range append(pragmas, "page_count") {
		v, ok, err := c.QueryRow(ctx, "PRAGMA "+p)
		if err != nil {
			return nil, fmt.Errorf("inspect SQLite: PRAGMA %s: %w", p, err)
		}
		if ok {
			val[p] = v
		}
	}
	for p, def := range pragmaDefaults {
		if v, ok := val[p]; ok && v != def {
			f.NonDefault[p] = result.NonDefault{Value: v, Default: def, Source: "connection"}
		}
	}
	for _, p := range sizePragmas {
		f.Sizes[p] = val[p]
	}
	page, _ := strconv.ParseInt(val["page_size"], 10, 64)
	cache, _ := strconv.ParseInt(val["cache_size"], 10, 64)
	if cache < 0 {
		f.CacheBytes = uint64(-cache) * 1024 // negative: KiB
	} else {
		f.CacheBytes = uint64(cache * page)
	}
	pages, _ := strconv.ParseInt(val["page_count"], 10, 64)
	f.DataBytes = uint64(pages * page)
	if st, err := os.Stat(t.path + "-wal"); err == nil {
		f.DataBytes += uint64(st.Size())
	}
	return f, nil
}

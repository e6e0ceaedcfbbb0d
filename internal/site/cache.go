package site

import (
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// cache keeps values for a short time, so that popular views (a list's
// facet counts) are computed once per period rather than per request.
// Each server has its own: what it holds may lag the store by the period,
// which is the price of not scanning the table on every request.
type cache[V any] struct {
	mu   sync.Mutex
	ttl  time.Duration
	max  int
	vals map[string]cached[V]
	// flight computes a missing key once however many requests want it.
	flight singleflight.Group
}

type cached[V any] struct {
	v  V
	at time.Time
}

func newCache[V any](ttl time.Duration, max int) *cache[V] {
	return &cache[V]{ttl: ttl, max: max, vals: map[string]cached[V]{}}
}

// get returns the value of key, computing it with fn when it is missing.
// A value older than the period is returned as it is while one background
// computation replaces it, so a popular view never waits on a refresh.
// Errors are not kept. fn must not depend on the caller's context being
// alive (a refresh outlives the request that started it).
func (c *cache[V]) get(key string, now time.Time, fn func() (V, error)) (V, error) {
	c.mu.Lock()
	e, ok := c.vals[key]
	c.mu.Unlock()
	if ok {
		if now.Sub(e.at) >= c.ttl {
			go c.flight.Do(key, func() (any, error) { return c.fill(key, fn) })
		}
		return e.v, nil
	}
	// Requests arriving together for a missing key wait for one
	// computation instead of each starting their own.
	res, err, _ := c.flight.Do(key, func() (any, error) { return c.fill(key, fn) })
	if err != nil {
		var zero V
		return zero, err
	}
	return res.(V), nil
}

// fill computes key's value and keeps it.
func (c *cache[V]) fill(key string, fn func() (V, error)) (V, error) {
	v, err := fn()
	if err != nil {
		return v, err
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.vals) >= c.max {
		// Full: drop what has expired, or else everything (simple, and
		// rare with a short period).
		for k, e := range c.vals {
			if now.Sub(e.at) >= c.ttl {
				delete(c.vals, k)
			}
		}
		if len(c.vals) >= c.max {
			clear(c.vals)
		}
	}
	c.vals[key] = cached[V]{v: v, at: now}
	return v, nil
}

// reset empties the cache (after a moderation, so it shows at once here).
func (c *cache[V]) reset() {
	c.mu.Lock()
	clear(c.vals)
	c.mu.Unlock()
}

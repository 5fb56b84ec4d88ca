package store

import (
	"sync"
	"time"
)

// settingsTTL is a backstop: the cache is dropped at once when another
// process commits (commitsElsewhere), and this bounds staleness should
// that signal fail (PostgreSQL's listener reconnecting). This store's own
// writes (SetSetting, DeleteSetting, Import) clear the cache when they
// commit.
const settingsTTL = time.Second

// settingsCache holds settings as stored (secret ones still encrypted),
// so the hot paths — every inbound request's body limit, every publish's —
// do not read the database for a value that almost never changes.
type settingsCache struct {
	mu sync.Mutex
	// gen counts clears: a read that began before one must not store what
	// it found, which may predate the write that cleared.
	gen uint64
	m   map[string]cachedSetting
	// seen is the commitsElsewhere mark the cached values were read at.
	seen uint64
}

type cachedSetting struct {
	stored string
	ok     bool // a value is stored; false caches its absence
	until  time.Time
}

// get returns key's cached value, or the generation a read of it should
// pass to put.
// mark is commitsElsewhere now: when it moved, what is cached may be
// stale and is dropped.
func (c *settingsCache) get(key string, mark uint64) (cachedSetting, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if mark != c.seen {
		c.seen = mark
		c.gen++
		clear(c.m)
	}
	v, ok := c.m[key]
	if ok && time.Now().Before(v.until) {
		return v, c.gen, true
	}
	return cachedSetting{}, c.gen, false
}

// put caches what a read that began at generation gen found, unless the
// cache was cleared since.
func (c *settingsCache) put(key string, gen uint64, stored string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.m == nil {
		c.m = map[string]cachedSetting{}
	}
	c.m[key] = cachedSetting{stored: stored, ok: ok, until: time.Now().Add(settingsTTL)}
}

// clear forgets every cached value; writes call it after they commit.
func (c *settingsCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.m)
}

package store

import "sync"

// settingsCache holds settings as stored (secret ones still encrypted),
// so the hot paths — every inbound request's body limit, every publish's —
// do not read the settings table for a value that almost never changes.
// It is kept at the settings epoch (epochs.go), which every change to
// the table moves when it commits, whichever process makes it: a `config
// set` from the CLI beside a running server, or another server on
// PostgreSQL, applies to the next read. This store's own writes (SetSetting,
// DeleteSetting, Import) also clear it.
type settingsCache struct {
	mu sync.Mutex
	// gen counts clears: a read that began before one must not store what
	// it found, which may predate the write that cleared.
	gen uint64
	m   map[string]cachedSetting
	// epoch is the settings epoch the cached values were read at.
	epoch int64
}

type cachedSetting struct {
	stored string
	ok     bool // a value is stored; false caches its absence
}

// get returns key's cached value, or the generation a read of it should
// pass to put. epoch is the settings epoch read before: when it moved,
// what is cached may be stale and is dropped.
func (c *settingsCache) get(key string, epoch int64) (cachedSetting, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch != c.epoch {
		c.epoch = epoch
		c.gen++
		clear(c.m)
	}
	v, ok := c.m[key]
	return v, c.gen, ok
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
	c.m[key] = cachedSetting{stored: stored, ok: ok}
}

// clear forgets every cached value; writes call it after they commit.
func (c *settingsCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.m)
}

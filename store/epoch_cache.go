package store

import "sync"

// epochCache holds values read from one part of the database — settings
// (secret ones still encrypted), streams — so the hot paths (every
// inbound request's body limit and stream, every publish's) do not read
// it for what almost never changes. It is kept at that part's epoch
// (epochs.go), which every change to its table moves when it commits,
// whichever process makes it: a `config set` from the CLI beside a
// running server, or another server on PostgreSQL, applies to the next
// read. This store's own writes may also clear it.
type epochCache[V any] struct {
	mu sync.Mutex
	// gen counts clears: a read that began before one must not store what
	// it found, which may predate the write that cleared.
	gen uint64
	m   map[string]V
	// epoch is the epoch the cached values were read at.
	epoch int64
}

// maxCached bounds an epochCache; past it, it starts empty again.
const maxCached = 4096

// get returns key's cached value, or the generation a read of it should
// pass to put. epoch is the epoch read before: when it moved, what is
// cached may be stale and is dropped.
func (c *epochCache[V]) get(key string, epoch int64) (V, uint64, bool) {
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
func (c *epochCache[V]) put(key string, gen uint64, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.m == nil || len(c.m) >= maxCached {
		c.m = make(map[string]V)
	}
	c.m[key] = v
}

// clear forgets every cached value; writes call it after they commit.
func (c *epochCache[V]) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.m)
}

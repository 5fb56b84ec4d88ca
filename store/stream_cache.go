package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/helixml/helix-org/domain"
)

// streamCache holds streams as GetStream and StreamWithSecrets return
// them, so a publish or an inbound request does not read and decrypt its
// stream each time. It is kept at the streams epoch (epochs.go), which any
// change to the table moves when it commits, in whichever process. The
// Transport.Config of what it returns is shared: never change it.
type streamCache struct {
	mu      sync.Mutex
	gen     uint64 // counts clears, as settingsCache's
	epoch   int64
	entries map[string]cachedStream
}

type cachedStream struct {
	shown  domain.Stream // secrets redacted
	opened domain.Stream // secrets decrypted
}

// maxCachedStreams bounds the cache; past it, it starts empty again.
const maxCachedStreams = 4096

// cachedStream returns stream id from the cache when nothing changed the
// streams since it was read.
func (s *Store) cachedStream(ctx context.Context, id string) (cachedStream, error) {
	epoch, err := s.epoch(ctx, epochStreams)
	if err != nil {
		return cachedStream{}, fmt.Errorf("stream %s: %w", id, err)
	}
	c := &s.streams
	c.mu.Lock()
	if epoch != c.epoch {
		c.epoch = epoch
		c.gen++
		clear(c.entries)
	}
	got, ok := c.entries[id]
	gen := c.gen
	c.mu.Unlock()
	if ok {
		return got, nil
	}
	var r streamRow
	if err := s.read(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return cachedStream{}, notFoundOr(err, "stream", id)
	}
	cfg, err := s.openConfig(domain.TransportKind(r.TransportKind), r.TransportConfig)
	if err != nil {
		return cachedStream{}, fmt.Errorf("stream %s: %w", id, err)
	}
	got = cachedStream{shown: s.stream(r), opened: r.toDomain()}
	got.opened.Transport.Config = json.RawMessage(cfg)
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen {
		if c.entries == nil || len(c.entries) >= maxCachedStreams {
			c.entries = make(map[string]cachedStream)
		}
		c.entries[id] = got
	}
	return got, nil
}

package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/helixml/helix-org/domain"
)

// cachedStream is a stream as GetStream and StreamWithSecrets return it.
// Its Transport.Config is shared between requests: never change it.
type cachedStream struct {
	shown  domain.Stream // secrets redacted
	opened domain.Stream // secrets decrypted
}

// cachedStream returns stream id, from the cache (epoch_cache.go) when no
// stream changed since it was read.
func (s *Store) cachedStream(ctx context.Context, id string) (cachedStream, error) {
	epoch, err := s.epoch(ctx, epochStreams)
	if err != nil {
		return cachedStream{}, fmt.Errorf("stream %s: %w", id, err)
	}
	got, gen, ok := s.streams.get(id, epoch)
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
	s.streams.put(id, gen, got)
	return got, nil
}

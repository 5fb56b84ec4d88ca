package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/helixml/helix-org/domain"
)

// OrgRole and SubscribedStreams are asked on every tool call and every
// read; they keep what they read at epochAccess, which a change to an
// org role, a subscription or a worker — by any process on the database — moves
// when it commits, so the next call reads anew. A read-only call reads
// that epoch in its authentication's one read of them all (WithEpochs).
type accessCaches struct {
	roles epochCache[domain.OrgRole]
	subs  epochCache[[]string]
}

// cachedRole is OrgRole's kept answer for worker, or reads it.
func (s *Store) cachedRole(ctx context.Context, worker string, read func() (domain.OrgRole, error)) (domain.OrgRole, error) {
	epoch, err := s.epoch(ctx, epochAccess)
	if err != nil {
		return "", fmt.Errorf("org role of %s: %w", worker, err)
	}
	role, gen, ok := s.access.roles.get(worker, epoch)
	if ok {
		return role, nil
	}
	if role, err = read(); err != nil {
		return "", err
	}
	s.access.roles.put(worker, gen, role)
	return role, nil
}

// cachedSubscriptions is SubscribedStreams' kept answer for worker, or
// reads it; callers get a copy of their own.
func (s *Store) cachedSubscriptions(ctx context.Context, worker string) ([]string, error) {
	epoch, err := s.epoch(ctx, epochAccess)
	if err != nil {
		return nil, err
	}
	ids, gen, ok := s.access.subs.get(worker, epoch)
	if !ok {
		if ids, err = s.subscribedStreams(ctx, worker); err != nil {
			return nil, err
		}
		s.access.subs.put(worker, gen, ids)
	}
	return slices.Clone(ids), nil
}

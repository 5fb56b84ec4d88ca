package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// taintOf says why a run over trigs is tainted, or "" when it is not: an
// event no worker wrote (one an inbound route appended) on a stream whose
// transport kind is not trusted (domain.Transports.Untrusted) is outside
// input, which may carry instructions nobody in the org gave.
func (s *Store) taintOf(tx *gorm.DB, trigs []domain.Trigger) (string, error) {
	kinds := map[string]string{}
	for _, t := range trigs {
		ev := t.Event
		if ev.Source != "" {
			continue
		}
		kind, ok := kinds[ev.StreamID]
		if !ok {
			var found []string
			if err := tx.Model(&streamRow{}).Where("id = ?", ev.StreamID).Pluck("transport_kind", &found).Error; err != nil {
				return "", fmt.Errorf("transport of %s: %w", ev.StreamID, err)
			}
			if len(found) > 0 {
				kind = found[0]
			}
			kinds[ev.StreamID] = kind
		}
		if kind != string(domain.TransportLocal) && s.transports.Untrusted(domain.TransportKind(kind)) {
			return fmt.Sprintf("event %s arrived from outside on %s stream %s", ev.ID, kind, ev.StreamID), nil
		}
	}
	return "", nil
}

// TriggerStreams are the streams of the events that woke an activation.
func (s *Store) TriggerStreams(ctx context.Context, activation string) ([]string, error) {
	var act activationRow
	if err := s.read(ctx).Where("id = ?", activation).Take(&act).Error; err != nil {
		return nil, notFoundOr(err, "activation", activation)
	}
	return streamsOfActivation(s.read(ctx), act)
}

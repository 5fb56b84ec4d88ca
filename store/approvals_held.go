package store

import (
	"context"
	"fmt"

	"github.com/helixml/helix-org/domain"
)

// HeldCalls returns the pending approval requests not yet past their
// expiry, oldest first, for the web UI's worker statuses. Unlike
// ListApprovals it only reads: a page render must not write (a write
// wakes every live view).
func (s *Store) HeldCalls(ctx context.Context) ([]domain.Approval, error) {
	var rows []approvalRow
	if err := s.read(ctx).Where("state = ? AND expires_at > ?", string(domain.ApprovalPending), s.Now()).
		Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("held calls: %w", err)
	}
	return mapRows(rows, approvalRow.toDomain), nil
}

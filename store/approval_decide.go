package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// DecideApproval records actor's decision on a pending request, in one
// transaction that moves it out of pending, so a replayed decision finds
// it decided and changes nothing. Only the approver, a worker above the
// approver, or the owner decides; never the requester. A denial tells the
// requester at once; an approval leaves the request approved for the
// caller to run it and then record the outcome with FinishApproval. A
// request past its expiry becomes expired and cannot be approved.
func (s *Store) DecideApproval(ctx context.Context, actor, id string, d domain.ApprovalDecision, note string) (domain.Approval, error) {
	var row approvalRow
	expired := false
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
			return notFoundOr(err, "approval", id)
		}
		if err := mayDecide(tx, actor, row); err != nil {
			return err
		}
		now := s.Now()
		if row.State == string(domain.ApprovalPending) && !now.Before(row.ExpiresAt) {
			expired = true
			row.State = string(domain.ApprovalExpired)
			return tx.Model(&row).Update("state", row.State).Error
		}
		if row.State != string(domain.ApprovalPending) {
			return fmt.Errorf("approval %s is already %s: %w", id, row.State, domain.ErrConflict)
		}
		next := domain.ApprovalApproved
		if d == domain.DecisionDeny {
			next = domain.ApprovalDenied
		}
		res := tx.Model(&approvalRow{}).Where("id = ? AND state = ?", id, string(domain.ApprovalPending)).
			Updates(map[string]any{"state": string(next), "decided_by": actor, "note": note, "decided_at": &now})
		if res.Error != nil || res.RowsAffected != 1 {
			return orConflict(res.Error, "approval %s was decided meanwhile", id)
		}
		row.State, row.DecidedBy, row.Note, row.DecidedAt = string(next), actor, note, &now
		if err := s.judgeRunTx(tx, approvalOutcome(row)); err != nil {
			return err
		}
		if next == domain.ApprovalDenied {
			_, err := s.notifyLabelTx(tx, row.WorkerID, outcomeNotice(row.toDomain()), row.ID, storedLabel(row.Label))
			return err
		}
		return nil
	})
	if err == nil && expired {
		err = fmt.Errorf("approval %s expired at %s; the worker must ask again: %w", id, row.ExpiresAt.UTC().Format(time.RFC3339), domain.ErrConflict)
	}
	if err != nil {
		return domain.Approval{}, fmt.Errorf("decide approval %s: %w", id, err)
	}
	return row.toDomain(), nil
}

// FinishApproval records what running an approved request gave — its
// result, or runErr — and tells the requester, whose inbox wakes it.
func (s *Store) FinishApproval(ctx context.Context, id string, result json.RawMessage, runErr string) (domain.Approval, error) {
	var row approvalRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&approvalRow{}).Where("id = ? AND state = ?", id, string(domain.ApprovalApproved)).
			Updates(map[string]any{"state": string(domain.ApprovalExecuted), "result": string(result), "error": runErr})
		if res.Error != nil || res.RowsAffected != 1 {
			return orConflict(res.Error, "approval %s is not approved and waiting to run", id)
		}
		if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
			return err
		}
		_, err := s.notifyLabelTx(tx, row.WorkerID, outcomeNotice(row.toDomain()), row.ID, storedLabel(row.Label))
		return err
	})
	if err != nil {
		return domain.Approval{}, fmt.Errorf("finish approval %s: %w", id, err)
	}
	return row.toDomain(), nil
}

// maxNoticeResult bounds the result quoted in a notice; list_approvals
// shows it whole.
const maxNoticeResult = 16 << 10

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "… (cut; list_approvals shows it whole)"
}

func orConflict(err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, domain.ErrConflict)...)
}

// mayDecide: the approver, a person above it, the owner or the operator
// (""); never the worker that asked, unless it is the owner, and never an
// AI worker: the gate is a human one. A declassification whose readers
// include people is decided only by one of them: what they alone may read
// is theirs to share.
func mayDecide(tx *gorm.DB, actor string, r approvalRow) error {
	switch {
	case actor == "":
		return nil
	case actor == r.WorkerID && actor != domain.OwnerWorker:
		return domain.Forbidden("%s cannot decide its own approval request %s; %s decides it", actor, r.ID, r.Approver)
	}
	var w workerRow
	if err := tx.Select("kind").Where("id = ?", actor).Take(&w).Error; err != nil {
		return notFoundOr(err, "worker", actor)
	}
	if w.Kind != string(domain.WorkerHuman) {
		return domain.Forbidden("%s is an AI worker; only a person decides approval requests (%s, a person above it, or %s)", actor, r.Approver, domain.OwnerWorker)
	}
	if r.Kind == string(domain.ApprovalDeclassify) {
		people, err := peopleAmong(tx, storedLabel(r.Label).Readers)
		if err != nil {
			return err
		}
		if len(people) > 0 {
			if slices.Contains(people, actor) {
				return nil
			}
			return domain.Forbidden("%s asks to declassify what only %s may read; one of the people among them (%s) decides it, not %s",
				r.ID, strings.Join(storedLabel(r.Label).Readers, ", "), strings.Join(people, ", "), actor)
		}
	}
	if actor == domain.OwnerWorker || actor == r.Approver {
		return nil
	}
	a := newAuthz(tx)
	c, as, ap, err := a.both(actor, r.Approver)
	if err != nil {
		return err
	}
	below, err := c.Below(ap.Position, as.Position)
	if err != nil {
		return err
	}
	if !below {
		return domain.Forbidden("only %s (the approver), people above it or %s may decide %s", r.Approver, domain.OwnerWorker, r.ID)
	}
	return nil
}

func outcomeNotice(a domain.Approval) domain.Message {
	var body string
	switch {
	case a.State == domain.ApprovalDenied:
		body = fmt.Sprintf("%s denied your call of %s with %s.", a.DecidedBy, a.Tool, clip(string(a.Arguments), maxNoticeResult))
		if a.Note != "" {
			body += "\nNote: " + a.Note
		}
	case a.Error != "":
		body = fmt.Sprintf("%s approved your call of %s with %s, but it failed: %s", a.DecidedBy, a.Tool, clip(string(a.Arguments), maxNoticeResult), a.Error)
	default:
		body = fmt.Sprintf("%s approved your call of %s with %s; it ran.\nResult: %s", a.DecidedBy, a.Tool, clip(string(a.Arguments), maxNoticeResult), clip(string(a.Result), maxNoticeResult))
	}
	if a.State != domain.ApprovalDenied && a.Note != "" {
		body += "\nNote: " + a.Note
	}
	return domain.Message{Subject: "approval " + a.ID + " " + string(a.State), Body: body, BodyContentType: "text/plain",
		Extra: approvalExtra("approval_"+string(a.State), a)}
}

// approvalOutcome is what a decision says of the run that asked: granted,
// its work was wanted; denied, it was not.
func approvalOutcome(r approvalRow) domain.RunOutcome {
	o := domain.RunOutcome{Activation: r.ActivationID, Outcome: domain.OutcomeHelped, Source: domain.SourceApproval, By: r.DecidedBy,
		Note: fmt.Sprintf("approval %s of %s %s", r.ID, r.Tool, r.State)}
	if r.State == string(domain.ApprovalDenied) {
		o.Outcome = domain.OutcomeFailed
	}
	if r.DecidedAt != nil {
		o.At = *r.DecidedAt
	}
	return o
}

package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

type approvalRow struct {
	ID           string `gorm:"primaryKey"`
	WorkerID     string `gorm:"not null;index"`
	Tool         string `gorm:"not null"`
	Arguments    string `gorm:"not null"`
	ArgsHash     string `gorm:"not null"`
	ActivationID string
	Reason       string
	Why          string
	Approver     string `gorm:"not null;index"`
	State        string `gorm:"not null;index"`
	DecidedBy    string
	Note         string
	Result       string
	Error        string
	CreatedAt    time.Time
	ExpiresAt    time.Time `gorm:"not null"`
	DecidedAt    *time.Time
	// Kind is the rule that held the call (domain.ApprovalKind), Label the
	// run's label then.
	Kind  string `gorm:"not null;default:''"`
	Label string `gorm:"not null;default:''"`
}

func (approvalRow) TableName() string { return "approvals" }

func (r approvalRow) toDomain() domain.Approval {
	a := domain.Approval{ID: r.ID, WorkerID: r.WorkerID, Tool: r.Tool, Arguments: json.RawMessage(r.Arguments), ArgsHash: r.ArgsHash,
		ActivationID: r.ActivationID, Reason: r.Reason, Why: r.Why, Approver: r.Approver, State: domain.ApprovalState(r.State),
		DecidedBy: r.DecidedBy, Note: r.Note, Error: r.Error, CreatedAt: r.CreatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(),
		Kind: domain.ApprovalKind(r.Kind), Label: storedLabel(r.Label)}
	if r.Result != "" {
		a.Result = json.RawMessage(r.Result)
	}
	if r.DecidedAt != nil {
		t := r.DecidedAt.UTC()
		a.DecidedAt = &t
	}
	return a
}

// RequestApproval records a held tool call and tells its approver in the
// approver's inbox, in one transaction: for a declassification the first
// person among the label's readers (approver), else — or when there is
// none — the requester's nearest human manager up the chart, else the
// owner. a carries the worker, tool, canonical arguments and their hash,
// activation, reason, why, kind and label; the request expires after ttl.
func (s *Store) RequestApproval(ctx context.Context, a domain.Approval, ttl time.Duration) (domain.Approval, error) {
	now := s.Now()
	row := approvalRow{ID: domain.NewApprovalID(), WorkerID: a.WorkerID, Tool: a.Tool, Arguments: string(a.Arguments), ArgsHash: a.ArgsHash,
		ActivationID: a.ActivationID, Reason: a.Reason, Why: a.Why, State: string(domain.ApprovalPending), CreatedAt: now, ExpiresAt: now.Add(ttl),
		Kind: string(a.Kind), Label: a.Label.Encode()}
	err := s.write(ctx, func(tx *gorm.DB) error {
		var err error
		if row.Approver, err = approver(tx, a); err != nil {
			return err
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		_, err = s.notifyTx(tx, row.Approver, approvalNotice(row.toDomain()), row.ID)
		return err
	})
	if err != nil {
		return domain.Approval{}, fmt.Errorf("request approval of %s for %s: %w", a.Tool, a.WorkerID, err)
	}
	return row.toDomain(), nil
}

// approver decides a request: a person among the readers of what a
// declassification would share, else the requester's nearest human.
func approver(tx *gorm.DB, a domain.Approval) (string, error) {
	if a.Kind == domain.ApprovalDeclassify {
		if people, err := peopleAmong(tx, a.Label.Readers); err != nil || len(people) > 0 {
			return firstOr(people, ""), err
		}
	}
	return nearestHuman(tx, a.WorkerID)
}

// peopleAmong are the active human workers among ids, by id.
func peopleAmong(tx *gorm.DB, ids []string) ([]string, error) {
	people := []string{}
	if len(ids) == 0 {
		return people, nil
	}
	err := tx.Model(&workerRow{}).Where("id IN ? AND kind = ? AND dismissed_at IS NULL", ids, string(domain.WorkerHuman)).
		Order("id").Pluck("id", &people).Error
	return people, err
}

func firstOr(ids []string, or string) string {
	if len(ids) == 0 {
		return or
	}
	return ids[0]
}

// nearestHuman is the one walk up the chart: the first active person in
// the positions above worker's, nearest first (the earliest hired of a
// position held by several); the owner when there is none. It is who
// approves a worker's held call and who hears of its budget.
func nearestHuman(tx *gorm.DB, worker string) (string, error) {
	a := newAuthz(tx)
	seat, err := a.seat(worker)
	if err != nil {
		return "", err
	}
	chart, err := a.loadChart()
	if err != nil {
		return "", err
	}
	above, err := chart.Managers(seat.Position)
	if err != nil {
		return "", err
	}
	for _, pos := range above {
		var ids []string
		if err := tx.Model(&workerRow{}).Where("position_id = ? AND kind = ? AND dismissed_at IS NULL", pos, string(domain.WorkerHuman)).
			Order("hired_at, id").Limit(1).Pluck("id", &ids).Error; err != nil {
			return "", err
		}
		if len(ids) > 0 {
			return ids[0], nil
		}
	}
	return domain.OwnerWorker, nil
}

func approvalNotice(a domain.Approval) domain.Message {
	body := fmt.Sprintf("%s asks to call %s with %s.\nWhy it waits: %s.\n", a.WorkerID, a.Tool, clip(string(a.Arguments), maxNoticeResult), a.Why)
	if !a.Label.IsZero() {
		body += "Its run's label: " + a.Label.String() + ".\n"
	}
	if a.Reason != "" {
		body += "Its reason: " + a.Reason + "\n"
	}
	body += fmt.Sprintf("Decide with decide_approval {\"id\": %q, \"decision\": \"approve\" or \"deny\"} before %s.",
		a.ID, a.ExpiresAt.Format(time.RFC3339))
	return domain.Message{Subject: "approval " + a.ID + ": " + a.Tool, Body: body, BodyContentType: "text/plain", Extra: approvalExtra("approval_request", a)}
}

// approvalExtra is a notice's machine-readable part: its kind
// (approval_request, approval_executed, approval_denied), as budget
// notices have, and the request.
func approvalExtra(kind string, a domain.Approval) json.RawMessage {
	if len(a.Result) > maxNoticeResult {
		a.Result = nil
	}
	b, _ := json.Marshal(map[string]any{"kind": kind, "approval": a})
	return b
}

// ApprovalFilter selects approvals; an empty State means pending.
type ApprovalFilter struct {
	State domain.ApprovalState
}

// ListApprovals returns the approvals actor may see, newest first: those
// it is to decide and those it asked for; the owner sees all. Requests
// past their expiry are shown expired.
func (s *Store) ListApprovals(ctx context.Context, actor string, f ApprovalFilter) ([]domain.Approval, error) {
	if err := s.expireApprovals(ctx); err != nil {
		return nil, err
	}
	if f.State == "" {
		f.State = domain.ApprovalPending
	}
	q := s.read(ctx).Where("state = ?", string(f.State))
	if actor != "" && actor != domain.OwnerWorker {
		q = q.Where("approver = ? OR worker_id = ?", actor, actor)
	}
	var rows []approvalRow
	if err := q.Order("created_at DESC, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	return mapRows(rows, approvalRow.toDomain), nil
}

// GetApproval returns one approval request.
func (s *Store) GetApproval(ctx context.Context, id string) (domain.Approval, error) {
	var r approvalRow
	if err := s.read(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return domain.Approval{}, notFoundOr(err, "approval", id)
	}
	return r.toDomain(), nil
}

// expireApprovals moves pending requests past their expiry to expired.
func (s *Store) expireApprovals(ctx context.Context) error {
	return s.write(ctx, func(tx *gorm.DB) error {
		return tx.Model(&approvalRow{}).Where("state = ? AND expires_at <= ?", string(domain.ApprovalPending), s.Now()).
			Update("state", string(domain.ApprovalExpired)).Error
	})
}

package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// steerRow is one message sent to a worker's running activation.
type steerRow struct {
	ID           int64  `gorm:"primaryKey;autoIncrement"`
	WorkerID     string `gorm:"not null;index"`
	ActivationID string `gorm:"not null"`
	Sender       string `gorm:"not null"`
	Body         string `gorm:"not null"`
	Label        string `gorm:"not null;default:''"`
	SentAt       time.Time
	TakenBy      string `gorm:"not null;default:'';index"`
	TakenAt      *time.Time
}

func (steerRow) TableName() string { return "steer_messages" }

func (r steerRow) toDomain() domain.SteerMessage {
	return domain.SteerMessage{ID: r.ID, WorkerID: r.WorkerID, ActivationID: r.ActivationID, From: r.Sender, Body: r.Body,
		SentAt: r.SentAt, TakenBy: r.TakenBy, Label: storedLabel(r.Label)}
}

// SteerActivation keeps body, from sender, for the running activation id:
// its agent takes it between turns, or the worker's next run does. The
// sender must manage the activation's worker; an activation that is not
// running is a conflict. The message carries the label of the run that
// sends it (Writing). logs are appended with it.
func (s *Store) SteerActivation(ctx context.Context, id, sender, body string, logs ...domain.Event) (domain.SteerMessage, error) {
	var out domain.SteerMessage
	err := s.write(ctx, func(tx *gorm.DB) error {
		var act activationRow
		if err := tx.Select("id", "worker_id", "status").Where("id = ?", id).Take(&act).Error; err != nil {
			return notFoundOr(err, "activation", id)
		}
		if err := newAuthz(tx).manages(sender, act.WorkerID); err != nil {
			return err
		}
		if act.Status != string(domain.ActivationRunning) {
			return fmt.Errorf("activation %s is %s, not running (send a dm to reach its worker): %w", id, act.Status, domain.ErrConflict)
		}
		row := steerRow{WorkerID: act.WorkerID, ActivationID: id, Sender: sender, Body: body,
			Label: WritingLabel(tx.Statement.Context).Encode(), SentAt: s.Now()}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		for _, ev := range logs {
			if _, err := s.appendTx(tx, ev, AppendOptions{}); err != nil {
				return err
			}
		}
		out = row.toDomain()
		return nil
	})
	if err != nil {
		return domain.SteerMessage{}, fmt.Errorf("message activation %s: %w", id, err)
	}
	return out, nil
}

// TakeSteering hands activation every message sent to its worker's runs
// that no run has taken yet, oldest first, and raises the activation's
// label by theirs, in one transaction: a message is taken once, and never
// read without its label.
func (s *Store) TakeSteering(ctx context.Context, worker, activation string) ([]domain.SteerMessage, error) {
	var out []domain.SteerMessage
	err := s.write(ctx, func(tx *gorm.DB) error {
		var rows []steerRow
		if err := tx.Where("worker_id = ? AND taken_by = ''", worker).Order("id").Find(&rows).Error; err != nil || len(rows) == 0 {
			return err
		}
		var act activationRow
		if err := tx.Select("id", "worker_id", "label").Where("id = ?", activation).Take(&act).Error; err != nil {
			return notFoundOr(err, "activation", activation)
		}
		if act.WorkerID != worker {
			return domain.Forbidden("activation %s is not a run of %s", activation, worker)
		}
		label, err := domain.ParseLabel(act.Label)
		if err != nil {
			return fmt.Errorf("label of %s: %w", activation, err)
		}
		now := s.Now()
		ids := make([]int64, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
			r.TakenBy, r.TakenAt = activation, &now
			out = append(out, r.toDomain())
			label = label.Join(out[i].Label)
		}
		if err := tx.Model(&steerRow{}).Where("id IN ?", ids).Updates(map[string]any{"taken_by": activation, "taken_at": &now}).Error; err != nil {
			return err
		}
		return tx.Model(&activationRow{}).Where("id = ?", activation).Update("label", label.Encode()).Error
	})
	if err != nil {
		return nil, fmt.Errorf("take the messages for %s: %w", activation, err)
	}
	return out, nil
}

// returnSteeringTx hands back the messages a run took when its agent
// never started or died: its triggers run again, and so are its messages
// read again, by the run that takes them next. Nothing is lost.
func returnSteeringTx(tx *gorm.DB, activation string) error {
	return tx.Model(&steerRow{}).Where("taken_by = ?", activation).Updates(map[string]any{"taken_by": "", "taken_at": nil}).Error
}

// unreadSteeringTx wakes the worker of a run that ended without reading
// messages sent to it: a notice in its inbox starts the next run, whose
// prompt they open (TakeSteering). The notice does not quote them; they
// reach the run with their own labels.
func (s *Store) unreadSteeringTx(tx *gorm.DB, a domain.Activation) error {
	var n int64
	if err := tx.Model(&steerRow{}).Where("activation_id = ? AND taken_by = ''", a.ID).Count(&n).Error; err != nil || n == 0 {
		return err
	}
	var worker string
	if err := tx.Model(&activationRow{}).Where("id = ?", a.ID).Pluck("worker_id", &worker).Error; err != nil {
		return err
	}
	_, err := s.notifyTx(tx, worker, domain.Message{Subject: "Messages for your last run",
		Body: fmt.Sprintf("%d message(s) sent to your run %s arrived after it last looked; they open this run's prompt.", n, a.ID)}, a.ID)
	return err
}

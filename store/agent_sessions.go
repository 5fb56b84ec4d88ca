package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/helixml/helix-org/domain"
)

// agentSessionRow is one worker's session on one runtime.
type agentSessionRow struct {
	WorkerID  string `gorm:"primaryKey"`
	Runtime   string `gorm:"primaryKey"`
	SessionID string `gorm:"not null"`
	StartedAt time.Time
	UpdatedAt time.Time
	Bytes     int64
	Runs      int
	History   []byte
	Label     string `gorm:"not null;default:''"`
}

func (agentSessionRow) TableName() string { return "agent_sessions" }

// AgentSession returns the session a worker's runs on runtime continue.
func (s *Store) AgentSession(ctx context.Context, worker, runtime string) (domain.AgentSession, error) {
	var r agentSessionRow
	err := s.db.WithContext(ctx).Where("worker_id = ? AND runtime = ?", worker, runtime).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return domain.AgentSession{}, fmt.Errorf("agent session of %s on %s: %w", worker, runtime, domain.ErrNotFound)
	}
	if err != nil {
		return domain.AgentSession{}, fmt.Errorf("agent session of %s on %s: %w", worker, runtime, err)
	}
	return domain.AgentSession{WorkerID: r.WorkerID, Runtime: r.Runtime, SessionID: r.SessionID, StartedAt: r.StartedAt,
		UpdatedAt: r.UpdatedAt, Bytes: r.Bytes, Runs: r.Runs, History: r.History, Label: storedLabel(r.Label)}, nil
}

// PutAgentSession records the session a worker's next run on its runtime
// continues, replacing the one before.
func (s *Store) PutAgentSession(ctx context.Context, a domain.AgentSession) error {
	row := agentSessionRow{WorkerID: a.WorkerID, Runtime: a.Runtime, SessionID: a.SessionID, StartedAt: a.StartedAt,
		UpdatedAt: a.UpdatedAt, Bytes: a.Bytes, Runs: a.Runs, History: a.History, Label: a.Label.Encode()}
	err := s.write(ctx, func(tx *gorm.DB) error {
		return tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error
	})
	if err != nil {
		return fmt.Errorf("put agent session of %s on %s: %w", a.WorkerID, a.Runtime, err)
	}
	return nil
}

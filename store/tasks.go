package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Task statuses, as MCP's tasks name them.
const (
	TaskWorking   = "working"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
)

// taskRow is one task-augmented tools/call: who asked, for what, and —
// once it ends — the answer, kept so a client can fetch it after a
// restart. A task the process was running when it stopped is failed at
// the next start (FailInterruptedTasks), never left working. The server
// running a task's call holds its lease (RenewTaskLease), so on a
// database several servers share, another server knows a working task
// whose lease lapsed has lost its call.
type taskRow struct {
	ID        string `gorm:"primaryKey"`
	WorkerID  string `gorm:"not null;index"`
	Tool      string `gorm:"not null"`
	Status    string `gorm:"not null"`
	Message   string
	Result    []byte // the JSON-RPC result of the call, once it ended
	CreatedAt time.Time
	UpdatedAt time.Time
	ExpiresAt time.Time `gorm:"not null;index"`
	// LeaseUntil is when a working task's call is presumed lost unless
	// its server renews the lease; nil on tasks from before leases.
	LeaseUntil *time.Time
}

func (taskRow) TableName() string { return "tasks" }

// Task is a task as the MCP endpoint reports it.
type Task struct {
	ID, Worker, Tool, Status, Message string
	Result                            []byte
	CreatedAt, UpdatedAt, ExpiresAt   time.Time
}

// TaskLease is how long a working task's call is presumed alive without
// its server renewing the lease: servers renew every third of it.
const TaskLease = 30 * time.Second

// lostTask is the end of a task whose call no server runs any more.
const lostTask = "the server running the call stopped; call again"

// CreateTask records a working task for worker's call of tool, kept for
// ttl after it is created, its lease held for TaskLease. Expired tasks
// are removed in the same transaction.
func (s *Store) CreateTask(ctx context.Context, worker, tool string, ttl time.Duration) (Task, error) {
	now := s.Now()
	lease := now.Add(TaskLease)
	row := taskRow{ID: "task-" + domain.RandomSlug(16), WorkerID: worker, Tool: tool, Status: TaskWorking,
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(ttl), LeaseUntil: &lease}
	if err := s.putKept(ctx, &taskRow{}, &row, now); err != nil {
		return Task{}, fmt.Errorf("create task for %s: %w", tool, err)
	}
	return row.toTask(), nil
}

// EndTask moves a working task to status with the call's result. A task
// already ended (cancelled first) keeps its end: the first end wins.
func (s *Store) EndTask(ctx context.Context, id, status, message string, result []byte) (Task, error) {
	var row taskRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := tx.Model(&taskRow{}).Where("id = ? AND status = ?", id, TaskWorking).
			Updates(map[string]any{"status": status, "message": message, "result": result, "updated_at": s.Now()}).Error; err != nil {
			return err
		}
		return tx.Where("id = ?", id).Take(&row).Error
	})
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Task{}, domain.NotFound("task", id)
	}
	if err != nil {
		return Task{}, fmt.Errorf("end task %s: %w", id, err)
	}
	return row.toTask(), nil
}

// RenewTaskLease extends a working task's lease to TaskLease from now. It
// reports false when the task is no longer working — cancelled, perhaps
// through another server — so the server running its call stops it.
func (s *Store) RenewTaskLease(ctx context.Context, id string) (bool, error) {
	until := s.Now().Add(TaskLease)
	var n int64
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&taskRow{}).Where("id = ? AND status = ?", id, TaskWorking).Update("lease_until", &until)
		n = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return false, fmt.Errorf("renew the lease of task %s: %w", id, err)
	}
	return n == 1, nil
}

// GetTask returns one of worker's tasks; another worker's is not found. A
// working task whose lease lapsed is failed as it is read (failIfLost).
func (s *Store) GetTask(ctx context.Context, worker, id string) (Task, error) {
	var row taskRow
	if err := s.getKept(ctx, &row, "task", worker, id); err != nil {
		return Task{}, err
	}
	return s.failIfLost(ctx, row)
}

// failIfLost fails a working task whose lease lapsed, as it is read: no
// server runs its call any more, and its client would otherwise wait
// forever.
func (s *Store) failIfLost(ctx context.Context, row taskRow) (Task, error) {
	if row.Status == TaskWorking && row.LeaseUntil != nil && row.LeaseUntil.Before(s.Now()) {
		return s.EndTask(ctx, row.ID, TaskFailed, lostTask, nil)
	}
	return row.toTask(), nil
}

// ListTasks returns worker's tasks, newest first; a working one whose
// lease lapsed is failed as it is read (failIfLost).
func (s *Store) ListTasks(ctx context.Context, worker string) ([]Task, error) {
	var rows []taskRow
	if err := s.db.WithContext(ctx).Where("worker_id = ? AND expires_at > ?", worker, s.Now()).Order("created_at DESC, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list tasks of %s: %w", worker, err)
	}
	out := make([]Task, len(rows))
	for i, r := range rows {
		var err error
		if out[i], err = s.failIfLost(ctx, r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FailInterruptedTasks fails the tasks a stopped process left working:
// called at start, so a client polling one learns it ended rather than
// waiting forever. On a database of its own no call can still be running,
// so that is every working task; on one several servers share (Shared)
// it is those whose lease lapsed — the others' calls run on other servers.
func (s *Store) FailInterruptedTasks(ctx context.Context) (int64, error) {
	interrupted := func(q *gorm.DB) *gorm.DB {
		q = q.Model(&taskRow{}).Where("status = ?", TaskWorking)
		if s.Shared() {
			q = q.Where("lease_until IS NULL OR lease_until < ?", s.Now())
		}
		return q
	}
	// A read first: a start with no task working (nearly every one)
	// takes no write lock and commits nothing.
	var n int64
	if err := interrupted(s.read(ctx)).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("fail interrupted tasks: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := interrupted(tx).Updates(map[string]any{"status": TaskFailed, "message": "the server restarted while the call ran; call again", "updated_at": s.Now()})
		n = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return 0, fmt.Errorf("fail interrupted tasks: %w", err)
	}
	return n, nil
}

func (r taskRow) toTask() Task {
	return Task{ID: r.ID, Worker: r.WorkerID, Tool: r.Tool, Status: r.Status, Message: r.Message, Result: r.Result,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, ExpiresAt: r.ExpiresAt}
}

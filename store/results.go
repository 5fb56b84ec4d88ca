package store

import (
	"context"
	"fmt"
	"time"

	"github.com/helixml/helix-org/domain"
)

// ResultRefPrefix starts every stored tool result's id.
const ResultRefPrefix = "res-"

// resultRow keeps a tool result too large to send inline until the worker
// that called the tool reads it, or it expires. It is kept in the
// database so a restart between the call and the read loses nothing.
type resultRow struct {
	ID        string `gorm:"primaryKey"`
	WorkerID  string `gorm:"not null;index"`
	Tool      string `gorm:"not null"`
	MIMEType  string `gorm:"not null"`
	Content   []byte
	CreatedAt time.Time
	ExpiresAt time.Time `gorm:"not null;index"`
}

func (resultRow) TableName() string { return "tool_results" }

// ToolResult is a stored tool result.
type ToolResult struct {
	ID, Worker, Tool, MIMEType string
	Content                    []byte
	CreatedAt, ExpiresAt       time.Time
}

// PutResult keeps content for worker to read for ttl and returns its id.
// Expired results are removed in the same transaction, so the table holds
// only what can still be read.
func (s *Store) PutResult(ctx context.Context, worker, tool, mime string, content []byte, ttl time.Duration) (ToolResult, error) {
	now := s.Now()
	row := resultRow{ID: ResultRefPrefix + domain.RandomSlug(16), WorkerID: worker, Tool: tool, MIMEType: mime,
		Content: content, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	if err := s.putKept(ctx, &resultRow{}, &row, now); err != nil {
		return ToolResult{}, fmt.Errorf("keep result of %s: %w", tool, err)
	}
	return row.toResult(), nil
}

// GetResult returns a result kept for worker. Another worker's result, and
// an expired one, are not found: their existence is not disclosed.
func (s *Store) GetResult(ctx context.Context, worker, id string) (ToolResult, error) {
	var row resultRow
	if err := s.getKept(ctx, &row, "result", worker, id); err != nil {
		return ToolResult{}, err
	}
	return row.toResult(), nil
}

func (r resultRow) toResult() ToolResult {
	return ToolResult{ID: r.ID, Worker: r.WorkerID, Tool: r.Tool, MIMEType: r.MIMEType, Content: r.Content,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
}

package domain

import (
	"strings"
	"time"
)

// MaxRoleContent bounds a role's markdown so one bad call cannot bloat every prompt.
const MaxRoleContent = 256 << 10

// Role is a job description in markdown. Behaviour lives here, not in Go code.
type Role struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Validate checks a role before it is stored.
func (r Role) Validate() error {
	if r.ID != "" {
		if err := ValidateID("id", PrefixRole, r.ID); err != nil {
			return err
		}
	}
	if strings.TrimSpace(r.Title) == "" {
		return Required("title")
	}
	if err := checkLen("title", r.Title, MaxName); err != nil {
		return err
	}
	if len(r.Content) > MaxRoleContent {
		return Invalid("content", "is %d bytes; the limit is %d", len(r.Content), MaxRoleContent)
	}
	return nil
}

// Position is a seat in the org chart that a Worker is hired into.
type Position struct {
	ID        string    `json:"id"`
	RoleID    string    `json:"roleId"`
	Title     string    `json:"title"`
	ReportsTo string    `json:"reportsTo,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// Validate checks a position before it is stored.
func (p Position) Validate() error {
	if p.ID != "" {
		if err := ValidateID("id", PrefixPosition, p.ID); err != nil {
			return err
		}
	}
	if p.RoleID == "" {
		return Required("role")
	}
	if strings.TrimSpace(p.Title) == "" {
		return Required("title")
	}
	if err := checkLen("title", p.Title, MaxName); err != nil {
		return err
	}
	if p.ReportsTo != "" && p.ReportsTo == p.ID {
		return Invalid("reportsTo", "a position cannot report to itself")
	}
	return nil
}

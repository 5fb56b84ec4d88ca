package store_test

import (
	"testing"

	"github.com/helixml/helix-org/store"
)

func TestNumberedPlaceholders(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, q, want string }{
		{"none", "SELECT 1", "SELECT 1"},
		{"in order", "SELECT a FROM t WHERE b = ? AND c IN (?, ?)", "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)"},
		{"in a string", "INSERT INTO t (a, b) VALUES (?, '?')", "INSERT INTO t (a, b) VALUES ($1, '?')"},
		{"in a doubled quote", "SELECT 'it''s ?' WHERE a = ?", "SELECT 'it''s ?' WHERE a = $1"},
		{"in a name", `SELECT "a?" FROM t WHERE b = ?`, `SELECT "a?" FROM t WHERE b = $1`},
		{"ten and more", "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := store.NumberedPlaceholders(tc.q); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

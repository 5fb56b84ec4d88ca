package server_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
)

// TestArgumentErrors: arguments a tool's schema refuses are answered, over
// a real client, with a tool error naming each field and what it takes,
// as handlers' own errors do, not the validator's JSON pointers.
func TestArgumentErrors(t *testing.T) {
	tests := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"a string for an integer", "retry_delivery", map[string]any{"delivery": "abc"}, `delivery: must be an integer, got string "abc"`},
		{"a fraction for an integer", "retry_delivery", map[string]any{"delivery": 1.5}, "delivery: must be an integer, got number 1.5"},
		{"a long string is cut", "retry_delivery", map[string]any{"delivery": strings.Repeat("x", 50)},
			`delivery: must be an integer, got string "` + strings.Repeat("x", 40) + `…"`},
		{"an object for a string", "get_role", map[string]any{"id": map[string]any{"a": 1}}, "id: must be a string, got an object"},
		{"null for a string", "get_role", map[string]any{"id": nil}, "id: must be a string, got null"},
		{"a string for a boolean", "cancel_activation", map[string]any{"activation": "a-x", "drop": "yes"}, `drop: must be a boolean, got string "yes"`},
		{"a string for a list", "publish", map[string]any{"stream": "s-x", "body": "x", "to": "w-a"}, `to: must be an array of strings, got string "w-a"`},
		{"a list item", "publish", map[string]any{"stream": "s-x", "body": "x", "to": []any{"w-a", 1}}, "to[1]: must be a string, got integer 1"},
		{"a field of a list item", "publish", map[string]any{"stream": "s-x", "body": "x", "attachments": []any{map[string]any{"name": 5}}},
			"attachments[0].name: must be a string, got integer 5"},
		{"a value not in the enum", "hire_worker", map[string]any{"position": "p-x", "kind": "robot", "name": "R2"}, `kind: must be one of "human", "ai"; got "robot"`},
		{"a number for an enum", "hire_worker", map[string]any{"position": "p-x", "kind": 5, "name": "R2"}, `kind: must be one of "human", "ai"; got 5`},
		{"a missing field", "get_role", map[string]any{}, "id: is required: a string"},
		{"a missing enum lists its values", "decide_approval", map[string]any{"id": "ap-x"}, `decision: is required: one of "approve", "deny"`},
		{"an unknown argument", "get_role", map[string]any{"id": "r-x", "colour": "red"}, `colour: unknown argument (valid: "id")`},
		{"an argument to a tool that takes none", "list_roles", map[string]any{"verbose": true}, "verbose: unknown argument; list_roles takes none"},
		{"every problem at once", "hire_worker", map[string]any{"kind": "robot", "name": 7},
			`position: is required: a string; kind: must be one of "human", "ai"; got "robot"; name: must be a string, got integer 7`},
	}
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := owner.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			if err != nil {
				t.Fatalf("protocol error %v, want a tool error", err)
			}
			if got := servertest.Text(res); !res.IsError || got != tt.want {
				t.Errorf("%s answered (error %t)\n%s\nwant\n%s", tt.tool, res.IsError, got, tt.want)
			}
		})
	}
}

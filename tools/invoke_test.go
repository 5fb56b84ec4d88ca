package tools

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

// TestInvoke holds Invoke to what the same call over MCP does: the same
// result or the same error text, and a refusal leaves the store as it was.
func TestInvoke(t *testing.T) {
	tests := []struct {
		name    string
		caller  string
		grant   []string
		tool    string
		args    string
		wantErr string
		wantIs  error
	}{
		{name: "granted tool runs its handler", caller: "w-maya", grant: []string{"create_role"},
			tool: "create_role", args: `{"id":"r-new","title":"New","content":"x"}`},
		{name: "known tool without a grant", caller: "w-maya", grant: []string{"list_roles"},
			tool: "create_role", args: `{"title":"Sneaky"}`,
			wantErr: `missing grant: worker w-maya does not hold grant "create_role"; a worker with grant_tool can grant it`, wantIs: domain.ErrForbidden},
		{name: "missing required argument", caller: "w-maya", grant: []string{"publish"},
			tool: "publish", args: `{"stream":"s-inbox"}`,
			wantErr: `body: is required: a string`, wantIs: domain.ErrInvalid},
		{name: "value outside an enum", caller: "w-maya", grant: []string{"list_workers"},
			tool: "list_workers", args: `{"kind":"robot"}`, wantIs: domain.ErrInvalid},
		{name: "handler error", caller: "w-maya", grant: []string{"get_role"},
			tool: "get_role", args: `{"id":"r-nope"}`, wantErr: `role "r-nope": not found`, wantIs: domain.ErrNotFound},
		{name: "no arguments at all", caller: "w-maya", grant: []string{"list_roles"}, tool: "list_roles"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.grant(t, tt.caller, tt.grant...)
			granted, err := f.env.Store.LiveTools(t.Context(), tt.caller)
			if err != nil {
				t.Fatal(err)
			}
			env := f.as(tt.caller)
			viaMCP := mcpCall(t, env, granted, tt.tool, tt.args)
			before := lastSeq(t, f.env.Store)

			// Run Invoke on a second fixture in the same state, so a
			// successful MCP call above does not change what Invoke sees.
			g := newFixture(t)
			g.grant(t, tt.caller, tt.grant...)
			out, err := Invoke(t.Context(), g.as(tt.caller), granted, tt.tool, json.RawMessage(tt.args))
			if tt.wantIs != nil {
				if err == nil {
					t.Fatalf("Invoke succeeded with %+v; want an error", out)
				}
				if !errors.Is(err, tt.wantIs) {
					t.Errorf("error %q is not %v", err, tt.wantIs)
				}
				if tt.wantErr != "" && err.Error() != tt.wantErr {
					t.Errorf("error = %q, want %q", err, tt.wantErr)
				}
				if err.Error() != viaMCP.errText {
					t.Errorf("Invoke's error %q differs from the MCP tool error %q", err, viaMCP.errText)
				}
				if after := lastSeq(t, g.env.Store); after != before {
					t.Errorf("refused call changed the store: last seq %d → %d", before, after)
				}
				return
			}
			if err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			got, _ := json.Marshal(out)
			if diff := cmp.Diff(normalise(t, viaMCP.output), normalise(t, got)); diff != "" {
				t.Errorf("Invoke's output differs from MCP's (-mcp +invoke):\n%s", diff)
			}
		})
	}
}

type mcpResult struct {
	output  json.RawMessage
	errText string
}

// mcpCall makes the call through a real MCP server and client in memory.
func mcpCall(t *testing.T, env *Env, granted []string, name, args string) mcpResult {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := NewServer(env, granted).Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: name}
	if args != "" {
		params.Arguments = json.RawMessage(args)
	}
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatalf("%s over MCP: %v", name, err)
	}
	if res.IsError {
		return mcpResult{errText: res.Content[0].(*mcp.TextContent).Text}
	}
	out, _ := json.Marshal(res.StructuredContent)
	return mcpResult{output: out}
}

// normalise decodes JSON so two outputs compare by value, not by bytes.
func normalise(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

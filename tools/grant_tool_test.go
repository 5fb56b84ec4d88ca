package tools

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

func TestGrantTool(t *testing.T) {
	in30m := t0.Add(30 * time.Minute)
	tomorrow := t0.Add(24 * time.Hour)
	runTable(t, "grant_tool", []toolCase[domain.Grant]{
		{
			name: "permanent grant",
			args: map[string]any{"worker": "w-maya", "tool": "publish"},
			want: domain.Grant{WorkerID: "w-maya", Tool: "publish", GrantedBy: "w-owner", CreatedAt: t0},
			check: func(t *testing.T, f fixture, _ domain.Grant) {
				assertLiveTools(t, f, "w-maya", "publish")
				c := lastOrgChange(t, f.env.Store)
				after, _ := c.After.(map[string]any)
				if c.Action != "grant_tool" || c.Actor != "w-owner" || c.Target != "w-maya" || after["tool"] != "publish" || c.Before != nil {
					t.Errorf("s-org change = %+v, want grant_tool publish to w-maya by w-owner with no before", c)
				}
			},
		},
		{
			name: "calls wait for approval",
			args: map[string]any{"worker": "w-maya", "tool": "dismiss_worker", "approval": "required"},
			want: domain.Grant{WorkerID: "w-maya", Tool: "dismiss_worker", GrantedBy: "w-owner", CreatedAt: t0, Approval: domain.ApprovalRequired},
		},
		{
			name: "approval none is a plain grant",
			args: map[string]any{"worker": "w-maya", "tool": "publish", "approval": "none"},
			want: domain.Grant{WorkerID: "w-maya", Tool: "publish", GrantedBy: "w-owner", CreatedAt: t0},
		},
		{
			name:    "unknown approval",
			args:    map[string]any{"worker": "w-maya", "tool": "publish", "approval": "maybe"},
			wantErr: []string{"approval", `"required"`, `"none"`},
		},
		{
			name: "expiresIn is counted from now",
			args: map[string]any{"worker": "w-maya", "tool": "publish", "expiresIn": "30m"},
			want: domain.Grant{WorkerID: "w-maya", Tool: "publish", GrantedBy: "w-owner", CreatedAt: t0, ExpiresAt: &in30m},
		},
		{
			name: "expiresAt as an RFC 3339 time",
			args: map[string]any{"worker": "w-maya", "tool": "publish", "expiresAt": "2026-03-05T10:00:00Z"},
			want: domain.Grant{WorkerID: "w-maya", Tool: "publish", GrantedBy: "w-owner", CreatedAt: t0, ExpiresAt: &tomorrow},
		},
		{
			name: "granting again replaces the expiry",
			setup: func(t *testing.T, f fixture) {
				mustCall[any](t, f.env, "grant_tool", map[string]any{"worker": "w-maya", "tool": "publish", "expiresIn": "1m"})
			},
			args: map[string]any{"worker": "w-maya", "tool": "publish"},
			want: domain.Grant{WorkerID: "w-maya", Tool: "publish", GrantedBy: "w-owner", CreatedAt: t0},
			check: func(t *testing.T, f fixture, _ domain.Grant) {
				if c := lastOrgChange(t, f.env.Store); c.Before == nil {
					t.Errorf("s-org change = %+v, want the replaced grant as before", c)
				}
			},
		},
		{
			name:   "a worker may pass on a tool it holds to a worker below it",
			setup:  func(t *testing.T, f fixture) { withLead(t, f); f.grant(t, "w-lead", "grant_tool", "publish") },
			caller: "w-lead",
			args:   map[string]any{"worker": "w-desk", "tool": "publish"},
			want:   domain.Grant{WorkerID: "w-desk", Tool: "publish", GrantedBy: "w-lead", CreatedAt: t0},
		},
		{
			name: "what a worker passes on ends no later than its own grant",
			setup: func(t *testing.T, f fixture) {
				withLead(t, f)
				f.grant(t, "w-lead", "grant_tool")
				mustCall[any](t, f.env, "grant_tool", map[string]any{"worker": "w-lead", "tool": "publish", "expiresIn": "30m"})
			},
			caller: "w-lead",
			args:   map[string]any{"worker": "w-desk", "tool": "publish", "expiresIn": "24h"},
			want:   domain.Grant{WorkerID: "w-desk", Tool: "publish", GrantedBy: "w-lead", CreatedAt: t0, ExpiresAt: &in30m},
		},
		{
			name: "a tool the granter may use only with approval is passed on waiting for approval, whatever is asked",
			setup: func(t *testing.T, f fixture) {
				withLead(t, f)
				f.grant(t, "w-lead", "grant_tool")
				mustCall[any](t, f.env, "grant_tool", map[string]any{"worker": "w-lead", "tool": "publish", "approval": "required"})
			},
			caller: "w-lead",
			args:   map[string]any{"worker": "w-desk", "tool": "publish", "approval": "none"},
			want:   domain.Grant{WorkerID: "w-desk", Tool: "publish", GrantedBy: "w-lead", CreatedAt: t0, Approval: domain.ApprovalRequired},
		},
		{
			name:    "cannot grant to a peer",
			setup:   func(t *testing.T, f fixture) { f.grant(t, "w-maya", "grant_tool", "publish") },
			caller:  "w-maya",
			args:    map[string]any{"worker": "w-echo", "tool": "publish"},
			wantErr: []string{"w-maya may only manage workers below p-support; w-echo (p-support) is not"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "cannot grant to the owner",
			setup:   func(t *testing.T, f fixture) { withLead(t, f); f.grant(t, "w-lead", "grant_tool", "publish") },
			caller:  "w-lead",
			args:    map[string]any{"worker": "w-owner", "tool": "publish", "expiresIn": "1s"},
			wantErr: []string{"w-lead may only manage workers below p-lead; w-owner is not"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "nobody grants to itself, the owner included",
			args:    map[string]any{"worker": "w-owner", "tool": "publish", "expiresIn": "1s"},
			wantErr: []string{"w-owner cannot grant to itself"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "cannot grant a tool you do not hold",
			setup:   func(t *testing.T, f fixture) { withLead(t, f); f.grant(t, "w-lead", "grant_tool") },
			caller:  "w-lead",
			args:    map[string]any{"worker": "w-desk", "tool": "dismiss_worker"},
			wantErr: []string{`tool: you cannot grant "dismiss_worker" because you do not hold it`},
		},
		{
			name: "cannot grant a tool whose grant has expired",
			setup: func(t *testing.T, f fixture) {
				withLead(t, f)
				f.grant(t, "w-lead", "grant_tool")
				mustCall[any](t, f.env, "grant_tool", map[string]any{"worker": "w-lead", "tool": "publish", "expiresIn": "1m"})
				f.clock.Advance(2 * time.Minute)
			},
			caller:  "w-lead",
			args:    map[string]any{"worker": "w-desk", "tool": "publish"},
			wantErr: []string{`tool: you cannot grant "publish" because you do not hold it`},
		},
		{
			name:    "unknown tool lists the valid tools",
			args:    map[string]any{"worker": "w-maya", "tool": "fly"},
			wantErr: []string{`tool: unknown tool "fly" (valid: create_role, update_role, list_roles`},
		},
		{
			name:    "missing worker",
			args:    map[string]any{"tool": "publish"},
			wantErr: []string{"worker: is required"},
		},
		{
			name:    "missing tool",
			args:    map[string]any{"worker": "w-maya"},
			wantErr: []string{"tool: is required"},
		},
		{
			name:    "unknown worker",
			args:    map[string]any{"worker": "w-nope", "tool": "publish"},
			wantErr: []string{`worker "w-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name: "dismissed worker",
			setup: func(t *testing.T, f fixture) {
				mustCall[any](t, f.env, "dismiss_worker", map[string]any{"id": "w-maya"})
			},
			args:    map[string]any{"worker": "w-maya", "tool": "publish"},
			wantErr: []string{`worker "w-maya" is dismissed`},
			wantIs:  domain.ErrConflict,
		},
		{
			name:    "expiresAt and expiresIn together",
			args:    map[string]any{"worker": "w-maya", "tool": "publish", "expiresAt": "2026-03-05T10:00:00Z", "expiresIn": "1h"},
			wantErr: []string{"expiresAt: give expiresAt or expiresIn, not both"},
		},
		{
			name:    "expiresAt not RFC 3339",
			args:    map[string]any{"worker": "w-maya", "tool": "publish", "expiresAt": "tomorrow"},
			wantErr: []string{`expiresAt: "tomorrow" is not an RFC 3339 time`},
		},
		{
			name:    "expiresAt in the past",
			args:    map[string]any{"worker": "w-maya", "tool": "publish", "expiresAt": "2026-03-04T09:59:59Z"},
			wantErr: []string{"expiresAt: 2026-03-04T09:59:59Z is in the past"},
		},
		{
			name:    "expiresIn not a duration",
			args:    map[string]any{"worker": "w-maya", "tool": "publish", "expiresIn": "soon"},
			wantErr: []string{`expiresIn: "soon" is not a positive duration`},
		},
		{
			name:    "expiresIn negative",
			args:    map[string]any{"worker": "w-maya", "tool": "publish", "expiresIn": "-5m"},
			wantErr: []string{`expiresIn: "-5m" is not a positive duration`},
		},
		{
			name:    "expiresIn zero",
			args:    map[string]any{"worker": "w-maya", "tool": "publish", "expiresIn": "0s"},
			wantErr: []string{`expiresIn: "0s" is not a positive duration`},
		},
	})
}

// assertLiveTools compares a worker's live tools with want.
func assertLiveTools(t *testing.T, f fixture, worker string, want ...string) {
	t.Helper()
	got, err := f.env.Store.LiveTools(t.Context(), worker)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("live tools of %s (-want +got):\n%s", worker, diff)
	}
}

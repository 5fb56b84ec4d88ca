package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// TestAudit: calls made over MCP to a real server — one its fast path
// answers, one the go-sdk answers (a progress token sends it there) — one
// made as the web UI makes it (tools.Invoke) and one the approval gate
// holds are listed by `helix-org audit`, newest first, filtered by worker,
// tool and time, as a table, JSON or CSV, with a secret argument shown
// only as [redacted] and <, > and & as themselves.
func TestAudit(t *testing.T) {
	db := bootstrapped(t)
	st := openStore(t, db)
	ctx := t.Context()
	// The org is set up through the store, so the only calls are the test's.
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-news", Name: "news", Transport: domain.Transport{Kind: domain.TransportLocal}}))
	must(st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-staff", RoleID: store.OwnerRole, Title: "Staff"}))
	must(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-maya", Kind: domain.WorkerHuman, PositionID: "p-staff", Name: "Maya"}, nil))
	must(st.GrantTool(ctx, store.OwnerWorker, domain.Grant{WorkerID: "w-maya", Tool: "publish", Approval: domain.ApprovalRequired}))
	h := servertest.StartWith(t, st, server.Config{})
	owner := h.Owner(t)

	const secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ="
	servertest.Call[any](t, owner, "create_stream", map[string]any{"id": "s-hooks", "name": "hooks",
		"transport": map[string]any{"kind": "webhook", "config": map[string]any{"secret": secret}}})
	if res, err := owner.CallTool(ctx, &mcp.CallToolParams{Name: "get_role", Arguments: map[string]any{"id": "r-none"},
		Meta: mcp.Meta{"progressToken": "p"}}); err != nil || !res.IsError {
		t.Fatalf("get_role r-none through the go-sdk: %+v %v, want a tool error", res, err)
	}
	granted, err := st.LiveTools(ctx, store.OwnerWorker)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tools.Invoke(ctx, &tools.Env{Store: st, Caller: store.OwnerWorker, Known: tools.Names()}, granted, "list_roles", nil); err != nil {
		t.Fatal(err)
	}
	maya := h.Connect(t, "w-maya", servertest.Token(t, st, "w-maya"))
	if res, err := maya.CallTool(ctx, &mcp.CallToolParams{Name: "publish", Arguments: map[string]any{"stream": "s-news", "body": "may I <ship> & go?"}}); err != nil ||
		!strings.Contains(servertest.Text(res), "pending approval") {
		t.Fatalf("maya's publish: %v, want it held", err)
	}
	if err := st.FlushCalls(ctx); err != nil {
		t.Fatal(err)
	}

	t.Run("json", func(t *testing.T) {
		out := mustRun(t, "audit", "--db", db, "-o", "json")
		if strings.Contains(out, secret) {
			t.Fatalf("the secret is in the audit:\n%s", out)
		}
		var listed struct{ Calls []domain.ToolCall }
		err := json.Unmarshal([]byte(out), &listed)
		calls := listed.Calls
		if err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		var got []string
		for _, c := range calls {
			got = append(got, c.Tool+" "+string(c.Status)+" "+c.Worker)
		}
		want := []string{"publish pending approval w-maya", "list_roles ok w-owner", "get_role error w-owner", "create_stream ok w-owner"}
		if strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Fatalf("calls = %q, want %q", got, want)
		}
		var args bytes.Buffer
		json.Compact(&args, calls[3].Arguments)
		wantAll(t, "create_stream's arguments", args.String(), `"secret":"[redacted]"`, `"name":"hooks"`)
		wantAll(t, "get_role's error", calls[2].Error, `role "r-none"`)
		if !strings.HasPrefix(calls[0].Approval, "ap-") {
			t.Errorf("the held publish names no approval: %+v", calls[0])
		}
	})

	tests := []struct {
		name    string
		args    []string
		want    []string
		notWant []string
		wantErr string
	}{
		{name: "table", args: nil, want: []string{"AT", "WORKER", "STATUS", "ARGUMENTS", "create_stream", "[redacted]", "get_role", "error"}, notWant: []string{secret}},
		{name: "csv", args: []string{"-o", "csv"}, want: []string{"AT,WORKER,RUN,TOOL,STATUS", `"{""id"":""s-hooks""`, "[redacted]"}, notWant: []string{secret}},
		// Arguments read as sent, not as the client's JSON encoder escaped them.
		{name: "readable arguments", args: []string{"--tool", "publish"}, want: []string{`may I <ship> & go?`}, notWant: []string{`\u003c`}},
		{name: "readable arguments in JSON", args: []string{"--tool", "publish", "-o", "json"}, want: []string{`may I <ship> & go?`}, notWant: []string{`\u003c`}},
		{name: "by tool", args: []string{"--tool", "get_role"}, want: []string{"get_role"}, notWant: []string{"create_stream", "list_roles"}},
		{name: "by worker", args: []string{"--worker", "w-owner", "--tool", "list_roles"}, want: []string{"list_roles"}, notWant: []string{"get_role"}},
		{name: "no reads", args: []string{"--no-reads", "-o", "csv"}, want: []string{"publish", "get_role", "create_stream"}, notWant: []string{"list_roles"}},
		{name: "an unknown worker", args: []string{"--worker", "w-nobody"}, wantErr: `--worker: worker "w-nobody": not found`},
		{name: "limit", args: []string{"--limit", "1", "-o", "csv"}, want: []string{"publish"}, notWant: []string{"get_role", "create_stream"}},
		{name: "since a duration", args: []string{"--since", "1h"}, want: []string{"create_stream"}},
		{name: "since a time", args: []string{"--since", "2999-01-01T00:00:00Z"}, want: []string{"No tool calls recorded."}},
		{name: "a bad since", args: []string{"--since", "yesterday"}, wantErr: `--since: want a duration back from now (24h, 90m) or an RFC 3339 time`},
		{name: "a bad format", args: []string{"-o", "xml"}, wantErr: "valid: json, yaml, table, csv"},
		{name: "a bad limit", args: []string{"--limit", "-1"}, wantErr: "--limit: must be 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := run(t, "", append([]string{"audit", "--db", db}, tt.args...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantAll(t, "output", out, tt.want...)
			for _, n := range tt.notWant {
				if strings.Contains(out, n) {
					t.Errorf("output holds %q:\n%s", n, out)
				}
			}
		})
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// TestAudit: calls made through the one call path are listed by
// `helix-org audit`, newest first, filtered by worker, tool and time, as
// a table, JSON or CSV, with a secret argument shown only as [redacted].
func TestAudit(t *testing.T) {
	db := bootstrapped(t)
	st := openStore(t, db)
	ctx := t.Context()
	granted, err := st.LiveTools(ctx, store.OwnerWorker)
	if err != nil {
		t.Fatal(err)
	}
	env := &tools.Env{Store: st, Caller: store.OwnerWorker, Known: tools.Names()}
	const secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ="
	for _, c := range []struct{ tool, args string }{
		{"create_stream", `{"id":"s-hooks","name":"hooks","transport":{"kind":"webhook","config":{"secret":"` + secret + `"}}}`},
		{"get_role", `{"id":"r-none"}`},
		{"list_roles", `{}`},
	} {
		tools.Invoke(ctx, env, granted, c.tool, json.RawMessage(c.args))
	}
	if err := st.FlushCalls(ctx); err != nil {
		t.Fatal(err)
	}

	t.Run("json", func(t *testing.T) {
		out := mustRun(t, "audit", "--db", db, "-o", "json")
		if strings.Contains(out, secret) {
			t.Fatalf("the secret is in the audit:\n%s", out)
		}
		var calls []domain.ToolCall
		if err := json.Unmarshal([]byte(out), &calls); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		var got []string
		for _, c := range calls {
			got = append(got, c.Tool+" "+string(c.Status)+" "+c.Worker)
		}
		want := []string{"list_roles ok w-owner", "get_role error w-owner", "create_stream ok w-owner"}
		if strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Errorf("calls = %q, want %q", got, want)
		}
		if len(calls) == 3 {
			var args bytes.Buffer
			json.Compact(&args, calls[2].Arguments)
			wantAll(t, "create_stream's arguments", args.String(), `"secret":"[redacted]"`, `"name":"hooks"`)
			wantAll(t, "get_role's error", calls[1].Error, `role "r-none"`)
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
		{name: "by tool", args: []string{"--tool", "get_role"}, want: []string{"get_role"}, notWant: []string{"create_stream", "list_roles"}},
		{name: "by worker", args: []string{"--worker", "w-owner", "--tool", "list_roles"}, want: []string{"list_roles"}, notWant: []string{"get_role"}},
		{name: "an unknown worker", args: []string{"--worker", "w-nobody"}, wantErr: `--worker: worker "w-nobody": not found`},
		{name: "limit", args: []string{"--limit", "1", "-o", "csv"}, want: []string{"list_roles"}, notWant: []string{"get_role", "create_stream"}},
		{name: "since a duration", args: []string{"--since", "1h"}, want: []string{"create_stream"}},
		{name: "since a time", args: []string{"--since", "2999-01-01T00:00:00Z"}, want: []string{"No tool calls recorded."}},
		{name: "a bad since", args: []string{"--since", "yesterday"}, wantErr: `--since: want a duration back from now (24h, 90m) or an RFC 3339 time`},
		{name: "a bad format", args: []string{"-o", "xml"}, wantErr: "valid: table, json, csv"},
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

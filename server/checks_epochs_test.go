package server_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// TestCallChecksSeeAnotherProcessAtOnce: the checks a publish passes
// before it runs — the caller's org role, the approval gate's
// approvals.ai_requires — read at the epochs its authentication read, so
// a change another process made on the database (the CLI beside a
// running server) applies to the very next call, as plain JSON-RPC
// clients send it.
func TestCallChecksSeeAnotherProcessAtOnce(t *testing.T) {
	ctx := t.Context()
	db := t.TempDir() + "/helix-org.db"
	open := func() *store.Store {
		st, err := store.Open(ctx, db, store.Options{Transports: servertest.Transports})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	h := servertest.StartWith(t, open(), server.Config{})
	cli := open()
	owner := h.Owner(t)
	seedOrg(t, h, owner)
	for _, w := range []string{"w-maya", "w-echo"} {
		servertest.Call[any](t, owner, "grant_tool", map[string]any{"worker": w, "tool": "publish"})
		servertest.Call[any](t, owner, "subscribe", map[string]any{"stream": "s-inbox", "worker": w})
	}
	tokens := map[string]string{"w-maya": servertest.Token(t, h.Store, "w-maya"), "w-echo": servertest.Token(t, h.Store, "w-echo")}
	publish := func(worker string) string {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"publish","arguments":{"stream":"s-inbox","body":"hello"}}}`)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL(worker), bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = http.Header{"Authorization": {"Bearer " + tokens[worker]}, "Content-Type": {"application/json"},
			"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2025-11-25"}}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out bytes.Buffer
		out.ReadFrom(resp.Body)
		return out.String()
	}
	steps := []struct {
		name   string
		change func(context.Context) error
		worker string
		want   string
	}{
		{"a member publishes", nil, "w-maya", `"seq":`},
		{"an AI worker publishes", nil, "w-echo", `"seq":`},
		{"made a viewer by the CLI", func(ctx context.Context) error {
			_, err := cli.SetOrgRole(ctx, store.OwnerWorker, "w-maya", domain.RoleViewer)
			return err
		}, "w-maya", "viewer may not call publish"},
		{"a member again", func(ctx context.Context) error {
			_, err := cli.SetOrgRole(ctx, store.OwnerWorker, "w-maya", domain.RoleMember)
			return err
		}, "w-maya", `"seq":`},
		{"publish needs a person for AI workers", func(ctx context.Context) error {
			return cli.SetSetting(ctx, tools.AIRequiresSetting, `["publish"]`)
		}, "w-echo", "pending approval"},
		{"no longer", func(ctx context.Context) error {
			return cli.SetSetting(ctx, tools.AIRequiresSetting, `[]`)
		}, "w-echo", `"seq":`},
	}
	for _, step := range steps {
		if step.change != nil {
			if err := step.change(ctx); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
		}
		if got := publish(step.worker); !strings.Contains(got, step.want) {
			t.Errorf("%s: %s's publish answered %s; want %q in it", step.name, step.worker, got, step.want)
		}
	}
}

package server_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// TestSecretCanary sets a secret setting, as `helix-org config set
// agent.api_key` does, then drives a walkthrough's worth of MCP calls as the
// owner and looks for the secret everywhere it could leak: the debug log,
// every MCP response, and the bytes SQLite wrote.
func TestSecretCanary(t *testing.T) {
	const (
		canary = "sk-canary-7d1f0c9a-must-never-appear"
		// plain is a non-secret setting: finding it proves each search
		// below looks where settings actually end up.
		plain = "plain-marker-3b8e51"
	)
	var logs servertest.Logs
	log := logs.Logger()
	path := filepath.Join(t.TempDir(), "helix-org.db")
	st, err := store.Open(t.Context(), path, store.Options{Synchronous: "NORMAL", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.SetSetting(t.Context(), agent.APIKeySetting, canary); err != nil {
		t.Fatal(err)
	}
	if err := st.SetSetting(t.Context(), agent.ModelSetting, plain); err != nil {
		t.Fatal(err)
	}
	if got, _, err := st.Setting(t.Context(), agent.APIKeySetting.Key); err != nil || got != canary {
		t.Fatalf("canary reads back as %q, %v; the test would prove nothing", got, err)
	}

	h := servertest.StartWith(t, st, server.Config{Logger: log})
	owner := h.Owner(t)
	var responses [][]byte
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"list_roles", nil},
		{"get_role", map[string]any{"id": store.OwnerRole}},
		{"create_role", map[string]any{"id": "r-bot", "title": "Bot", "content": "Echo what you read."}},
		{"create_position", map[string]any{"id": "p-bot", "role": "r-bot", "title": "Bot 1"}},
		{"list_positions", nil},
		{"hire_worker", map[string]any{"id": "w-bot", "position": "p-bot", "kind": "ai", "name": "Bot", "grants": []string{"publish"}}},
		{"grant_tool", map[string]any{"worker": "w-bot", "tool": "list_roles"}},
		{"list_grants", map[string]any{"worker": "w-bot"}},
		{"get_worker", map[string]any{"id": "w-bot"}},
		{"get_worker", nil},
		{"list_workers", nil},
		{"create_stream", map[string]any{"id": "s-canary", "name": "canary"}},
		{"subscribe", map[string]any{"stream": "s-canary"}},
		{"publish", map[string]any{"stream": "s-canary", "body": "hello"}},
		{"dm", map[string]any{"to": "w-bot", "body": "hi"}},
		{"list_streams", nil},
		{"get_stream", map[string]any{"id": "s-org"}},
		{"stream_members", map[string]any{"stream": "s-canary"}},
		{"read_events", map[string]any{"streams": []string{"s-org"}}},
		{"read_events", nil},
	} {
		res, err := owner.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if res.IsError {
			t.Errorf("%s(%v) failed, so its success path went unchecked: %s", c.tool, c.args, servertest.Text(res))
		}
		responses = append(responses, mustJSON(t, res))
	}
	tools, err := owner.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	prompts, err := owner.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	help, err := owner.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "help"})
	if err != nil {
		t.Fatal(err)
	}
	responses = append(responses, mustJSON(t, tools), mustJSON(t, prompts), mustJSON(t, help))
	for i, raw := range responses {
		if bytes.Contains(raw, []byte(canary)) {
			t.Errorf("MCP response %d contains the secret: %s", i, raw)
		}
	}

	// Read what SQLite wrote both while the WAL still holds the recent
	// writes and after close has checkpointed them into the main file.
	h.Server.Close()
	open := readDBFiles(t, path)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	closed := readDBFiles(t, path)
	for _, snap := range []map[string][]byte{open, closed} {
		for name, b := range snap {
			if bytes.Contains(b, []byte(canary)) {
				t.Errorf("%s holds the secret in plain text", name)
			}
		}
	}
	for when, snap := range map[string]map[string][]byte{"open": open, "closed": closed} {
		if !bytes.Contains(bytes.Join(slices.Collect(maps.Values(snap)), nil), []byte(plain)) {
			t.Errorf("with the store %s, the plain setting is in none of the files read; the leak check looked in the wrong place", when)
		}
	}

	if b := []byte(logs.String()); bytes.Contains(b, []byte(canary)) {
		t.Errorf("the log contains the secret:\n%s", b)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readDBFiles returns the bytes of the database and its WAL and
// shared-memory files, keyed by file name, skipping those that do not exist.
func readDBFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

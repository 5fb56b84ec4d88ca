package server_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestAuthorityOverMCP replays, with real clients over HTTP, what a worker
// holding ordinary grants could once do beyond them: dismiss the owner,
// re-grant itself for ever or cut the owner's grants short, evict a member
// from someone else's DM, and read s-org and a peer's activation log. Each
// is refused with the rule named, and the org is left as it was.
func TestAuthorityOverMCP(t *testing.T) {
	clock := storetest.NewClock(clockStart)
	h := servertest.StartWith(t, storetest.NewWith(t, store.Options{Now: clock.Now, Transports: servertest.Transports}), server.Config{})
	owner := h.Owner(t)
	seedOrg(t, h, owner) // w-maya (human) and w-echo (ai) in p-support
	servertest.Call[any](t, owner, "create_role", map[string]any{"id": "r-lead", "title": "Lead", "content": "Lead."})
	servertest.Call[any](t, owner, "create_position", map[string]any{"id": "p-lead", "role": "r-lead", "title": "Lead"})
	servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": "w-ann", "position": "p-lead", "kind": "human", "name": "Ann",
		"grants": []string{"dismiss_worker", "revoke_tool", "unsubscribe", "subscribe", "read_events", "worker_log", "publish"}})
	servertest.Call[any](t, owner, "grant_tool", map[string]any{"worker": "w-ann", "tool": "grant_tool", "expiresIn": "10s"})
	servertest.Call[any](t, owner, "grant_tool", map[string]any{"worker": "w-maya", "tool": "dm"})
	maya := h.Connect(t, "w-maya", servertest.Token(t, h.Store, "w-maya"))
	dm := servertest.Call[struct{ Stream string }](t, maya, "dm", map[string]any{"to": "w-echo", "body": "between us"}).Stream
	ann := h.Connect(t, "w-ann", servertest.Token(t, h.Store, "w-ann"))

	before := snapshot(t, h, owner)
	ownerGrants, err := h.Store.ListGrants(t.Context(), store.OwnerWorker)
	if err != nil {
		t.Fatal(err)
	}
	attempts := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"dismiss the owner", "dismiss_worker", map[string]any{"id": "w-owner"}, "w-ann may only manage workers below p-lead; w-owner is not"},
		{"dismiss a worker beside you", "dismiss_worker", map[string]any{"id": "w-maya"}, "w-ann may only manage workers below p-lead; w-maya (p-support) is not"},
		{"re-grant yourself for ever", "grant_tool", map[string]any{"worker": "w-ann", "tool": "grant_tool"}, "w-ann cannot grant to itself"},
		{"cut the owner's grant short", "grant_tool", map[string]any{"worker": "w-owner", "tool": "publish", "expiresIn": "1s"}, "w-ann may only manage workers below p-lead; w-owner is not"},
		{"revoke from the owner", "revoke_tool", map[string]any{"worker": "w-owner", "tool": "publish"}, "w-ann may only manage workers below p-lead; w-owner is not"},
		{"evict a member from a DM", "unsubscribe", map[string]any{"stream": dm, "worker": "w-maya"}, dm + " is a direct-message stream; only its members join or leave it, each for itself"},
		{"join someone's DM", "subscribe", map[string]any{"stream": dm}, dm + " is a direct-message stream; only its two members read it"},
		{"read s-org", "read_events", map[string]any{"streams": []string{"s-org"}}, "s-org is the org's audit trail; only w-owner reads it"},
		{"follow s-org", "subscribe", map[string]any{"stream": "s-org"}, "only w-owner reads it"},
		{"read a peer's activation log", "worker_log", map[string]any{"worker": "w-echo"}, "w-ann may only read the activation logs of workers below p-lead (and its own); w-echo (p-support) is not"},
		{"long-poll a peer's activation log", "read_events", map[string]any{"streams": []string{"s-activations-w-echo"}, "wait": 30}, "w-ann may only read the activation logs"},
		{"read a stream you do not follow", "read_events", map[string]any{"streams": []string{"s-inbox"}}, "w-ann is not subscribed to s-inbox; subscribe to it first"},
	}
	for _, a := range attempts {
		t.Run(a.name, func(t *testing.T) {
			start := time.Now()
			got := servertest.CallErr(t, ann, a.tool, a.args)
			if !strings.Contains(got, a.want) {
				t.Errorf("%s: error %q does not name the rule %q", a.tool, got, a.want)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("%s took %v: a refusal must not wait", a.tool, took)
			}
		})
	}
	t.Run("the owner cannot evict a DM member either", func(t *testing.T) {
		got := servertest.CallErr(t, owner, "unsubscribe", map[string]any{"stream": dm, "worker": "w-echo"})
		if !strings.Contains(got, "only its members join or leave it") {
			t.Errorf("error %q", got)
		}
	})

	if diff := cmp.Diff(before, snapshot(t, h, owner)); diff != "" {
		t.Errorf("refused calls changed the org (-before +after):\n%s", diff)
	}
	members, err := h.Store.StreamMembers(t.Context(), dm)
	if err != nil || len(members) != 2 {
		t.Errorf("members of %s = %+v (%v), want both", dm, members, err)
	}
	after, err := h.Store.ListGrants(t.Context(), store.OwnerWorker)
	if err != nil || !slices.EqualFunc(ownerGrants, after, func(a, b domain.Grant) bool {
		return a.Tool == b.Tool && a.ExpiresAt == nil && b.ExpiresAt == nil && a.CreatedAt.Equal(b.CreatedAt)
	}) {
		t.Errorf("owner's grants changed: %v", err)
	}
	if w, err := h.Store.GetWorker(t.Context(), store.OwnerWorker); err != nil || !w.Active() {
		t.Errorf("owner = %+v, %v; want active", w, err)
	}
	servertest.Call[any](t, owner, "list_roles", nil) // the owner's endpoint still answers

	// Ann's 10 s grant_tool runs out like any other; nothing it did outlives it.
	clock.Advance(10 * time.Second)
	if got := servertest.CallErr(t, ann, "grant_tool", map[string]any{"worker": "w-maya", "tool": "publish"}); !strings.Contains(got, "missing grant") {
		t.Errorf("grant_tool after its expiry: %q", got)
	}
}

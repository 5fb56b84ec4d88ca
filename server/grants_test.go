package server_test

import (
	"encoding/json"
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

// clockStart is where the fake clocks of these tests begin.
var clockStart = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestToolsListShowsExactlyGrants connects as two workers with different
// grants: each sees exactly its own tools, and calling any other tool
// names the grant that is missing.
func TestToolsListShowsExactlyGrants(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	seedOrg(t, h, owner)
	servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": "w-sam", "position": "p-support", "kind": "human", "name": "Sam",
		"grants": []string{"read_events", "publish", "get_worker"}})
	for _, tool := range []string{"create_role", "list_roles"} {
		servertest.Call[any](t, owner, "grant_tool", map[string]any{"worker": "w-maya", "tool": tool})
	}

	cases := []struct {
		worker        string
		wantTools     []string
		ungranted     string
		ungrantedArgs map[string]any
	}{
		{"w-maya", []string{"create_role", "list_roles"}, "publish", map[string]any{"stream": "s-inbox", "body": "hi"}},
		{"w-sam", []string{"get_worker", "publish", "read_events"}, "create_role", map[string]any{"title": "Sneaky", "content": "x"}},
	}
	for _, tc := range cases {
		t.Run(tc.worker, func(t *testing.T) {
			cs := h.Connect(t, tc.worker, servertest.Token(t, h.Store, tc.worker))
			if diff := cmp.Diff(tc.wantTools, sortedCopy(servertest.ToolNames(t, cs))); diff != "" {
				t.Errorf("tools/list for %s (-want +got):\n%s", tc.worker, diff)
			}
			before, err := h.Store.LastSeq(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			got := servertest.CallErr(t, cs, tc.ungranted, tc.ungrantedArgs)
			for _, want := range []string{"missing grant", tc.worker, `"` + tc.ungranted + `"`} {
				if !strings.Contains(got, want) {
					t.Errorf("calling ungranted %s: error %q does not contain %q", tc.ungranted, got, want)
				}
			}
			if after, _ := h.Store.LastSeq(t.Context()); after != before {
				t.Errorf("refused call changed the store: last seq %d → %d", before, after)
			}
		})
	}
}

// TestExpiringGrant grants a tool for a minute, then moves the store's
// clock past the expiry: the tool leaves tools/list on the very next
// request, with no restart, and calling it names the missing grant.
func TestExpiringGrant(t *testing.T) {
	clock := storetest.NewClock(clockStart)
	h := servertest.StartWith(t, storetest.NewWith(t, store.Options{Now: clock.Now, Transports: servertest.Transports}), server.Config{})
	owner := h.Owner(t)
	seedOrg(t, h, owner)
	servertest.Call[any](t, owner, "grant_tool", map[string]any{"worker": "w-maya", "tool": "list_roles"})
	g := servertest.Call[domain.Grant](t, owner, "grant_tool", map[string]any{"worker": "w-maya", "tool": "publish", "expiresIn": "1m"})
	if want := clockStart.Add(time.Minute); g.ExpiresAt == nil || !g.ExpiresAt.Equal(want) {
		t.Fatalf("grant expires at %v, want %v", g.ExpiresAt, want)
	}

	maya := h.Connect(t, "w-maya", servertest.Token(t, h.Store, "w-maya"))
	if diff := cmp.Diff([]string{"list_roles", "publish"}, sortedCopy(servertest.ToolNames(t, maya))); diff != "" {
		t.Errorf("tools/list before expiry (-want +got):\n%s", diff)
	}
	servertest.Call[domain.Event](t, maya, "publish", map[string]any{"stream": "s-inbox", "body": "while it lasts"})

	clock.Advance(59 * time.Second)
	if diff := cmp.Diff([]string{"list_roles", "publish"}, sortedCopy(servertest.ToolNames(t, maya))); diff != "" {
		t.Errorf("tools/list a second before expiry (-want +got):\n%s", diff)
	}

	clock.Advance(time.Second)
	if diff := cmp.Diff([]string{"list_roles"}, sortedCopy(servertest.ToolNames(t, maya))); diff != "" {
		t.Errorf("tools/list at expiry (-want +got):\n%s", diff)
	}
	got := servertest.CallErr(t, maya, "publish", map[string]any{"stream": "s-inbox", "body": "too late"})
	for _, want := range []string{"missing grant", "w-maya", `"publish"`} {
		if !strings.Contains(got, want) {
			t.Errorf("publish after expiry: error %q does not contain %q", got, want)
		}
	}
}

// TestOrgStreamRecordsChanges reads s-org as a client would and checks
// each change carries its actor, target and the record before and after.
func TestOrgStreamRecordsChanges(t *testing.T) {
	clock := storetest.NewClock(clockStart)
	h := servertest.StartWith(t, storetest.NewWith(t, store.Options{Now: clock.Now, Transports: servertest.Transports}), server.Config{})
	owner := h.Owner(t)
	seedOrg(t, h, owner)
	since, err := h.Store.LastSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": "w-sam", "position": "p-support", "kind": "human", "name": "Sam", "grants": []string{"publish"}})
	servertest.Call[any](t, owner, "grant_tool", map[string]any{"worker": "w-sam", "tool": "publish", "expiresIn": "1h"})
	servertest.Call[any](t, owner, "update_role", map[string]any{"id": "r-support", "content": "Answer tickets within an hour."})

	read := servertest.Call[struct {
		Events []domain.Event `json:"events"`
	}](t, owner, "read_events", map[string]any{"streams": []string{"s-org"}, "since": since})
	var got []map[string]any
	for _, ev := range read.Events {
		var c map[string]any
		if err := json.Unmarshal(ev.Message.Extra, &c); err != nil {
			t.Fatalf("event %s: extra %s: %v", ev.ID, ev.Message.Extra, err)
		}
		if ev.Source != "w-owner" {
			t.Errorf("event %s source = %q, want w-owner", ev.ID, ev.Source)
		}
		got = append(got, c)
	}

	at := clockStart.Format(time.RFC3339)
	publishGrant := map[string]any{"workerId": "w-sam", "tool": "publish", "grantedBy": "w-owner", "createdAt": at}
	role := func(content string) map[string]any {
		return map[string]any{"id": "r-support", "title": "Support", "content": content, "createdAt": at, "updatedAt": at}
	}
	want := []map[string]any{
		{"action": "grant_tool", "actor": "w-owner", "target": "w-sam", "after": publishGrant},
		{"action": "hire_worker", "actor": "w-owner", "target": "w-sam", "after": map[string]any{
			"worker": map[string]any{"id": "w-sam", "kind": "human", "positionId": "p-support", "name": "Sam", "hiredBy": "w-owner", "hiredAt": at},
			"grants": []any{"publish"},
		}},
		{"action": "grant_tool", "actor": "w-owner", "target": "w-sam", "before": publishGrant, "after": map[string]any{
			"workerId": "w-sam", "tool": "publish", "grantedBy": "w-owner", "createdAt": at, "expiresAt": clockStart.Add(time.Hour).Format(time.RFC3339),
		}},
		{"action": "update_role", "actor": "w-owner", "target": "r-support", "before": role("Answer tickets."), "after": role("Answer tickets within an hour.")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("s-org changes (-want +got):\n%s", diff)
	}
}

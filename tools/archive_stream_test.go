package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// archivedView is a stream as archive_stream and get_stream show it:
// streamView with its archivedAt.
type archivedView struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Transport   struct {
		Kind   string         `json:"kind"`
		Config map[string]any `json:"config"`
	} `json:"transport"`
	CreatedBy  string     `json:"createdBy,omitempty"`
	ArchivedAt *time.Time `json:"archivedAt,omitempty"`
}

func archivedAs(v streamView, at time.Time) archivedView {
	return archivedView{ID: v.ID, Name: v.Name, Description: v.Description, Transport: v.Transport, CreatedBy: v.CreatedBy, ArchivedAt: &at}
}

// archiveHook is addHook's s-hook, archived by the owner an hour ago.
func archiveHook(t *testing.T, f fixture) {
	t.Helper()
	addHook(t, f)
	must(t)(f.env.Store.ArchiveStream(t.Context(), store.OwnerWorker, "s-hook"))
	f.clock.Advance(time.Hour)
}

// orgChanges counts the changes of action on s-org.
func orgChanges(t *testing.T, st *store.Store, action string) int {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.StreamOrg}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		var c store.Change
		if json.Unmarshal(ev.Message.Extra, &c) == nil && c.Action == action {
			n++
		}
	}
	return n
}

func TestArchiveStream(t *testing.T) {
	archived := archivedAs(hookView("hook", "deploys", map[string]any{"outbound_url": "https://a.example/in", "secret": domain.Redacted}), t0)
	// shownAs checks get_stream and list_streams show what archive_stream
	// answered, and that s-org holds the one archive_stream.
	shownAs := func(t *testing.T, f fixture, out archivedView) {
		t.Helper()
		got := mustCall[struct{ Stream archivedView }](t, f.env, "get_stream", map[string]any{"id": "s-hook"})
		if diff := cmp.Diff(out, got.Stream); diff != "" {
			t.Errorf("get_stream after archive_stream (-archive_stream +get_stream):\n%s", diff)
		}
		type listed struct{ Streams []archivedView }
		for _, args := range []map[string]any{{"kind": "webhook"}, {"kind": "webhook", "archived": false}} {
			if l := mustCall[listed](t, f.env, "list_streams", args); len(l.Streams) != 0 {
				t.Errorf("list_streams %v = %+v, want the archived s-hook left out", args, l.Streams)
			}
		}
		l := mustCall[listed](t, f.env, "list_streams", map[string]any{"kind": "webhook", "archived": true})
		if diff := cmp.Diff([]archivedView{out}, l.Streams); diff != "" {
			t.Errorf("list_streams archived=true (-want +got):\n%s", diff)
		}
		if c := lastOrgChange(t, f.env.Store); c.Action != "archive_stream" || c.Actor != store.OwnerWorker || c.Target != "s-hook" {
			t.Errorf("last s-org change = %+v, want the owner's archive_stream of s-hook", c)
		}
		if n := orgChanges(t, f.env.Store, "archive_stream"); n != 1 {
			t.Errorf("s-org holds %d archive_stream changes, want 1", n)
		}
	}
	runTable(t, "archive_stream", []toolCase[archivedView]{
		{name: "archives a stream, its secret redacted", setup: addHook, args: map[string]any{"id": "s-hook"}, want: archived, check: shownAs},
		{name: "archiving again answers it as it was", setup: archiveHook, args: map[string]any{"id": "s-hook"}, want: archived, check: shownAs},
		{name: "no id", args: map[string]any{}, wantErr: []string{"id: is required"}, wantIs: domain.ErrInvalid},
		{name: "unknown stream", args: map[string]any{"id": "s-nope"}, wantErr: []string{`stream "s-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "the audit trail", args: map[string]any{"id": "s-org"},
			wantErr: []string{"id: s-org is the org's audit trail, which the system keeps; it cannot be archived"}, wantIs: domain.ErrInvalid},
		{name: "a DM", args: map[string]any{"id": "s-dm-w-echo-w-maya"},
			wantErr: []string{"id: s-dm-w-echo-w-maya is a DM stream", "it cannot be archived (archive_stream archives only streams made with create_stream)"}, wantIs: domain.ErrInvalid},
		{name: "an activation log", args: map[string]any{"id": "s-activations-w-echo"},
			wantErr: []string{"id: s-activations-w-echo is a worker's activation log, which the system writes; it cannot be archived"}, wantIs: domain.ErrInvalid},
		{name: "an inbox", args: map[string]any{"id": domain.InboxStream("w-echo")},
			wantErr: []string{"is a worker's inbox, which only the system writes; it cannot be archived"}, wantIs: domain.ErrInvalid},
		{name: "a contact stream", args: map[string]any{"id": "s-contact-w-maya"},
			wantErr: []string{"id: s-contact-w-maya is a person's contact stream", "cannot be archived"}, wantIs: domain.ErrInvalid},
		{name: "a spec task's stream", args: map[string]any{"id": "s-task-t-a"},
			wantErr: []string{"id: s-task-t-a is a spec task's stream, which the system writes; it cannot be archived"}, wantIs: domain.ErrInvalid},
		{name: "another's stream, without create_stream", setup: addHook, caller: "w-maya", args: map[string]any{"id": "s-hook"},
			wantErr: []string{"w-maya may not archive s-hook: it holds no live create_stream grant"}, wantIs: domain.ErrForbidden},
	})
}

// TestArchiveStreamAuthority: through the one call path, who may update a
// stream may archive it — holding archive_stream and create_stream, its
// creator or an admin — and an AI worker only its own. A refused archive
// leaves the stream in use.
func TestArchiveStreamAuthority(t *testing.T) {
	both := []string{"archive_stream", "create_stream"}
	tests := []struct {
		name    string
		caller  string
		role    domain.OrgRole
		grants  []string
		stream  string
		wantErr string
	}{
		{name: "no grant", caller: "w-maya", stream: "s-maya", wantErr: `missing grant: worker w-maya does not hold grant "archive_stream"`},
		{name: "a viewer", caller: "w-maya", role: domain.RoleViewer, grants: both, stream: "s-maya", wantErr: "viewer may not call archive_stream"},
		{name: "without create_stream", caller: "w-maya", grants: []string{"archive_stream"}, stream: "s-maya",
			wantErr: "w-maya may not archive s-maya: it holds no live create_stream grant"},
		{name: "a member, its own stream", caller: "w-maya", grants: both, stream: "s-maya"},
		{name: "a member, another's stream", caller: "w-maya", grants: both, stream: "s-hook",
			wantErr: "w-maya may not archive s-hook: only its creator (w-owner) or an admin may"},
		{name: "an admin, another's stream", caller: "w-maya", role: domain.RoleAdmin, grants: both, stream: "s-hook"},
		{name: "an AI worker, its own stream", caller: "w-echo", grants: both, stream: "s-echo"},
		{name: "an AI worker, another's stream", caller: "w-echo", grants: both, stream: "s-hook",
			wantErr: "w-echo may not archive s-hook: only its creator (w-owner) or an admin may"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := t.Context()
			addHook(t, f)
			for _, w := range []string{"w-maya", "w-echo"} {
				must(t)(f.env.Store.CreateStream(ctx, w, domain.Stream{ID: "s-" + strings.TrimPrefix(w, "w-"), Name: w, Transport: domain.Transport{Kind: domain.TransportLocal}}))
			}
			f.grant(t, tt.caller, tt.grants...)
			if tt.role != "" {
				must(t)(f.env.Store.SetOrgRole(ctx, store.OwnerWorker, tt.caller, tt.role))
			}
			o := Call(ctx, f.as(tt.caller), tt.grants, "archive_stream", json.RawMessage(`{"id":"`+tt.stream+`"}`))
			st, err := f.env.Store.GetStream(ctx, tt.stream)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantErr == "" {
				if o.Err != nil || st.ArchivedAt == nil {
					t.Fatalf("archive_stream = %v, archivedAt %v; want it archived", o.Err, st.ArchivedAt)
				}
				return
			}
			if o.Err == nil || !errors.Is(o.Err, domain.ErrForbidden) || !strings.Contains(o.Err.Error(), tt.wantErr) {
				t.Errorf("archive_stream = %v, want forbidden %q", o.Err, tt.wantErr)
			}
			if st.ArchivedAt != nil {
				t.Errorf("a refused archive archived %s", tt.stream)
			}
		})
	}
}

// TestArchivedStreamThroughTools: what a worker sees of an archived
// stream through the other tools — publish and subscribe refused naming
// the stream, what it had to send parked, its history still read by its
// members.
func TestArchivedStreamThroughTools(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	addDeliveries(t, f) // s-hook: delivery 1 delivered, delivery 2 waiting to retry
	f.follow(t, "w-maya", "s-hook")
	mustCall[archivedView](t, f.env, "archive_stream", map[string]any{"id": "s-hook"})
	maya := f.as("w-maya")

	refusals := []struct {
		name string
		env  *Env
		tool string
		args map[string]any
		want string
		is   error
	}{
		{"publish", maya, "publish", map[string]any{"stream": "s-hook", "body": "still there?"}, "stream: s-hook is archived: it takes no new events", domain.ErrInvalid},
		{"subscribe", f.env, "subscribe", map[string]any{"stream": "s-hook", "worker": "w-echo"}, "stream: s-hook is archived", domain.ErrInvalid},
		{"retry_delivery", f.env, "retry_delivery", map[string]any{"delivery": 2}, "stream s-hook is archived", domain.ErrConflict},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call[map[string]any](t, tt.env, tt.tool, tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, tt.is) {
				t.Errorf("%s = %v, want %v containing %q", tt.tool, err, tt.is, tt.want)
			}
		})
	}
	t.Run("deliveries not sent are parked", func(t *testing.T) {
		got := mustCall[struct{ Deliveries []domain.Delivery }](t, f.env, "list_deliveries", map[string]any{"stream": "s-hook"})
		status := map[int64]string{}
		for _, d := range got.Deliveries {
			status[d.ID] = string(d.Status) + " " + d.LastError
		}
		want := map[int64]string{1: "delivered ", 2: "disabled the stream is archived"}
		if diff := cmp.Diff(want, status); diff != "" {
			t.Errorf("deliveries of s-hook (-want +got):\n%s", diff)
		}
	})
	t.Run("its members read its history, and so does whoever could have followed it", func(t *testing.T) {
		for _, env := range []*Env{maya, f.as("w-echo")} {
			got := mustCall[readEventsOut](t, env, "read_events", map[string]any{"streams": []string{"s-hook"}})
			if len(got.Events) != 2 {
				t.Errorf("%s reads %d events on s-hook, want the 2 from before", env.Caller, len(got.Events))
			}
		}
		members := mustCall[struct{ Members []string }](t, f.env, "get_stream", map[string]any{"id": "s-hook"})
		if !cmp.Equal(members.Members, []string{"w-maya"}) {
			t.Errorf("get_stream members = %v, want w-maya still", members.Members)
		}
	})
	if st, _ := f.env.Store.GetStream(ctx, "s-hook"); st.ArchivedAt == nil {
		t.Errorf("s-hook is not archived")
	}
}

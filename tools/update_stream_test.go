package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/outbox"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/webhook"
	"github.com/helixml/helix-org/transports/webhook/webhooktest"
)

const rotatedSecret = "whsec_cm90YXRlZC13ZWJob29rLXNlY3JldC1mb3ItdGVzdHM="

// hookView is s-hook as update_stream answers it (create_stream's view).
func hookView(name, desc string, cfg map[string]any) streamView {
	v := view("s-hook", name, "webhook", cfg)
	v.Description = desc
	return v
}

// addHook makes s-hook, a webhook stream of w-owner's signed with
// retrySecret that sends to https://a.example/in.
func addHook(t *testing.T, f fixture) {
	t.Helper()
	must(t)(f.env.Store.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-hook", Name: "hook", Description: "deploys",
		Transport: domain.Transport{Kind: "webhook", Config: json.RawMessage(`{"secret":"` + retrySecret + `","outbound_url":"https://a.example/in"}`)}}))
}

// hookSecret is the secret s-hook signs with now.
func hookSecret(t *testing.T, f fixture) string {
	t.Helper()
	st, err := f.env.Store.StreamWithSecrets(t.Context(), "s-hook")
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Secret string }
	if err := json.Unmarshal(st.Transport.Config, &c); err != nil {
		t.Fatal(err)
	}
	return c.Secret
}

func TestUpdateStream(t *testing.T) {
	// secretIs checks the stream signs with want now, and that get_stream
	// shows what update_stream answered, secrets redacted alike.
	secretIs := func(want string) func(t *testing.T, f fixture, out streamView) {
		return func(t *testing.T, f fixture, out streamView) {
			t.Helper()
			got := mustCall[struct{ Stream streamView }](t, f.env, "get_stream", map[string]any{"id": "s-hook"})
			if diff := cmp.Diff(out, got.Stream); diff != "" {
				t.Errorf("get_stream after update_stream (-update_stream +get_stream):\n%s", diff)
			}
			if got := hookSecret(t, f); got != want {
				t.Errorf("s-hook signs with %q, want %q", got, want)
			}
			if c := lastOrgChange(t, f.env.Store); c.Action != "update_stream" || c.Actor != store.OwnerWorker || c.Target != "s-hook" {
				t.Errorf("last s-org change = %+v, want the owner's update_stream of s-hook", c)
			}
		}
	}
	masked := domain.Redacted
	runTable(t, "update_stream", []toolCase[streamView]{
		{name: "moves the outbound url, the secret kept", setup: addHook,
			args:  map[string]any{"id": "s-hook", "transport": map[string]any{"config": map[string]any{"outbound_url": "https://b.example/in"}}},
			want:  hookView("hook", "deploys", map[string]any{"outbound_url": "https://b.example/in", "secret": masked}),
			check: secretIs(retrySecret)},
		{name: "rotates the secret, shown redacted", setup: addHook,
			args:  map[string]any{"id": "s-hook", "transport": map[string]any{"kind": "webhook", "config": map[string]any{"secret": rotatedSecret}}},
			want:  hookView("hook", "deploys", map[string]any{"outbound_url": "https://a.example/in", "secret": masked}),
			check: secretIs(rotatedSecret)},
		{name: "null removes a key", setup: addHook,
			args:  map[string]any{"id": "s-hook", "transport": map[string]any{"config": map[string]any{"outbound_url": nil}}},
			want:  hookView("hook", "deploys", map[string]any{"secret": masked}),
			check: secretIs(retrySecret)},
		{name: "the config get_stream shows, sent back, keeps the secret", setup: addHook,
			args:  map[string]any{"id": "s-hook", "transport": map[string]any{"config": map[string]any{"outbound_url": "https://b.example/in", "secret": masked}}},
			want:  hookView("hook", "deploys", map[string]any{"outbound_url": "https://b.example/in", "secret": masked}),
			check: secretIs(retrySecret)},
		{name: "name and description", setup: addHook,
			args:  map[string]any{"id": "s-hook", "name": "hooks", "description": ""},
			want:  hookView("hooks", "", map[string]any{"outbound_url": "https://a.example/in", "secret": masked}),
			check: secretIs(retrySecret)},
		{name: "another kind", setup: addHook, args: map[string]any{"id": "s-hook", "transport": map[string]any{"kind": "email", "config": map[string]any{"alias": "x"}}},
			wantErr: []string{`transport.kind: s-hook is a "webhook" stream and a stream's kind cannot change (valid: "webhook")`, "create a new stream"}, wantIs: domain.ErrInvalid},
		{name: "a key the kind does not take", setup: addHook, args: map[string]any{"id": "s-hook", "transport": map[string]any{"config": map[string]any{"url": "https://b.example/in"}}},
			wantErr: []string{`transport.config: json: unknown field "url"`, `webhook (HTTP in and out) takes config {"secret":"whsec_…","outbound_url":"https://…"}`}, wantIs: domain.ErrInvalid},
		{name: "a config that is no object", setup: addHook, args: map[string]any{"id": "s-hook", "transport": map[string]any{"config": "https://b.example/in"}},
			wantErr: []string{"transport.config: must be an object of the keys to change"}, wantIs: domain.ErrInvalid},
		{name: "config on a local stream", args: map[string]any{"id": "s-inbox", "transport": map[string]any{"config": map[string]any{"outbound_url": "https://b.example/in"}}},
			wantErr: []string{`transport.config: json: unknown field "outbound_url"`}, wantIs: domain.ErrInvalid},
		{name: "an empty name", setup: addHook, args: map[string]any{"id": "s-hook", "name": ""}, wantErr: []string{"name: is required"}, wantIs: domain.ErrInvalid},
		{name: "nothing to change", setup: addHook, args: map[string]any{"id": "s-hook", "transport": map[string]any{"config": map[string]any{}}},
			wantErr: []string{"nothing to change: give name, description or transport.config"}, wantIs: domain.ErrInvalid},
		{name: "no id", args: map[string]any{"name": "x"}, wantErr: []string{"id: is required"}, wantIs: domain.ErrInvalid},
		{name: "unknown stream", args: map[string]any{"id": "s-nope", "name": "x"}, wantErr: []string{`stream "s-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "a DM", args: map[string]any{"id": "s-dm-w-echo-w-maya", "description": "ours"},
			wantErr: []string{"id: s-dm-w-echo-w-maya is a DM stream, which the server finds by its id and description", "cannot be updated"}, wantIs: domain.ErrInvalid},
		{name: "an activation log", args: map[string]any{"id": "s-activations-w-echo", "name": "x"},
			wantErr: []string{"a worker's activation log, which the system writes"}, wantIs: domain.ErrInvalid},
		{name: "a contact stream", args: map[string]any{"id": "s-contact-w-maya", "transport": map[string]any{"config": map[string]any{"alias": "x"}}},
			wantErr: []string{"a person's contact stream", "change it with set_contact"}, wantIs: domain.ErrInvalid},
		{name: "the audit trail", args: map[string]any{"id": "s-org", "description": "x"},
			wantErr: []string{"s-org is the org's audit trail"}, wantIs: domain.ErrInvalid},
	})
}

// TestUpdateStreamAuthority: who may make a stream may change it — one
// holding create_stream — and only its own, unless an admin: an AI
// worker, which has no org role, cannot redirect an outbound webhook it
// did not make. A refused update leaves the url as it was.
func TestUpdateStreamAuthority(t *testing.T) {
	tests := []struct {
		name    string
		caller  string
		role    domain.OrgRole
		grants  []string
		stream  string
		wantErr string
	}{
		{name: "no grant", caller: "w-maya", stream: "s-maya", wantErr: `missing grant: worker w-maya does not hold grant "update_stream"`},
		{name: "a viewer", caller: "w-maya", role: domain.RoleViewer, grants: []string{"update_stream", "create_stream"}, stream: "s-maya",
			wantErr: "viewer may not call update_stream"},
		{name: "without create_stream", caller: "w-maya", grants: []string{"update_stream"}, stream: "s-maya",
			wantErr: "w-maya may not update s-maya: it holds no live create_stream grant"},
		{name: "a member, its own stream", caller: "w-maya", grants: []string{"update_stream", "create_stream"}, stream: "s-maya"},
		{name: "a member, another's stream", caller: "w-maya", grants: []string{"update_stream", "create_stream"}, stream: "s-hook",
			wantErr: "w-maya may not update s-hook: only its creator (w-owner) or an admin may"},
		{name: "an admin, another's stream", caller: "w-maya", role: domain.RoleAdmin, grants: []string{"update_stream", "create_stream"}, stream: "s-hook"},
		{name: "an AI worker, its own stream", caller: "w-echo", grants: []string{"update_stream", "create_stream"}, stream: "s-echo"},
		{name: "an AI worker redirecting another's webhook", caller: "w-echo", grants: []string{"update_stream", "create_stream"}, stream: "s-hook",
			wantErr: "w-echo may not update s-hook: only its creator (w-owner) or an admin may"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := t.Context()
			addHook(t, f)
			for _, w := range []string{"w-maya", "w-echo"} {
				must(t)(f.env.Store.CreateStream(ctx, w, domain.Stream{ID: "s-" + strings.TrimPrefix(w, "w-"), Name: w,
					Transport: domain.Transport{Kind: "webhook", Config: json.RawMessage(`{"outbound_url":"https://a.example/in"}`)}}))
			}
			f.grant(t, tt.caller, tt.grants...)
			if tt.role != "" {
				must(t)(f.env.Store.SetOrgRole(ctx, store.OwnerWorker, tt.caller, tt.role))
			}
			o := Call(ctx, f.as(tt.caller), tt.grants, "update_stream",
				json.RawMessage(`{"id":"`+tt.stream+`","transport":{"config":{"outbound_url":"https://evil.example/in"}}}`))
			st, err := f.env.Store.GetStream(ctx, tt.stream)
			if err != nil {
				t.Fatal(err)
			}
			moved := strings.Contains(string(st.Transport.Config), "evil.example")
			if tt.wantErr == "" {
				if o.Err != nil || !moved {
					t.Fatalf("update_stream = %v, config %s; want the url moved", o.Err, st.Transport.Config)
				}
				return
			}
			if o.Err == nil || !errors.Is(o.Err, domain.ErrForbidden) || !strings.Contains(o.Err.Error(), tt.wantErr) {
				t.Errorf("update_stream = %v, want forbidden %q", o.Err, tt.wantErr)
			}
			if moved {
				t.Errorf("a refused update moved the url: %s", st.Transport.Config)
			}
		})
	}
}

// TestUpdateStreamAdmits: on the webhook transport's own spec, an
// outbound_url on a private address is refused as create_stream refuses
// it while transport.webhook.allow_private is false, naming the field
// and the setting; the stream keeps its url.
func TestUpdateStreamAdmits(t *testing.T) {
	f := newFixtureWith(t, domain.NewTransports(webhook.Transport.TransportSpec))
	ctx := t.Context()
	addHook(t, f)
	_, err := call[streamView](t, f.env, "update_stream", map[string]any{"id": "s-hook",
		"transport": map[string]any{"config": map[string]any{"outbound_url": "http://127.0.0.1:9000/hook"}}})
	for _, want := range []string{"transport.config.outbound_url: http://127.0.0.1:9000/hook is on 127.0.0.1", safedial.AllowPrivateSetting.Key} {
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("update_stream to loopback = %v, want invalid containing %q", err, want)
		}
	}
	st, err := f.env.Store.GetStream(ctx, "s-hook")
	if err != nil || !strings.Contains(string(st.Transport.Config), "https://a.example/in") {
		t.Errorf("s-hook after the refusal = %s, %v; want its url kept", st.Transport.Config, err)
	}
}

// TestUpdateStreamRedirectsDeliveries: end to end over loopback HTTP, a
// webhook stream delivers to receiver A signed with one secret; once
// update_stream moves it to B with another, the next event published
// arrives at B, signed with the new secret, and A gets nothing more.
func TestUpdateStreamRedirectsDeliveries(t *testing.T) {
	f := newFixtureWith(t, domain.NewTransports(webhook.Transport.TransportSpec))
	ctx := t.Context()
	st := f.env.Store
	must(t)(nil, st.SetSetting(ctx, safedial.AllowPrivateSetting, "true"))
	a, b := webhooktest.NewReceiver(t, retrySecret), webhooktest.NewReceiver(t, rotatedSecret)
	must(t)(st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-hook", Name: "hook",
		Transport: domain.Transport{Kind: webhook.Kind, Config: json.RawMessage(`{"secret":"` + retrySecret + `","outbound_url":"` + a.URL + `"}`)}}))
	client := safedial.NewClient(safedial.Options{AllowPrivate: func(ctx context.Context) bool { return st.BoolSetting(ctx, safedial.AllowPrivateSetting) }})
	// The real clock: the receivers verify the signature's timestamp.
	engine := outbox.New(st, []delivery.Sender{webhook.NewSender(client, webhook.SenderOptions{})}, outbox.Options{Now: time.Now})
	publish := func(body string) {
		t.Helper()
		must(t)(st.Append(ctx, domain.Event{StreamID: "s-hook", Source: store.OwnerWorker, Message: domain.Message{Body: body}}, store.AppendOptions{}))
		if err := engine.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// bodies are what rcv got, each verified with its secret.
	bodies := func(rcv *webhooktest.Receiver) []string {
		var got []string
		for _, r := range rcv.Requests() {
			var p webhook.Payload
			if err := json.Unmarshal(r.Body, &p); err != nil || r.Err != nil {
				t.Errorf("a receiver got %s (%v, signature: %v)", r.Body, err, r.Err)
			}
			got = append(got, p.Data.Message.Body)
		}
		return got
	}

	publish("before")
	if got := bodies(a); len(got) != 1 || got[0] != "before" {
		t.Fatalf("A got %q, want the first event signed with the first secret", got)
	}
	o := Call(ctx, f.env, Names(), "update_stream", json.RawMessage(`{"id":"s-hook","transport":{"config":{"outbound_url":"`+b.URL+`","secret":"`+rotatedSecret+`"}}}`))
	if o.Err != nil {
		t.Fatalf("update_stream: %v", o.Err)
	}
	publish("after")
	if got := bodies(b); len(got) != 1 || got[0] != "after" {
		t.Errorf("B got %q, want the next event signed with the new secret", got)
	}
	if r := b.Requests(); len(r) == 1 && webhooktest.Verify(retrySecret, r[0].Header, r[0].Body, time.Now()) == nil {
		t.Errorf("B's delivery verifies with the old secret too")
	}
	if got := bodies(a); len(got) != 1 {
		t.Errorf("A got %q after the update, want nothing more", got)
	}
}

// TestUpdateStreamLiftsGone: once a 410 Gone disabled s-hook's endpoint,
// moving where it sends enables it again, on the audit trail: the Gone
// was the old URL's answer. A rotated secret, a new name or the same URL
// leave it disabled until enable_endpoint.
func TestUpdateStreamLiftsGone(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		enabled bool
	}{
		{"a new outbound_url", `{"id":"s-hook","transport":{"config":{"outbound_url":"https://b.example/in"}}}`, true},
		{"outbound_url removed", `{"id":"s-hook","transport":{"config":{"outbound_url":null}}}`, true},
		{"a new secret", `{"id":"s-hook","transport":{"config":{"secret":"` + rotatedSecret + `"}}}`, false},
		{"a new name", `{"id":"s-hook","name":"hooks"}`, false},
		{"the same outbound_url", `{"id":"s-hook","transport":{"config":{"outbound_url":"https://example.com/in"}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			disableHook(t, f)
			ctx := t.Context()
			if o := Call(ctx, f.env, Names(), "update_stream", json.RawMessage(tt.args)); o.Err != nil {
				t.Fatalf("update_stream: %v", o.Err)
			}
			ids, err := f.env.Store.DisabledEndpoints(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if enabled := len(ids) == 0; enabled != tt.enabled {
				t.Errorf("endpoint enabled = %v (disabled: %v), want %v", enabled, ids, tt.enabled)
			}
			evs, err := f.env.Store.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{"s-org"}})
			must(t)(evs, err)
			var audited bool
			for _, ev := range evs {
				audited = audited || ev.Message.Subject == "enable_endpoint s-hook"
			}
			if audited != tt.enabled {
				t.Errorf("s-org has an enable_endpoint of s-hook: %v, want %v", audited, tt.enabled)
			}
		})
	}
}

//go:build !fuzzonly

// Left out of make fuzz's binaries (-tags fuzzonly): this file reaches the
// store, whose tree would be compiled again with fuzz instrumentation.

package github_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

const secret = "gh-webhook-secret-5f2c"

// fixture is a store with three github streams, an AI worker following
// each repository, and the handler served over HTTP.
//
//	s-docs      helixml/docs   issues, issue_comment, pull_request   (w-docs)
//	s-docs-prs  HelixML/docs   pull_request
//	s-other     helixml/other  issues                                (w-other)
type fixture struct {
	st     *store.Store
	url    string
	logs   *servertest.Logs
	budget *inbound.Budget
}

// backend is what the GitHub endpoint and the shared inbound handler read.
type backend interface{ transport.Store }

func newFixture(t *testing.T, wrap func(*store.Store) backend) fixture {
	t.Helper()
	st := storetest.NewWith(t, store.Options{Transports: transport.List{github.Transport}.Specs()})
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, nil); err != nil {
		t.Fatal(err)
	}
	mustDo(t, st.SetSetting(ctx, github.ConfigSetting, `{"webhook_secret":"`+secret+`"}`))
	_, err := st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-docs", Title: "Docs", Content: "Fix the docs."})
	mustDo(t, err)
	_, err = st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-docs", RoleID: "r-docs", Title: "Docs"})
	mustDo(t, err)
	for _, s := range []struct{ id, repo, events, worker string }{
		{"s-docs", "helixml/docs", `"issues","issue_comment","pull_request"`, "w-docs"},
		{"s-docs-prs", "HelixML/docs", `"pull_request"`, ""},
		{"s-other", "helixml/other", `"issues"`, "w-other"},
	} {
		_, err := st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: s.id, Name: s.id,
			Transport: domain.Transport{Kind: github.Kind, Config: []byte(`{"repo":"` + s.repo + `","events":[` + s.events + `]}`)}})
		mustDo(t, err)
		if s.worker != "" {
			_, err = st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: s.worker, Kind: domain.WorkerAI, PositionID: "p-docs", Name: s.worker}, nil)
			mustDo(t, err)
			_, err = st.Subscribe(ctx, store.OwnerWorker, s.id, s.worker)
			mustDo(t, err)
		}
	}
	logs := &servertest.Logs{}
	var be backend = st
	if wrap != nil {
		be = wrap(st)
	}
	budget := inbound.NewBudget(4 << 20)
	srv := httptest.NewServer(inbound.Mux(be, budget, logs.Logger(), github.Endpoint(be)))
	t.Cleanup(srv.Close)
	return fixture{st: st, url: srv.URL, logs: logs, budget: budget}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
}

func payload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// delivery is one request as GitHub would send it.
type delivery struct {
	event, id   string
	body        []byte
	signature   string // empty: signed with the secret; "-": no header
	contentType string
}

func (f fixture) send(t *testing.T, d delivery) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", f.url+"/github/webhook", bytes.NewReader(d.body))
	if err != nil {
		t.Fatal(err)
	}
	if d.contentType == "" {
		d.contentType = "application/json"
	}
	req.Header.Set("Content-Type", d.contentType)
	req.Header.Set("User-Agent", "GitHub-Hookshot/044aadd")
	req.Header.Set("X-GitHub-Hook-ID", "109948940")
	if d.event != "" {
		req.Header.Set("X-GitHub-Event", d.event)
	}
	if d.id != "" {
		req.Header.Set("X-GitHub-Delivery", d.id)
	}
	switch d.signature {
	case "":
		req.Header.Set(github.SignatureHeader, github.Sign(secret, d.body))
	case "-":
	default:
		req.Header.Set(github.SignatureHeader, d.signature)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// counts is how many events each github stream holds, and how many
// triggers are waiting to wake a worker.
type counts struct {
	Streams  map[string]int
	Triggers int64
}

func (f fixture) counts(t *testing.T) counts {
	t.Helper()
	c := counts{Streams: map[string]int{}}
	for _, s := range []string{"s-docs", "s-docs-prs", "s-other"} {
		evs, err := f.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{s}})
		if err != nil {
			t.Fatal(err)
		}
		c.Streams[s] = len(evs)
	}
	n, err := f.st.PendingTriggers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c.Triggers = n
	return c
}

func TestWebhook(t *testing.T) {
	issue := payload(t, "issues.json")
	form := []byte("payload=" + url.QueryEscape(string(issue)))
	cases := []struct {
		name       string
		busy       bool // the inbound budget is held by other bodies
		deliveries []delivery
		wantStatus int
		wantBody   string
		// wantNew is how many events each stream gained; triggers is how
		// many workers are now due to wake.
		wantNew      map[string]int
		wantTriggers int64
	}{
		{name: "issue wakes the docs worker only", deliveries: []delivery{{event: "issues", id: "d-1", body: issue}},
			wantStatus: 200, wantBody: `"events":[{"event":"e-`, wantNew: map[string]int{"s-docs": 1}, wantTriggers: 1},
		{name: "a redelivery is stored once", deliveries: []delivery{{event: "issues", id: "d-1", body: issue}, {event: "issues", id: "d-1", body: issue}},
			wantStatus: 200, wantBody: `"duplicate":true`, wantNew: map[string]int{"s-docs": 1}, wantTriggers: 1},
		{name: "two deliveries are two events", deliveries: []delivery{{event: "issues", id: "d-1", body: issue}, {event: "issues", id: "d-2", body: issue}},
			wantStatus: 200, wantNew: map[string]int{"s-docs": 2}, wantTriggers: 2},
		{name: "fanned out to every stream of the repo, case-insensitively", deliveries: []delivery{{event: "pull_request", id: "d-1", body: payload(t, "pull_request.json")}},
			wantStatus: 200, wantNew: map[string]int{"s-docs": 1, "s-docs-prs": 1}, wantTriggers: 1},
		{name: "comment", deliveries: []delivery{{event: "issue_comment", id: "d-1", body: payload(t, "issue_comment.json")}},
			wantStatus: 200, wantNew: map[string]int{"s-docs": 1}, wantTriggers: 1},
		{name: "form-encoded delivery", deliveries: []delivery{{event: "issues", id: "d-1", body: form, contentType: "application/x-www-form-urlencoded"}},
			wantStatus: 200, wantNew: map[string]int{"s-docs": 1}, wantTriggers: 1},
		{name: "ping", deliveries: []delivery{{event: "ping", id: "d-1", body: payload(t, "ping.json")}},
			wantStatus: 200, wantBody: "pong"},
		{name: "unknown repository: accepted, nothing stored", deliveries: []delivery{{event: "issues", id: "d-1", body: []byte(`{"action":"opened","issue":{"number":1,"title":"t"},"repository":{"full_name":"someone/else"}}`)}},
			wantStatus: 202, wantBody: `nothing stored`},
		{name: "event no stream selects", deliveries: []delivery{{event: "push", id: "d-1", body: []byte(`{"ref":"refs/heads/main","repository":{"full_name":"helixml/docs"}}`)}},
			wantStatus: 202, wantBody: `no github stream selects \"push\" events`},
		// GitHub's event names have digits too: a real projects_v2_item delivery
		// (octokit's example) is accepted, not refused as malformed.
		{name: "an event name with a digit", deliveries: []delivery{{event: "projects_v2_item", id: "d-1", body: payload(t, "projects_v2_item.json")}},
			wantStatus: 202, wantBody: `no github stream selects \"projects_v2_item\" events`},
		{name: "an event name in capitals", deliveries: []delivery{{event: "Issues", id: "d-1", body: issue}},
			wantStatus: 400, wantBody: `X-GitHub-Event: \"Issues\" is not an event name`},
		{name: "an event name with a dash", deliveries: []delivery{{event: "pull-request", id: "d-1", body: issue}},
			wantStatus: 400, wantBody: `X-GitHub-Event: \"pull-request\" is not an event name`},
		{name: "missing signature", deliveries: []delivery{{event: "issues", id: "d-1", body: issue, signature: "-"}},
			wantStatus: 401, wantBody: "missing or malformed X-Hub-Signature-256"},
		{name: "signed with another secret", deliveries: []delivery{{event: "issues", id: "d-1", body: issue, signature: github.Sign("guess", issue)}},
			wantStatus: 401},
		{name: "signature of another body", deliveries: []delivery{{event: "issues", id: "d-1", body: issue, signature: github.Sign(secret, []byte("{}"))}},
			wantStatus: 401},
		{name: "legacy sha1 form", deliveries: []delivery{{event: "issues", id: "d-1", body: issue, signature: "sha1=" + strings.TrimPrefix(github.Sign(secret, issue), "sha256=")}},
			wantStatus: 401},
		{name: "unsigned ping", deliveries: []delivery{{event: "ping", id: "d-1", body: payload(t, "ping.json"), signature: "-"}},
			wantStatus: 401},
		{name: "malformed signature", deliveries: []delivery{{event: "issues", id: "d-1", body: issue, signature: "sha256=zz"}},
			wantStatus: 401, wantBody: "missing or malformed X-Hub-Signature-256"},
		{name: "truncated signature", deliveries: []delivery{{event: "issues", id: "d-1", body: issue, signature: github.Sign(secret, issue)[:20]}},
			wantStatus: 401, wantBody: "missing or malformed X-Hub-Signature-256"},
		{name: "signature of another body says so", deliveries: []delivery{{event: "issues", id: "d-1", body: issue, signature: github.Sign(secret, []byte("{}"))}},
			wantStatus: 401, wantBody: "X-Hub-Signature-256 does not match the body"},
		{name: "empty payload: nothing to store", deliveries: []delivery{{event: "issues", id: "d-1", body: []byte(` {} `)}},
			wantStatus: 400, wantBody: "payload: is an empty JSON object; there is nothing to store"},
		{name: "title over the limit", deliveries: []delivery{{event: "issues", id: "d-1", body: []byte(`{"action":"opened","issue":{"number":1,"title":"` + strings.Repeat("t", domain.MaxSubject+1) + `"},"repository":{"full_name":"helixml/docs"}}`)}},
			wantStatus: 400, wantBody: "subject: is 2049 bytes; the limit is 2048"},
		{name: "delivery id over the limit", deliveries: []delivery{{event: "issues", id: strings.Repeat("d", domain.MaxMessageRef+1), body: issue}},
			wantStatus: 400, wantBody: "messageId: is 1025 bytes; the limit is 1024"},
		{name: "an event without text is stored with a summary", deliveries: []delivery{{event: "issues", id: "d-1", body: []byte(`{"action":"closed","issue":{"number":1,"title":"t","body":null},"repository":{"full_name":"helixml/docs"}}`)}},
			wantStatus: 200, wantNew: map[string]int{"s-docs": 1}, wantTriggers: 1},
		{name: "inbound budget in use: 503 with Retry-After", busy: true, deliveries: []delivery{{event: "issues", id: "d-1", body: issue}},
			wantStatus: 503, wantBody: "too many request bodies in flight"},
		{name: "malformed JSON", deliveries: []delivery{{event: "issues", id: "d-1", body: []byte(`{"action":"opened",`)}},
			wantStatus: 400, wantBody: "not a JSON object"},
		{name: "missing event header", deliveries: []delivery{{id: "d-1", body: issue}},
			wantStatus: 400, wantBody: "X-GitHub-Event"},
		{name: "JSON nested 1,000 deep", deliveries: []delivery{{event: "issues", id: "d-1", body: []byte(`{"a":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + "}")}},
			wantStatus: 400, wantBody: "body: is JSON nested more than 100 levels deep; the limit is 100"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			if tc.busy {
				holdBudget(t, f.budget, 4<<20)
			}
			before := f.counts(t)
			var code int
			var body string
			for _, d := range tc.deliveries {
				code, body = f.send(t, d)
			}
			if code != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
				t.Errorf("last answer = %d %s, want %d containing %q", code, body, tc.wantStatus, tc.wantBody)
			}
			want := counts{Streams: map[string]int{}, Triggers: before.Triggers + tc.wantTriggers}
			for s, n := range before.Streams {
				want.Streams[s] = n + tc.wantNew[s]
			}
			if diff := cmp.Diff(want, f.counts(t)); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
			if strings.Contains(body+f.logs.String(), secret) {
				t.Errorf("the webhook secret leaked into an answer or the log:\n%s\n%s", body, f.logs.String())
			}
		})
	}
}

// TestStoredEnvelope checks what a worker reads for an issue delivery.
func TestStoredEnvelope(t *testing.T) {
	f := newFixture(t, nil)
	if code, body := f.send(t, delivery{event: "issues", id: "72d3162e-cc78-11e3-81ab-4c9367dc0958", body: payload(t, "issues.json")}); code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	evs, err := f.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-docs"}})
	if err != nil || len(evs) != 1 {
		t.Fatalf("events on s-docs: %v, %v", evs, err)
	}
	ev := evs[0]
	if ev.Source != "" || ev.SourceKind != domain.SourceSystem {
		t.Errorf("source = %q (%s), want the outside world", ev.Source, ev.SourceKind)
	}
	m := ev.Message
	got := []string{m.From, m.Subject, m.ThreadID, m.MessageID}
	want := []string{"octocat", "Install guide skips the key file", "#42", "72d3162e-cc78-11e3-81ab-4c9367dc0958"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("envelope (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(m.Extra), `"event":"issues"`) || !strings.Contains(string(m.Extra), `"action":"opened"`) {
		t.Errorf("extra lacks event and action: %s", m.Extra)
	}
}

// TestSecretAppliesLive: transport.github is read per request.
func TestSecretAppliesLive(t *testing.T) {
	f := newFixture(t, nil)
	issue := payload(t, "issues.json")
	mustDo(t, f.st.SetSetting(t.Context(), github.ConfigSetting, `{"webhook_secret":"rotated"}`))
	if code, _ := f.send(t, delivery{event: "issues", id: "d-1", body: issue}); code != 401 {
		t.Errorf("old secret after rotation: %d, want 401", code)
	}
	if code, _ := f.send(t, delivery{event: "issues", id: "d-1", body: issue, signature: github.Sign("rotated", issue)}); code != 200 {
		t.Errorf("new secret: %d, want 200", code)
	}
	if err := f.st.DeleteSetting(t.Context(), github.ConfigSetting.Key); err != nil {
		t.Fatal(err)
	}
	code, body := f.send(t, delivery{event: "issues", id: "d-2", body: issue, signature: github.Sign("", issue)})
	if code != 401 || !strings.Contains(body, "no webhook_secret") {
		t.Errorf("without a secret: %d %s, want 401 naming the missing secret", code, body)
	}
}

func TestOversizeBody(t *testing.T) {
	f := newFixture(t, nil)
	mustDo(t, f.st.SetSetting(t.Context(), github.MaxBodySetting, "1024"))
	before := f.counts(t)
	big := []byte(`{"action":"opened","issue":{"number":1,"title":"t","body":"` + strings.Repeat("x", 2048) + `"},"repository":{"full_name":"helixml/docs"}}`)
	if code, body := f.send(t, delivery{event: "issues", id: "d-1", body: big}); code != 413 {
		t.Errorf("oversize body: %d %s, want 413", code, body)
	}
	// Chunked, with no Content-Length to refuse it by: cut off while reading.
	req, _ := http.NewRequest("POST", f.url+"/github/webhook", io.MultiReader(bytes.NewReader(big)))
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set(github.SignatureHeader, github.Sign(secret, big))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if req.ContentLength != 0 || resp.StatusCode != 413 {
		t.Errorf("chunked oversize body (length %d): %d, want 413", req.ContentLength, resp.StatusCode)
	}
	if diff := cmp.Diff(before, f.counts(t)); diff != "" {
		t.Errorf("an oversize body changed the store (-before +after):\n%s", diff)
	}
}

// failingStore commits nothing: every append fails.
type failingStore struct{ *store.Store }

func (failingStore) AppendInbound(context.Context, []domain.Inbound, int) ([]domain.Receipt, error) {
	return nil, errors.New("disk I/O error")
}

// TestStoreFailureIsNot2xx: GitHub must never see success for a delivery
// that was not committed.
func TestStoreFailureIsNot2xx(t *testing.T) {
	f := newFixture(t, func(st *store.Store) backend { return failingStore{st} })
	code, body := f.send(t, delivery{event: "issues", id: "d-1", body: payload(t, "issues.json")})
	if code != 500 || strings.Contains(body, "disk") {
		t.Errorf("store failure: %d %s, want 500 without the detail", code, body)
	}
	if !strings.Contains(f.logs.String(), "disk I/O error") {
		t.Errorf("the 5xx was not logged:\n%s", f.logs.String())
	}
}

// holdBudget takes n bytes of the budget, as bodies in flight would,
// until the test ends.
func holdBudget(t *testing.T, b *inbound.Budget, n int) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("x", n)))
	body, err := b.Read(httptest.NewRecorder(), r, int64(n), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(body.Release)
}

// TestLargePayloadIsAnAttachment: a payload too large for extra is stored
// whole as payload.json; extra keeps what a role routes on.
func TestLargePayloadIsAnAttachment(t *testing.T) {
	f := newFixture(t, nil)
	body := []byte(`{"action":"opened","issue":{"number":9,"title":"Big","body":"` + strings.Repeat("b", domain.MaxExtra) + `"},` +
		`"repository":{"full_name":"helixml/docs"},"sender":{"login":"octocat"}}`)
	if code, answer := f.send(t, delivery{event: "issues", id: "d-big", body: body}); code != 200 {
		t.Fatalf("large payload: %d %s", code, answer)
	}
	evs, err := f.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-docs"}})
	if err != nil || len(evs) != 1 {
		t.Fatalf("events: %v %v", evs, err)
	}
	m := evs[0].Message
	var outline map[string]any
	if err := json.Unmarshal(m.Extra, &outline); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"event": "issues", "action": "opened", "repository": map[string]any{"full_name": "helixml/docs"},
		"sender": map[string]any{"login": "octocat"}, "payload": fmt.Sprintf("%d bytes, too large for extra: read the attachment payload.json", len(body))}
	if diff := cmp.Diff(want, outline); diff != "" {
		t.Errorf("extra (-want +got):\n%s", diff)
	}
	if len(m.Attachments) != 1 || m.Attachments[0].Name != github.PayloadAttachment {
		t.Fatalf("attachments = %+v", m.Attachments)
	}
	file, err := f.st.Attachment(t.Context(), m.Attachments[0].Ref)
	if err != nil || !bytes.Equal(file.Content, body) {
		t.Errorf("payload.json holds %d bytes (%v), want the %d-byte payload", len(file.Content), err, len(body))
	}
}

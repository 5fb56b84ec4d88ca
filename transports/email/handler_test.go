//go:build !fuzzonly

// Left out of make fuzz's binaries (-tags fuzzonly): this file reaches the
// store, whose tree would be compiled again with fuzz instrumentation.

package email_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/email"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Secrets a test checks never leak.
const (
	serverToken     = "pm-server-token-0b9e"
	inboundUser     = "postmark"
	inboundPassword = "inbound-pass-77c1"
)

func config(apiURL string) string {
	b, _ := json.Marshal(email.Config{ServerToken: serverToken, From: "support@example.com",
		InboundAddress: "451d9b70cf9364d23ff6f9d51d870251569e@inbound.postmarkapp.com",
		InboundUser:    inboundUser, InboundPassword: inboundPassword, APIURL: apiURL})
	return string(b)
}

// fixture: email streams s-support (alias sam, followed by AI worker
// w-sam) and s-billing (alias billing), the inbound handler over HTTP.
type fixture struct {
	st     *store.Store
	url    string
	logs   *servertest.Logs
	budget *inbound.Budget
}

// backend is what the email endpoint and the shared inbound handler read.
type backend interface{ transport.Store }

func newFixture(t *testing.T, wrap func(*store.Store) backend) fixture {
	t.Helper()
	st := storetest.NewWith(t, store.Options{Transports: transport.List{email.Transport}.Specs()})
	ctx := t.Context()
	_, err := st.Bootstrap(ctx, nil)
	mustDo(t, err)
	mustDo(t, st.SetSetting(ctx, email.ConfigSetting, config("http://127.0.0.1:1")))
	_, err = st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-support", Title: "Support", Content: "Answer customers."})
	mustDo(t, err)
	_, err = st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-support", RoleID: "r-support", Title: "Support"})
	mustDo(t, err)
	_, err = st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-sam", Kind: domain.WorkerAI, PositionID: "p-support", Name: "Sam"}, nil)
	mustDo(t, err)
	for id, alias := range map[string]string{"s-support": "sam", "s-billing": "billing"} {
		_, err := st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: id, Name: id,
			Transport: domain.Transport{Kind: email.Kind, Config: []byte(`{"alias":"` + alias + `"}`)}})
		mustDo(t, err)
	}
	_, err = st.Subscribe(ctx, store.OwnerWorker, "s-support", "w-sam")
	mustDo(t, err)
	logs := &servertest.Logs{}
	var be backend = st
	if wrap != nil {
		be = wrap(st)
	}
	budget := inbound.NewBudget(1 << 20)
	srv := httptest.NewServer(inbound.Mux(be, budget, logs.Logger(), email.Endpoint(be)))
	t.Cleanup(srv.Close)
	return fixture{st: st, url: srv.URL, logs: logs, budget: budget}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withRecipient readdresses a testdata message to <hash>+alias@….
func withRecipient(t *testing.T, name, alias string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(testdata(t, name), &m); err != nil {
		t.Fatal(err)
	}
	addr := "451d9b70cf9364d23ff6f9d51d870251569e+" + alias + "@inbound.postmarkapp.com"
	m["OriginalRecipient"], m["MailboxHash"] = addr, alias
	m["ToFull"] = []map[string]string{{"Email": addr, "MailboxHash": alias}}
	b, _ := json.Marshal(m)
	return b
}

// post sends body as Postmark would; user "" sends no basic auth.
func (f fixture) post(t *testing.T, user, pass string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", f.url+"/email/postmark", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type counts struct {
	Support, Billing int
	Triggers         int64
}

func (f fixture) counts(t *testing.T) counts {
	t.Helper()
	n := func(s string) int {
		evs, err := f.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{s}})
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}
	trig, err := f.st.PendingTriggers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return counts{Support: n("s-support"), Billing: n("s-billing"), Triggers: trig}
}

func TestInbound(t *testing.T) {
	first := testdata(t, "inbound.json")
	type post struct {
		user, pass string
		body       []byte
	}
	ok := func(body []byte) post { return post{inboundUser, inboundPassword, body} }
	cases := []struct {
		name       string
		setup      func(t *testing.T, f fixture)
		posts      []post
		wantStatus int
		wantBody   string
		wantNew    counts
	}{
		{name: "routed by alias, wakes the follower", posts: []post{ok(first)},
			wantStatus: 200, wantBody: `"stream":"s-support","seq":`, wantNew: counts{Support: 1, Triggers: 1}},
		{name: "a retried MessageID is stored once", posts: []post{ok(first), ok(first)},
			wantStatus: 200, wantBody: `"duplicate":true`, wantNew: counts{Support: 1, Triggers: 1}},
		{name: "another alias, another stream", posts: []post{ok(withRecipient(t, "inbound.json", "billing"))},
			wantStatus: 200, wantNew: counts{Billing: 1}},
		{name: "alias matched case-insensitively", posts: []post{ok(withRecipient(t, "inbound.json", "Billing"))},
			wantStatus: 200, wantNew: counts{Billing: 1}},
		{name: "unknown alias: 403 so Postmark stops", posts: []post{ok(withRecipient(t, "inbound.json", "nobody"))},
			wantStatus: 403, wantBody: `"unknown alias: no email stream has alias \"nobody\""`},
		{name: "no alias at all", posts: []post{ok([]byte(`{"From":"a@b.c","OriginalRecipient":"h@inbound.postmarkapp.com","MessageID":"x","TextBody":"hi"}`))},
			wantStatus: 403},
		{name: "missing basic auth", posts: []post{{"", "", first}}, wantStatus: 401, wantBody: "basic auth required"},
		{name: "wrong password", posts: []post{{inboundUser, "guess", first}}, wantStatus: 401},
		{name: "inbound credentials not configured", posts: []post{ok(first)},
			setup: func(t *testing.T, f fixture) {
				mustDo(t, f.st.SetSetting(t.Context(), email.ConfigSetting, `{"server_token":"`+serverToken+`"}`))
			},
			wantStatus: 401, wantBody: "refused until they are set"},
		{name: "JSON nested 1,000 deep", posts: []post{ok([]byte(`{"a":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + "}"))}, wantStatus: 400, wantBody: "body: is JSON nested more than 100 levels deep; the limit is 100"},
		{name: "malformed JSON", posts: []post{ok([]byte(`{"From":"a@b.c",`))}, wantStatus: 400, wantBody: "not Postmark inbound JSON"},
		{name: "bad attachment content", posts: []post{ok([]byte(`{"OriginalRecipient":"h+sam@x","Attachments":[{"Name":"a.pdf","Content":"!!"}]}`))},
			wantStatus: 400, wantBody: "not base64"},
		{name: "no text and no attachments: refused, nothing stored", posts: []post{ok(mail(t, map[string]any{"TextBody": " \n", "HtmlBody": "", "StrippedTextReply": "", "Attachments": nil}))},
			wantStatus: 400, wantBody: "body: is required: the email has no text"},
		{name: "attachments only: stored", posts: []post{ok(mail(t, map[string]any{"TextBody": "", "HtmlBody": "", "StrippedTextReply": ""}))},
			wantStatus: 200, wantNew: counts{Support: 1, Triggers: 1}},
		{name: "subject over the limit", posts: []post{ok(mail(t, map[string]any{"Subject": strings.Repeat("s", domain.MaxSubject+1)}))},
			wantStatus: 400, wantBody: "subject: is 2049 bytes; the limit is 2048"},
		{name: "too many recipients", posts: []post{ok(mail(t, map[string]any{"ToFull": addresses(domain.MaxRecipients + 1)}))},
			wantStatus: 400, wantBody: "to: has 1001 entries; the limit is 1000"},
		{name: "Message-ID over the limit", posts: []post{ok(mail(t, map[string]any{"Headers": []map[string]string{{"Name": "Message-ID", "Value": "<" + strings.Repeat("m", domain.MaxMessageRef) + ">"}}}))},
			wantStatus: 400, wantBody: "messageId: is 1026 bytes; the limit is 1024"},
		{name: "too many attachments", posts: []post{ok(mail(t, map[string]any{"Attachments": attachments(domain.MaxAttachments + 1)}))},
			wantStatus: 400, wantBody: "attachments: has 101 entries; the limit is 100"},
		{name: "inbound budget in use: 503 with Retry-After", posts: []post{ok(first)},
			setup:      func(t *testing.T, f fixture) { holdBudget(t, f.budget, 1<<20) },
			wantStatus: 503, wantBody: "too many request bodies in flight"},
		{name: "oversize body", posts: []post{ok(first)},
			setup:      func(t *testing.T, f fixture) { mustDo(t, f.st.SetSetting(t.Context(), email.MaxBodySetting, "512")) },
			wantStatus: 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			before := f.counts(t)
			var code int
			var body string
			for _, p := range tc.posts {
				code, body = f.post(t, p.user, p.pass, p.body)
			}
			if code != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
				t.Errorf("last answer = %d %s, want %d containing %q", code, body, tc.wantStatus, tc.wantBody)
			}
			want := counts{Support: before.Support + tc.wantNew.Support, Billing: before.Billing + tc.wantNew.Billing, Triggers: before.Triggers + tc.wantNew.Triggers}
			if diff := cmp.Diff(want, f.counts(t)); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
			for _, s := range []string{serverToken, inboundPassword} {
				if strings.Contains(body+f.logs.String(), s) {
					t.Errorf("secret %q leaked into an answer or the log", s)
				}
			}
		})
	}
}

// TestInboundAttachmentKept: the envelope names the file; its content is
// retrievable by the ref.
func TestInboundAttachmentKept(t *testing.T) {
	f := newFixture(t, nil)
	if code, body := f.post(t, inboundUser, inboundPassword, testdata(t, "inbound.json")); code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	evs, err := f.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-support"}})
	if err != nil || len(evs) != 1 {
		t.Fatalf("events: %v %v", evs, err)
	}
	atts := evs[0].Message.Attachments
	if len(atts) != 1 || atts[0].Name != "invoice-1843.txt" || atts[0].Size != 21 || !strings.HasPrefix(atts[0].Ref, "att-") {
		t.Fatalf("attachments = %+v", atts)
	}
	file, err := f.st.Attachment(t.Context(), atts[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	if string(file.Content) != "March 2026: 2 x 49.00" || file.EventID != evs[0].ID || file.StreamID != "s-support" {
		t.Errorf("stored attachment = %+v", file)
	}
}

// failingStore commits nothing.
type failingStore struct{ *store.Store }

func (failingStore) AppendInbound(context.Context, []domain.Inbound, int) ([]domain.Receipt, error) {
	return nil, errors.New("database is locked")
}

// TestInboundStoreFailure: Postmark must retry (5xx) what was not committed.
func TestInboundStoreFailure(t *testing.T) {
	f := newFixture(t, func(st *store.Store) backend { return failingStore{st} })
	code, body := f.post(t, inboundUser, inboundPassword, testdata(t, "inbound.json"))
	if code != 500 || strings.Contains(body, "locked") {
		t.Errorf("store failure: %d %s, want 500 without the detail", code, body)
	}
}

// mail is testdata/inbound.json (to alias sam) with fields replaced.
func mail(t *testing.T, fields map[string]any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(testdata(t, "inbound.json"), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

func addresses(n int) []map[string]string {
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = map[string]string{"Email": fmt.Sprintf("r%d@example.com", i)}
	}
	return out
}

func attachments(n int) []map[string]string {
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = map[string]string{"Name": fmt.Sprintf("a%d.txt", i), "Content": "eA==", "ContentType": "text/plain"}
	}
	return out
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

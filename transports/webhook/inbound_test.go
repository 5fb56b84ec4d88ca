//go:build !fuzzonly

// Left out of make fuzz's binaries (-tags fuzzonly): this file reaches the
// store, whose tree would be compiled again with fuzz instrumentation.

package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
	"github.com/helixml/helix-org/transports/webhook"
	"github.com/helixml/helix-org/transports/webhook/webhooktest"
)

// inboundRig is a real server over a real store with four streams — s-hook
// (webhook, secret), s-open (webhook, no secret), s-local (local), s-gone
// (webhook, secret, archived) — and an AI worker w-bot subscribed to all
// of them.
type inboundRig struct {
	st     *store.Store
	url    string
	budget *inbound.Budget
}

// backend is what the webhook endpoint and the shared inbound handler read.
type backend interface{ transport.Store }

// transports is the registry a binary with only the webhook transport has.
var transports = transport.List{webhook.Transport}.Specs()

func newInboundRig(t *testing.T, wrap func(*store.Store) backend) inboundRig {
	t.Helper()
	st := storetest.NewWith(t, store.Options{Transports: transports})
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, []string{"publish"}); err != nil {
		t.Fatal(err)
	}
	must(t)(st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-bot", Title: "Bot", Content: "x"}))
	must(t)(st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-bot", RoleID: "r-bot", Title: "Bot"}))
	must(t)(st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-bot", Name: "Bot"}, nil))
	for _, s := range []domain.Stream{
		{ID: "s-hook", Name: "hook", Transport: domain.Transport{Kind: webhook.Kind, Config: json.RawMessage(`{"secret":"` + secret + `"}`)}},
		{ID: "s-open", Name: "open", Transport: domain.Transport{Kind: webhook.Kind}},
		{ID: "s-local", Name: "local", Transport: domain.Transport{Kind: domain.TransportLocal}},
		{ID: "s-gone", Name: "gone", Transport: domain.Transport{Kind: webhook.Kind, Config: json.RawMessage(`{"secret":"` + secret + `"}`)}},
	} {
		must(t)(st.CreateStream(ctx, "w-owner", s))
		must(t)(st.Subscribe(ctx, "w-owner", s.ID, "w-bot"))
	}
	must(t)(st.ArchiveStream(ctx, "", "s-gone"))
	must(t)(nil, st.SetSetting(ctx, webhook.MaxBodySetting, "1024"))
	var ws backend = st
	if wrap != nil {
		ws = wrap(st)
	}
	budget := inbound.NewBudget(64 << 10)
	srv := httptest.NewServer(inbound.Mux(ws, budget, nil, webhook.Endpoint(ws, nil)))
	t.Cleanup(srv.Close)
	return inboundRig{st: st, url: srv.URL, budget: budget}
}

func must(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
}

// post sends body to path with the given headers and returns status and answer.
func post(t testing.TB, url string, h http.Header, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// state is what a refused request must leave exactly as it was.
type state struct {
	lastSeq  int64
	triggers int64
}

func (r inboundRig) state(t *testing.T) state {
	t.Helper()
	seq, err := r.st.LastSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	n, err := r.st.PendingTriggers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return state{seq, n}
}

func signed(id, contentType, body string, at time.Time) http.Header {
	h := webhooktest.Sign(secret, id, at, []byte(body))
	h.Set("Content-Type", contentType)
	return h
}

func plain(contentType string) http.Header {
	return http.Header{"Content-Type": {contentType}}
}

func TestInbound(t *testing.T) {
	now := time.Now()
	big := strings.Repeat("x", 1025)
	deep := `{"a":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "}" // within the rig's 1 KiB
	tests := []struct {
		name       string
		path       string
		header     http.Header
		body       string
		wantStatus int
		wantIn     string
		// wantMsg, when set, is the stored message.
		wantMsg *domain.Message
		// busy holds the whole inbound budget while the request is sent.
		busy bool
	}{
		{name: "text on an open stream", path: "/webhooks/s-open", header: plain("text/plain"), body: "hello",
			wantStatus: 200, wantMsg: &domain.Message{Body: "hello", BodyContentType: "text/plain"}},
		{name: "signed JSON", path: "/webhooks/s-hook", header: signed("msg_1", "application/json", `{"n": 1}`, now), body: `{"n": 1}`,
			wantStatus: 200, wantMsg: &domain.Message{Body: `{"n": 1}`, BodyContentType: "application/json", Extra: []byte(`{"n":1}`), MessageID: "msg_1"}},
		{name: "form", path: "/webhooks/s-open", header: plain("application/x-www-form-urlencoded"), body: "name=Ada&msg=hi+there",
			wantStatus: 200, wantMsg: &domain.Message{Body: "name=Ada&msg=hi+there", BodyContentType: "application/x-www-form-urlencoded", Extra: []byte(`{"msg":"hi there","name":"Ada"}`)}},
		{name: "body exactly at the limit", path: "/webhooks/s-open", header: plain("text/plain"), body: big[:1024], wantStatus: 200},
		{name: "bad signature", path: "/webhooks/s-hook", header: signed("msg_2", "application/json", `{"n": 2}`, now), body: `{"n": 3}`,
			wantStatus: 401, wantIn: "no matching v1 signature"},
		{name: "stale timestamp", path: "/webhooks/s-hook", header: signed("msg_3", "text/plain", "hi", now.Add(-6*time.Minute)), body: "hi",
			wantStatus: 401, wantIn: "tolerance is 5m0s"},
		{name: "timestamp from the future", path: "/webhooks/s-hook", header: signed("msg_4", "text/plain", "hi", now.Add(6*time.Minute)), body: "hi",
			wantStatus: 401, wantIn: "tolerance is 5m0s"},
		{name: "unsigned on a stream with a secret", path: "/webhooks/s-hook", header: plain("text/plain"), body: "hi",
			wantStatus: 401, wantIn: "missing webhook-id"},
		{name: "oversize body", path: "/webhooks/s-open", header: plain("text/plain"), body: big, wantStatus: 413},
		{name: "oversize body on a signed stream", path: "/webhooks/s-hook", header: signed("msg_5", "text/plain", big, now), body: big, wantStatus: 413},
		{name: "malformed JSON", path: "/webhooks/s-open", header: plain("application/json"), body: `{"n":`, wantStatus: 400, wantIn: "not valid JSON"},
		{name: "malformed JSON, validly signed", path: "/webhooks/s-hook", header: signed("msg_6", "application/json", `{"n":`, now), body: `{"n":`,
			wantStatus: 400, wantIn: "not valid JSON"},
		{name: "JSON nested 201 deep", path: "/webhooks/s-open", header: plain("application/json"), body: deep, wantStatus: 400, wantIn: "body: is JSON nested more than 100 levels deep; the limit is 100"},
		{name: "JSON nested 201 deep, validly signed", path: "/webhooks/s-hook", header: signed("msg_9", "application/cloudevents+json", deep, now), body: deep, wantStatus: 400, wantIn: "body: is JSON nested more than 100 levels deep; the limit is 100"},
		{name: "nesting in text is text", path: "/webhooks/s-open", header: plain("text/plain"), body: deep, wantStatus: 200},
		{name: "empty body", path: "/webhooks/s-open", header: plain("text/plain"), body: "", wantStatus: 400, wantIn: "body: is required"},
		{name: "not UTF-8", path: "/webhooks/s-open", header: plain("application/octet-stream"), body: "\xff\xfe", wantStatus: 415},
		{name: "webhook-id too long", path: "/webhooks/s-open", header: http.Header{"Webhook-Id": {strings.Repeat("i", 257)}}, body: "hi", wantStatus: 400},
		{name: "empty JSON object", path: "/webhooks/s-open", header: plain("application/json"), body: ` { } `, wantStatus: 400,
			wantIn: "body: is an empty JSON value ({}); there is nothing to store"},
		{name: "JSON null, validly signed", path: "/webhooks/s-hook", header: signed("msg_7", "application/json", "null", now), body: "null", wantStatus: 400,
			wantIn: "body: is an empty JSON value (null)"},
		{name: "form without fields", path: "/webhooks/s-open", header: plain("application/x-www-form-urlencoded"), body: "&&", wantStatus: 400,
			wantIn: "body: is a form without fields"},
		{name: "no v1 signature", path: "/webhooks/s-hook", body: "hi", wantStatus: 401, wantIn: "webhook-signature has no v1 signature",
			header: http.Header{"Webhook-Id": {"msg_8"}, "Webhook-Timestamp": {fmt.Sprint(now.Unix())}, "Webhook-Signature": {"v2,abc"}}},
		{name: "Content-Type over the limit", path: "/webhooks/s-open", header: plain("text/plain; x=" + strings.Repeat("y", 242)), body: "hi", wantStatus: 400,
			wantIn: "bodyContentType: is 256 bytes; the limit is 255"},
		{name: "inbound budget in use: 503, nothing read", path: "/webhooks/s-open", header: plain("text/plain"), body: "hi", busy: true, wantStatus: 503,
			wantIn: "too many request bodies in flight"},
		{name: "unknown stream", path: "/webhooks/s-nope", header: plain("text/plain"), body: "hi", wantStatus: 404, wantIn: `s-nope\": not found`},
		{name: "wrong kind", path: "/webhooks/s-local", header: plain("text/plain"), body: "hi", wantStatus: 409, wantIn: `s-local is a local stream, not a webhook stream"`},
		{name: "an archived stream: 410, so the sender stops", path: "/webhooks/s-gone", header: signed("msg_10", "text/plain", "hi", now), body: "hi",
			wantStatus: 410, wantIn: `"stream: s-gone is archived: it takes no new events`},
		{name: "an archived stream, unsigned", path: "/webhooks/s-gone", header: plain("text/plain"), body: "hi", wantStatus: 410, wantIn: "s-gone is archived"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newInboundRig(t, nil)
			if tt.busy {
				holdBudget(t, r.budget, 64<<10)
			}
			before := r.state(t)
			code, answer := post(t, r.url+tt.path, tt.header, tt.body)
			if code != tt.wantStatus || !strings.Contains(answer, tt.wantIn) {
				t.Fatalf("got %d %s, want %d containing %q", code, answer, tt.wantStatus, tt.wantIn)
			}
			after := r.state(t)
			if code >= 300 {
				if after != before {
					t.Errorf("refused request changed the store: %+v → %+v", before, after)
				}
				return
			}
			var acc inbound.Answer
			if err := json.Unmarshal([]byte(answer), &acc); err != nil || len(acc.Events) != 1 {
				t.Fatalf("answer %s: %v", answer, err)
			}
			ev, err := r.st.GetEvent(t.Context(), acc.Events[0].Event)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Source != "" || ev.SourceKind != domain.SourceSystem {
				t.Errorf("inbound event source = %q/%s, want the system", ev.Source, ev.SourceKind)
			}
			if after.triggers != before.triggers+1 {
				t.Errorf("triggers %d → %d, want the subscriber woken once", before.triggers, after.triggers)
			}
			if tt.wantMsg != nil {
				if diff := cmpJSON(*tt.wantMsg, ev.Message); diff != "" {
					t.Errorf("stored message (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func cmpJSON(want, got domain.Message) string {
	w, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	if string(w) != string(g) {
		return "- " + string(w) + "\n+ " + string(g)
	}
	return ""
}

// TestInboundDedup: a repeated webhook-id (a sender's retry, or a replay
// inside the tolerance) is acknowledged and stored once.
func TestInboundDedup(t *testing.T) {
	r := newInboundRig(t, nil)
	h := signed("msg_retry", "text/plain", "once", time.Now())
	var got []inbound.Stored
	for range 3 {
		code, answer := post(t, r.url+"/webhooks/s-hook", h, "once")
		if code != 200 {
			t.Fatalf("got %d %s", code, answer)
		}
		var acc inbound.Answer
		json.Unmarshal([]byte(answer), &acc)
		got = append(got, acc.Events...)
	}
	if got[0].Duplicate || !got[1].Duplicate || !got[2].Duplicate || got[1].Event != got[0].Event {
		t.Errorf("answers = %+v, want the first new and the rest duplicates of it", got)
	}
	evs, _ := r.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-hook"}})
	if len(evs) != 1 {
		t.Errorf("stored %d events, want 1", len(evs))
	}
	// The same id on another stream is another delivery.
	if code, _ := post(t, r.url+"/webhooks/s-open", http.Header{"Webhook-Id": {"msg_retry"}}, "other"); code != 200 {
		t.Errorf("same id on another stream: %d", code)
	}
}

// archivingAppend is the real store except that the stream is archived
// just before a message is stored on it, after the request's check.
type archivingAppend struct{ *store.Store }

func (a archivingAppend) AppendInbound(ctx context.Context, in []domain.Inbound, maxBody int) ([]domain.Receipt, error) {
	if _, err := a.ArchiveStream(ctx, "", in[0].StreamID); err != nil {
		return nil, err
	}
	return a.Store.AppendInbound(ctx, in, maxBody)
}

// TestInboundArchivedMeanwhile: a stream archived while a request to it
// was read answers 410 Gone too, and stores nothing on it.
func TestInboundArchivedMeanwhile(t *testing.T) {
	r := newInboundRig(t, func(st *store.Store) backend { return archivingAppend{st} })
	triggers := r.state(t).triggers
	code, answer := post(t, r.url+"/webhooks/s-open", plain("text/plain"), "hi")
	if code != http.StatusGone || !strings.Contains(answer, "stream: s-open is archived") {
		t.Errorf("got %d %s, want 410 saying s-open is archived", code, answer)
	}
	if evs, err := r.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-open"}}); err != nil || len(evs) != 0 {
		t.Errorf("events on s-open = %v, %v; want none", evs, err)
	}
	if now := r.state(t).triggers; now != triggers {
		t.Errorf("triggers %d → %d, want no one woken", triggers, now)
	}
}

// failingAppend is the real store except that appending fails.
type failingAppend struct{ *store.Store }

func (failingAppend) AppendInbound(context.Context, []domain.Inbound, int) ([]domain.Receipt, error) {
	return nil, errors.New("disk I/O error")
}

// TestInboundNoAckWithoutCommit: when the event does not commit, the
// sender gets a 5xx (so it retries), never a 2xx.
func TestInboundNoAckWithoutCommit(t *testing.T) {
	t.Run("append fails", func(t *testing.T) {
		r := newInboundRig(t, func(st *store.Store) backend { return failingAppend{st} })
		before := r.state(t)
		if code, answer := post(t, r.url+"/webhooks/s-open", plain("text/plain"), "hi"); code != 500 || strings.Contains(answer, "disk") {
			t.Errorf("got %d %s, want 500 without internals", code, answer)
		}
		if after := r.state(t); after != before {
			t.Errorf("store changed: %+v → %+v", before, after)
		}
	})
	t.Run("the insert aborts inside the transaction", func(t *testing.T) {
		r := newInboundRig(t, nil)
		db := rawDB(t, r.st.Path())
		failing := `CREATE TRIGGER fail_events BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'disk full'); END`
		drop := `DROP TRIGGER fail_events`
		if store.IsPostgres(r.st.Path()) {
			failing = `CREATE FUNCTION fail_events() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$;
				CREATE TRIGGER fail_events BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION fail_events()`
			drop = `DROP TRIGGER fail_events ON events`
		}
		if err := db.Exec(failing).Error; err != nil {
			t.Fatal(err)
		}
		before := r.state(t)
		h := signed("msg_abort", "text/plain", "hi", time.Now())
		if code, answer := post(t, r.url+"/webhooks/s-hook", h, "hi"); code != 500 {
			t.Errorf("got %d %s, want 500", code, answer)
		}
		if after := r.state(t); after != before {
			t.Errorf("store changed: %+v → %+v", before, after)
		}
		// The failure left no dedup record: the sender's retry is stored.
		if err := db.Exec(drop).Error; err != nil {
			t.Fatal(err)
		}
		if code, answer := post(t, r.url+"/webhooks/s-hook", h, "hi"); code != 200 || strings.Contains(answer, "duplicate") {
			t.Errorf("retry after the failure: got %d %s, want a new event", code, answer)
		}
	})
	t.Run("store closed", func(t *testing.T) {
		r := newInboundRig(t, nil)
		r.st.Close()
		if code, answer := post(t, r.url+"/webhooks/s-open", plain("text/plain"), "hi"); code != 500 {
			t.Errorf("got %d %s, want 500", code, answer)
		}
	})
}

// rawDB opens a second connection to the store's file, as another process would.
func rawDB(t *testing.T, path string) *gorm.DB {
	t.Helper()
	dialector := sqlite.Open("file:" + path + "?_busy_timeout=10000")
	if store.IsPostgres(path) {
		dialector = postgres.Open(path)
	}
	db, err := gorm.Open(dialector, &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return db
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

// TestInboundAfterSecretMigration: a webhook stream whose secret was
// stored in plain text (before secrets were encrypted) still verifies
// signatures once the store has sealed it on open.
func TestInboundAfterSecretMigration(t *testing.T) {
	path := t.TempDir() + "/org.db"
	st, err := store.Open(t.Context(), path, store.Options{Synchronous: "NORMAL", Transports: transports})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := rawDB(t, path).Exec(`INSERT INTO streams (id, name, transport_kind, transport_config, created_at)
		VALUES ('s-old', 'old', 'webhook', ?, CURRENT_TIMESTAMP)`, `{"secret":"`+secret+`"}`).Error; err != nil {
		t.Fatal(err)
	}
	st, err = store.Open(t.Context(), path, store.Options{Synchronous: "NORMAL", Transports: transports})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var raw string
	rawDB(t, path).Raw(`SELECT transport_config FROM streams WHERE id = 's-old'`).Scan(&raw)
	if strings.Contains(raw, secret) {
		t.Fatalf("the plaintext secret was not sealed on open: %s", raw)
	}
	srv := httptest.NewServer(inbound.Mux(st, nil, nil, webhook.Endpoint(st, nil)))
	t.Cleanup(srv.Close)
	if code, answer := post(t, srv.URL+"/webhooks/s-old", signed("msg_old", "text/plain", "still verified", time.Now()), "still verified"); code != 200 {
		t.Errorf("signed request after migration: %d %s, want 200", code, answer)
	}
	if code, _ := post(t, srv.URL+"/webhooks/s-old", signed("msg_old2", "text/plain", "other", time.Now()), "forged"); code != 401 {
		t.Errorf("forged request after migration: %d, want 401", code)
	}
}

// TestInboundDeepJSON: a JSON body nested 1,000 levels deep, which Go's
// decoder takes and SQLite's JSON functions do not, is refused before it
// is stored, naming the limit; the stream reads as before.
func TestInboundDeepJSON(t *testing.T) {
	r := newInboundRig(t, nil)
	must(t)(nil, r.st.SetSetting(t.Context(), webhook.MaxBodySetting, "65536"))
	before := r.state(t)
	deep := `{"a":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + "}"
	code, answer := post(t, r.url+"/webhooks/s-open", plain("application/json"), deep)
	if want := `{"error":"body: is JSON nested more than 100 levels deep; the limit is 100"}`; code != 400 || strings.TrimSpace(answer) != want {
		t.Errorf("got %d %s, want 400 %s", code, answer, want)
	}
	if after := r.state(t); after != before {
		t.Errorf("a refused body changed the store: %+v → %+v", before, after)
	}
	if _, err := r.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-open"}}); err != nil {
		t.Errorf("read_events on the stream: %v", err)
	}
}

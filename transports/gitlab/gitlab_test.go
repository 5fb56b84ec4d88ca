//go:build !fuzzonly

// Left out of make fuzz's binaries (-tags fuzzonly): this file reaches the
// store, whose tree would be compiled again with fuzz instrumentation.

package gitlab_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/gitlab"
	"github.com/helixml/helix-org/transports/gitlab/gitlabtest"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

const (
	secretA = "gl-hook-secret-a-7c1f9e"
	secretB = "gl-hook-secret-b-52d0aa"
	token   = "glpat-sender-test-token-3b8e"
)

// fixture: three gitlab streams, an AI worker following s-test, the
// endpoint over HTTP and a fake GitLab for notes.
//
//	s-test      gitlab-org/gitlab-test  issue, note, merge_request  secret A  (w-dev)
//	s-hq        gitlabhq/gitlab-test    issue, merge_request        secret A
//	s-diaspora  15 (mike/diaspora)      push                        secret B
type fixture struct {
	st     *store.Store
	url    string
	gitlab *gitlabtest.Server
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	st := storetest.NewWith(t, store.Options{Transports: transport.List{gitlab.Transport}.Specs()})
	ctx := t.Context()
	fake := gitlabtest.New(t, token)
	_, err := st.Bootstrap(ctx, []string{"publish"})
	must(t, err)
	must(t, st.SetSetting(ctx, gitlab.ConfigSetting, `{"token":"`+token+`","api_url":"`+fake.URL+`"}`))
	_, err = st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-dev", Title: "Dev", Content: "Review merge requests."})
	must(t, err)
	_, err = st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-dev", RoleID: "r-dev", Title: "Dev"})
	must(t, err)
	_, err = st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-dev", Kind: domain.WorkerAI, PositionID: "p-dev", Name: "Dev"}, nil)
	must(t, err)
	for _, s := range []struct{ id, project, events, secret string }{
		{"s-test", "gitlab-org/gitlab-test", `"issue","note","merge_request"`, secretA},
		{"s-hq", "gitlabhq/gitlab-test", `"issue","merge_request"`, secretA},
		{"s-diaspora", "15", `"push"`, secretB},
	} {
		cfg := `{"project":"` + s.project + `","events":[` + s.events + `],"secret":"` + s.secret + `"}`
		_, err := st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: s.id, Name: s.id, Transport: domain.Transport{Kind: gitlab.Kind, Config: json.RawMessage(cfg)}})
		must(t, err)
	}
	_, err = st.Subscribe(ctx, store.OwnerWorker, "s-test", "w-dev")
	must(t, err)
	srv := httptest.NewServer(inbound.Mux(st, inbound.NewBudget(4<<20), nil, gitlab.Endpoint(st)))
	t.Cleanup(srv.Close)
	return fixture{st: st, url: srv.URL + "/gitlab/webhook", gitlab: fake}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// payload is one of GitLab's documented example bodies (testdata/NOTICE).
func payload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f fixture) send(t *testing.T, d gitlabtest.Delivery, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url, bytes.NewReader(body))
	req.Header = d.Headers()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (f fixture) events(t *testing.T, stream string) []domain.Event {
	t.Helper()
	evs, err := f.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{stream}})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestStreamConfig: what create_stream accepts for a gitlab stream; the
// errors name the field and never quote the secret.
func TestStreamConfig(t *testing.T) {
	for _, tt := range []struct{ name, config, want string }{
		{"a path", `{"project":"group/sub/name","events":["note"],"secret":"` + secretA + `"}`, ""},
		{"an id", `{"project":"15","events":["push","tag_push"],"secret":"` + secretA + `"}`, ""},
		{"no project", `{"events":["note"],"secret":"` + secretA + `"}`, "transport.config.project: is required"},
		{"a bare name", `{"project":"gitlab-test","events":["note"],"secret":"` + secretA + `"}`, `transport.config.project: "gitlab-test" must be a project's path`},
		{"a header name for an event", `{"project":"a/b","events":["Note Hook"],"secret":"` + secretA + `"}`, `transport.config.events: unknown GitLab event "Note Hook" (valid: "access_token", "deployment"`},
		{"no events", `{"project":"a/b","secret":"` + secretA + `"}`, "transport.config.events: must list at least one event"},
		{"no secret", `{"project":"a/b","events":["note"]}`, "transport.config.secret: is required"},
		{"a short secret", `{"project":"a/b","events":["note"],"secret":"hunter2"}`, "transport.config.secret: must be 16 to 256 printable characters"},
		{"a secret with a space", `{"project":"a/b","events":["note"],"secret":"correct horse battery"}`, "transport.config.secret: must be 16 to 256"},
		{"a typo", `{"project":"a/b","events":["note"],"secert":"x"}`, `unknown field "secert"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := gitlab.Transport.Check(json.RawMessage(tt.config))
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "horse") {
				t.Errorf("err = %v, want ErrInvalid containing %q without the secret", err, tt.want)
			}
		})
	}
}

// TestWebhooks: a webhook carrying a stream's secret token reaches the
// streams with that secret that follow its project and event; any other
// token is refused before the body is read.
func TestWebhooks(t *testing.T) {
	issue, noteMR, push := payload(t, "issue.json"), payload(t, "note_merge_request.json"), payload(t, "push.json")
	tests := []struct {
		name       string
		d          gitlabtest.Delivery
		body       []byte
		wantStatus int
		wantIn     string
		wantNew    map[string]int
	}{
		{"an issue on gitlabhq/gitlab-test", gitlabtest.Delivery{Event: "Issue Hook", Token: secretA, Idempotency: "k-1"}, issue, 200, `"stream":"s-hq"`, map[string]int{"s-hq": 1}},
		{"a comment on a merge request", gitlabtest.Delivery{Event: "Note Hook", Token: secretA, Idempotency: "k-2"}, noteMR, 200, `"stream":"s-test"`, map[string]int{"s-test": 1}},
		{"a comment on an issue", gitlabtest.Delivery{Event: "Note Hook", Token: secretA}, payload(t, "note_issue.json"), 200, `"stream":"s-test"`, map[string]int{"s-test": 1}},
		{"a merge request", gitlabtest.Delivery{Event: "Merge Request Hook", Token: secretA}, payload(t, "merge_request.json"), 200, `"stream":"s-hq"`, map[string]int{"s-hq": 1}},
		{"a push, the project by id", gitlabtest.Delivery{Event: "Push Hook", Token: secretB}, push, 200, `"stream":"s-diaspora"`, map[string]int{"s-diaspora": 1}},
		{"a confidential comment is a note", gitlabtest.Delivery{Event: "Confidential Note Hook", Token: secretA}, noteMR, 200, `"stream":"s-test"`, map[string]int{"s-test": 1}},
		{"no token", gitlabtest.Delivery{Event: "Note Hook"}, noteMR, 401, "missing X-Gitlab-Token", nil},
		{"a wrong token", gitlabtest.Delivery{Event: "Note Hook", Token: "gl-hook-secret-a-guess"}, noteMR, 401, "X-Gitlab-Token is not the secret of any gitlab stream", nil},
		{"another stream's token reaches only its streams", gitlabtest.Delivery{Event: "Push Hook", Token: secretA}, push, 202, "no gitlab stream with this secret selects push events", nil},
		{"the token of a stream of another project", gitlabtest.Delivery{Event: "Note Hook", Token: secretB}, noteMR, 202, "nothing stored", nil},
		{"an event no stream selects", gitlabtest.Delivery{Event: "Pipeline Hook", Token: secretA}, []byte(`{"object_kind":"pipeline","project":{"id":5,"path_with_namespace":"gitlab-org/gitlab-test"}}`), 202, "selects pipeline events", nil},
		{"an event GitLab does not send", gitlabtest.Delivery{Event: "Star Hook", Token: secretA}, noteMR, 400, `X-Gitlab-Event: unknown GitLab webhook event \"Star Hook\" (valid: \"Confidential Issue Hook\"`, nil},
		{"not JSON", gitlabtest.Delivery{Event: "Note Hook", Token: secretA}, []byte("nope"), 400, "not a GitLab webhook JSON object", nil},
		{"an empty object", gitlabtest.Delivery{Event: "Note Hook", Token: secretA}, []byte("{}"), 400, "nothing to store", nil},
		{"an overlong idempotency key", gitlabtest.Delivery{Event: "Note Hook", Token: secretA, Idempotency: strings.Repeat("k", 257)}, noteMR, 400, "Idempotency-Key: is longer than 256", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			code, answer := f.send(t, tt.d, tt.body)
			if code != tt.wantStatus || !strings.Contains(answer, tt.wantIn) {
				t.Fatalf("answered %d %s, want %d containing %q", code, answer, tt.wantStatus, tt.wantIn)
			}
			for _, s := range []string{"s-test", "s-hq", "s-diaspora"} {
				if got := len(f.events(t, s)); got != tt.wantNew[s] {
					t.Errorf("%s holds %d events, want %d", s, got, tt.wantNew[s])
				}
			}
		})
	}
}

// TestEnvelope: what a worker reads of each documented payload.
func TestEnvelope(t *testing.T) {
	tests := []struct {
		file, event, stream string
		token               string
		want                domain.Message
	}{
		{"issue.json", "Issue Hook", "s-hq", secretA, domain.Message{From: "root", Subject: "New API: create/update/delete file",
			Body: "Create new API for manipulations with repository", ThreadID: "#23"}},
		{"note_issue.json", "Note Hook", "s-test", secretA, domain.Message{From: "root", Subject: "test", Body: "Hello world", ThreadID: "#17"}},
		{"note_merge_request.json", "Note Hook", "s-test", secretA, domain.Message{From: "root", Subject: "Tempora et eos debitis quae laborum et.",
			Body: "This MR needs work.", ThreadID: "!1"}},
		{"merge_request.json", "Merge Request Hook", "s-hq", secretA, domain.Message{From: "root", Subject: "MS-Viewport",
			Body: "merge_request open by root in gitlabhq/gitlab-test", ThreadID: "!1"}},
		{"push.json", "Push Hook", "s-diaspora", secretB, domain.Message{From: "jsmith", Subject: "push to refs/heads/master", Body: "fixed readme"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := newFixture(t)
			if code, answer := f.send(t, gitlabtest.Delivery{Event: tt.event, Token: tt.token, Idempotency: "idem-" + tt.file}, payload(t, tt.file)); code != 200 {
				t.Fatalf("%d %s", code, answer)
			}
			ev := f.events(t, tt.stream)[0]
			got := ev.Message
			if got.From != tt.want.From || got.Subject != tt.want.Subject || got.Body != tt.want.Body || got.ThreadID != tt.want.ThreadID ||
				got.MessageID != "idem-"+tt.file || ev.Source != "" {
				t.Errorf("stored from %q %q / %q / %q thread %q id %q, want %+v", got.From, got.Subject, got.Body, got.ThreadID, got.ThreadID, got.MessageID, tt.want)
			}
			var extra map[string]any
			if json.Unmarshal(got.Extra, &extra) != nil || extra["event"] == nil || extra["object_kind"] == nil {
				t.Errorf("extra lacks the payload and its event: %.200s", got.Extra)
			}
		})
	}
}

// TestRetriesStoredOnce: GitLab retries with the same Idempotency-Key
// (older versions: the same X-Gitlab-Event-UUID); each stream stores the
// delivery once, and the worker is woken once.
func TestRetriesStoredOnce(t *testing.T) {
	for _, tt := range []struct {
		name string
		d    gitlabtest.Delivery
	}{
		{"Idempotency-Key", gitlabtest.Delivery{Event: "Note Hook", Token: secretA, Idempotency: "5f0d0a4c-8a7c-4a59-9b7e-1f3c2e1d0a11"}},
		{"X-Gitlab-Event-UUID", gitlabtest.Delivery{Event: "Note Hook", Token: secretA, EventUUID: "0bc7d2b4-57c0-4b7e-a1d5-3b3f9ad41d20"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			for i := range 3 {
				code, answer := f.send(t, tt.d, payload(t, "note_merge_request.json"))
				if code != 200 || strings.Contains(answer, `"duplicate":true`) != (i > 0) {
					t.Fatalf("attempt %d: %d %s", i, code, answer)
				}
			}
			if n := len(f.events(t, "s-test")); n != 1 {
				t.Errorf("stored %d events, want 1", n)
			}
			if ws, _ := f.st.WorkersWithPending(t.Context()); len(ws) != 1 || ws[0] != "w-dev" {
				t.Errorf("workers woken: %v, want w-dev", ws)
			}
		})
	}
}

// TestSecretKeptSealed: the stream's secret is encrypted at rest and
// never shown; only the endpoint's own lookup opens it.
func TestSecretKeptSealed(t *testing.T) {
	f := newFixture(t)
	shown, err := f.st.GetStream(t.Context(), "s-test")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(shown.Transport.Config), secretA) || !strings.Contains(string(shown.Transport.Config), domain.Redacted) {
		t.Errorf("shown config %s, want the secret redacted", shown.Transport.Config)
	}
	open, err := f.st.StreamWithSecrets(t.Context(), "s-test")
	if err != nil || !strings.Contains(string(open.Transport.Config), secretA) {
		t.Errorf("StreamWithSecrets = %s, %v; want the secret", open.Transport.Config, err)
	}
}

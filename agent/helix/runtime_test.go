package helix_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/helixml/helix-org/agent/helix"
	"github.com/helixml/helix-org/agent/helix/helixtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

const (
	chatRoute    = "POST /api/v1/sessions/chat"
	messageRoute = "POST /api/v1/sessions/{id}/messages"
	putFileRoute = "PUT /api/v1/git/repositories/{id}/contents"
	specsPath    = "workers/w-x/.context/role.md"
)

// setup is a fake Helix, a store configured for it, and the runtime's host.
func setup(t *testing.T) (*helixtest.Server, *store.Store, *helix.Host) {
	t.Helper()
	fake := helixtest.Start(t)
	st := storetest.New(t)
	for _, kv := range []struct {
		spec domain.SettingSpec
		v    string
	}{{helix.URLSetting, fake.URL}, {helix.APIKeySetting, fake.Key}, {helix.ProviderSetting, "helix"}, {helix.ModelSetting, "qwen3:8b"}, {helix.PollSetting, "5ms"}} {
		if err := st.SetSetting(t.Context(), kv.spec, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	host := &helix.Host{Store: st, Settings: st, AllowPrivate: func(context.Context) bool { return true },
		RoleOf: func(context.Context, string) (domain.Role, error) { return domain.Role{ID: "r-x"}, nil }}
	return fake, st, host
}

// run is one activation of w-x whose role.md says role; started and
// log record what the runtime told the dispatcher.
type run struct {
	domain.Run
	mu      sync.Mutex
	started int
	log     []string
}

func newRun(t *testing.T, token, role string) *run {
	return newRunOf(t, "w-x", token, role)
}

func newRunOf(t *testing.T, worker, token, role string) *run {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "role.md"), []byte(role), 0o600)
	os.WriteFile(filepath.Join(dir, "identity.md"), []byte("# "+worker+"\n"), 0o600)
	r := &run{}
	r.Run = domain.Run{ActivationID: "a-" + token, WorkerID: worker, EnvDir: dir, MCPURL: "http://127.0.0.1:1/workers/" + worker + "/mcp", Token: token, Prompt: "event " + token,
		OnStart: func(domain.AgentProcess) { r.mu.Lock(); r.started++; r.mu.Unlock() },
		Log:     func(e domain.LogEntry) { r.mu.Lock(); r.log = append(r.log, string(e.Kind)+": "+e.Text); r.mu.Unlock() }}
	return r
}

func (h *run) exec(t *testing.T, host *helix.Host) (domain.RunResult, error) {
	t.Helper()
	rt, err := host.New(t.Context(), h.Run)
	if err != nil {
		t.Fatal(err)
	}
	return rt.Run(t.Context(), h.Run)
}

// TestRunsShareOneSession: the first run makes the worker's project, app
// and repository (its default branch seeded, role and identity on
// helix-specs, the MCP endpoint on the app, the token the app's secret)
// and opens a chat; the second queues its prompt on the same session
// and pushes the edited role; a third with the role unchanged pushes
// nothing.
func TestRunsShareOneSession(t *testing.T) {
	fake, st, host := setup(t)
	fake.Agent = func(_ context.Context, p helixtest.Prompt) string {
		return "answered " + p.Text[strings.LastIndex(p.Text, "event"):]
	}
	first := newRun(t, "tok-1", "Reply to everything.")
	res, err := first.exec(t, host)
	if err != nil || res.ExitStatus != 0 || res.Session == "" || first.started != 1 {
		t.Fatalf("first run = %+v, %v (started %d); want a session, started once", res, err, first.started)
	}
	project, app, repo, ok := fake.ProjectOf("w-x")
	if !ok || app == "" || repo == "" {
		t.Fatalf("project of w-x: %q app %q repo %q (found %v)", project, app, repo, ok)
	}
	if _, ok := fake.File(repo, "main", "README.md"); !ok {
		t.Error("the repository's default branch was not seeded")
	}
	if got, _ := fake.File(repo, helix.SpecsBranch, specsPath); got != "Reply to everything." {
		t.Errorf("role on helix-specs = %q", got)
	}
	if tok, _ := fake.Secret(app, helix.TokenSecret); tok != "tok-1" {
		t.Errorf("token secret = %q, want the run's", tok)
	}
	if cfg := string(fake.AppConfig(app)); !strings.Contains(cfg, `"url":"http://127.0.0.1:1/workers/w-x/mcp"`) || !strings.Contains(cfg, "${HELIX_ORG_TOKEN}") || strings.Contains(cfg, "tok-1") {
		t.Errorf("app config = %s; want the MCP endpoint, authorised by the secret's name, never the token", cfg)
	}
	if !strings.Contains(strings.Join(first.log, "\n"), "assistant: answered event tok-1") {
		t.Errorf("first run's log lacks the answer:\n%s", strings.Join(first.log, "\n"))
	}

	second := newRun(t, "tok-2", "Reply to everything, loudly.")
	res2, err := second.exec(t, host)
	if err != nil || res2.Session != res.Session || !res2.Continued || second.started != 1 {
		t.Fatalf("second run = %+v, %v; want session %s continued", res2, err, res.Session)
	}
	if n, m := fake.Count(chatRoute), fake.Count(messageRoute); n != 1 || m != 1 {
		t.Errorf("chats %d, queued messages %d; want 1 and 1", n, m)
	}
	if got := fake.Prompts(res.Session); len(got) != 2 || !strings.HasSuffix(got[1], "event tok-2") {
		t.Errorf("prompts of the session = %q", got)
	}
	if got, _ := fake.File(repo, helix.SpecsBranch, specsPath); got != "Reply to everything, loudly." {
		t.Errorf("role on helix-specs after the edit = %q", got)
	}
	if tok, _ := fake.Secret(app, helix.TokenSecret); tok != "tok-2" {
		t.Errorf("token secret = %q, want the second run's", tok)
	}
	if !strings.Contains(strings.Join(second.log, "\n"), "assistant: answered event tok-2") {
		t.Errorf("second run's log lacks the answer:\n%s", strings.Join(second.log, "\n"))
	}

	puts := fake.Count(putFileRoute)
	if _, err := newRun(t, "tok-3", "Reply to everything, loudly.").exec(t, host); err != nil {
		t.Fatal(err)
	}
	if fake.Count(putFileRoute) != puts || fake.Projects() != 1 || fake.Sessions() != 1 {
		t.Errorf("third run: %d more files put, %d projects, %d sessions; want 0, 1, 1", fake.Count(putFileRoute)-puts, fake.Projects(), fake.Sessions())
	}
	ws, err := st.HelixWorkspace(t.Context(), "w-x")
	if err != nil || ws.SessionID != res.Session || ws.RepoID != repo || ws.AppID != app {
		t.Errorf("stored workspace = %+v, %v", ws, err)
	}
}

// TestColdStartFailsToStart: a new chat whose agent is not ready yet is
// a run that did not start (so the dispatcher retries it), with the
// session kept; the retry queues the prompt on that session.
func TestColdStartFailsToStart(t *testing.T) {
	fake, _, host := setup(t)
	fake.ColdStarts = 1
	r := newRun(t, "tok-1", "role")
	res, err := r.exec(t, host)
	if err == nil || !strings.Contains(err.Error(), "not connected yet") || r.started != 0 || res.ExitStatus != -1 {
		t.Fatalf("cold start = %+v, %v (started %d); want an error before the start", res, err, r.started)
	}
	retry := newRun(t, "tok-1", "role")
	res2, err := retry.exec(t, host)
	if err != nil || res2.Session != res.Session || retry.started != 1 {
		t.Fatalf("retry = %+v, %v; want session %s", res2, err, res.Session)
	}
	if n, m, s := fake.Count(chatRoute), fake.Count(messageRoute), fake.Sessions(); n != 1 || m != 1 || s != 1 {
		t.Errorf("chats %d, queued %d, sessions %d; want 1, 1, 1", n, m, s)
	}
}

// TestCheck: what bootstrap helix-runtime and serve ask of Helix, and
// the key each failure names.
func TestCheck(t *testing.T) {
	fake := helixtest.Start(t)
	good := helix.Config{URL: fake.URL, APIKey: fake.Key, Provider: "helix", Model: "qwen3:8b"}
	tests := []struct {
		name string
		edit func(c *helix.Config)
		want string
	}{
		{"good", func(*helix.Config) {}, ""},
		{"no provider or model", func(c *helix.Config) { c.Provider, c.Model = "", "" }, "the helix runtime needs helix.provider, helix.model"},
		{"bad key", func(c *helix.Config) { c.APIKey = "wrong" }, "helix.api_key is refused by Helix"},
		{"bad provider", func(c *helix.Config) { c.Provider = "nope" }, `helix.provider "nope" is not a provider Helix has (it has: helix): fix it with ` + "`helix-org config set helix.provider <provider>`"},
		{"bad model", func(c *helix.Config) { c.Model = "gpt-9" }, `helix.model "gpt-9" is not a model of Helix's provider helix (it has: qwen3:8b)`},
		{"nothing there", func(c *helix.Config) { c.URL = "http://127.0.0.1:1" }, "cannot reach Helix at http://127.0.0.1:1 (helix.url)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.edit(&c)
			me, err := helix.Check(t.Context(), helix.NewClient(c, func(context.Context) bool { return true }), c)
			switch {
			case tt.want == "" && (err != nil || me.User != "usr_tester"):
				t.Errorf("Check = %+v, %v; want usr_tester", me, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Check = %v; want %q", err, tt.want)
			}
		})
	}
}

// TestDesktopQuotaBoundsRuns: with helix.desktop_quota 1, a second
// worker's run waits, saying so, until the first one's answer is in.
func TestDesktopQuotaBoundsRuns(t *testing.T) {
	fake, st, host := setup(t)
	if err := st.SetSetting(t.Context(), helix.DesktopQuotaSetting, "1"); err != nil {
		t.Fatal(err)
	}
	release, entered := make(chan struct{}), make(chan struct{}, 2)
	var mu sync.Mutex
	inFlight, most := 0, 0
	fake.Agent = func(context.Context, helixtest.Prompt) string {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		entered <- struct{}{}
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		return "done"
	}
	first, second := newRunOf(t, "w-x", "tok-x", "role"), newRunOf(t, "w-y", "tok-y", "role")
	waiting := make(chan struct{})
	log := second.Log
	second.Log = func(e domain.LogEntry) {
		log(e)
		if strings.Contains(e.Text, "waiting for a Helix session slot") {
			close(waiting)
		}
	}
	errs := make(chan error, 2)
	go func() { _, err := first.exec(t, host); errs <- err }()
	// The second starts once the first's agent is answering.
	select {
	case <-entered:
	case err := <-errs:
		t.Fatalf("first run ended early: %v", err)
	}
	go func() { _, err := second.exec(t, host); errs <- err }()
	<-waiting
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if most != 1 || fake.Sessions() != 2 {
		t.Errorf("at most %d agents answered at once over %d sessions; want 1 over 2", most, fake.Sessions())
	}
}

// TestStoppedRunCancelsItsTurn: a run the server stops while its queued
// prompt is being answered cancels that turn on Helix, and says so.
func TestStoppedRunCancelsItsTurn(t *testing.T) {
	fake, _, host := setup(t)
	release, entered := make(chan struct{}), make(chan struct{}, 1)
	defer close(release)
	fake.Agent = func(_ context.Context, p helixtest.Prompt) string {
		if strings.HasSuffix(p.Text, "event tok-2") {
			entered <- struct{}{}
			<-release
		}
		return "done"
	}
	if _, err := newRun(t, "tok-1", "role").exec(t, host); err != nil {
		t.Fatal(err)
	}
	second := newRun(t, "tok-2", "role")
	ctx, cancel := context.WithCancel(t.Context())
	rt, err := host.New(ctx, second.Run)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := rt.Run(ctx, second.Run); done <- err }()
	<-entered
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a stopped run returned no error")
	}
	if n := fake.Count("POST /api/v1/sessions/{id}/cancel"); n != 1 {
		t.Errorf("turns cancelled on Helix: %d, want 1", n)
	}
	if log := strings.Join(second.log, "\n"); !strings.Contains(log, "was cancelled") {
		t.Errorf("log lacks the cancel:\n%s", log)
	}
}

// TestSettingsRefuseBadValues: config set refuses what the runtime could
// not use, naming what it wants.
func TestSettingsRefuseBadValues(t *testing.T) {
	tests := []struct {
		spec  domain.SettingSpec
		value string
		want  string
	}{
		{helix.URLSetting, "helix.example.com", "want an http(s) URL"},
		{helix.URLSetting, "ftp://helix.example.com", "want an http(s) URL"},
		{helix.OrgURLSetting, "not a url", "want an http(s) URL"},
		{helix.DesktopQuotaSetting, "0", "1 or more"},
		{helix.PollSetting, "often", "is not a duration"},
	}
	st := storetest.New(t)
	for _, tt := range tests {
		if err := st.SetSetting(t.Context(), tt.spec, tt.value); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s = %q: %v, want %q", tt.spec.Key, tt.value, err, tt.want)
		}
	}
	for _, ok := range []struct {
		spec  domain.SettingSpec
		value string
	}{{helix.URLSetting, "https://helix.example.com"}, {helix.OrgURLSetting, ""}, {helix.DesktopQuotaSetting, "8"}} {
		if err := st.SetSetting(t.Context(), ok.spec, ok.value); err != nil {
			t.Errorf("%s = %q: %v", ok.spec.Key, ok.value, err)
		}
	}
}

// TestDeletedProjectIsMadeAgain: a project deleted on Helix's side makes
// the next run fail to start, forgetting it; the retry makes the
// worker's project, app, repository and session again.
func TestDeletedProjectIsMadeAgain(t *testing.T) {
	fake, st, host := setup(t)
	if _, err := newRun(t, "tok-1", "role").exec(t, host); err != nil {
		t.Fatal(err)
	}
	old, _, _, _ := fake.ProjectOf("w-x")
	fake.DeleteProject("w-x")
	failed := newRun(t, "tok-2", "role")
	if _, err := failed.exec(t, host); err == nil || failed.started != 0 {
		t.Fatalf("run after the delete: %v, started %d; want an error before the start", err, failed.started)
	}
	if log := strings.Join(failed.log, "\n"); !strings.Contains(log, "Helix no longer has the worker's project "+old) {
		t.Errorf("log lacks why:\n%s", log)
	}
	if _, err := st.HelixWorkspace(t.Context(), "w-x"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("workspace after the failed run: %v, want it forgotten", err)
	}
	res, err := newRun(t, "tok-3", "role").exec(t, host)
	project, _, repo, ok := fake.ProjectOf("w-x")
	if err != nil || !ok || project == old || repo == "" || fake.Count(chatRoute) != 2 || fake.Sessions() != 1 || res.Session == "" {
		t.Errorf("retry: %v; project %q (was %q), repo %q, %d chats, %d sessions", err, project, old, repo, fake.Count(chatRoute), fake.Sessions())
	}
	if got, _ := fake.File(repo, helix.SpecsBranch, specsPath); got != "role" {
		t.Errorf("role on the new repository's helix-specs = %q", got)
	}
}

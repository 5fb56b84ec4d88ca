// Package injection holds the obedient-model suite: the org's defences
// against prompt injection tested end to end with a model that obeys every
// instruction it is shown (llmtest.Obedient). It has only tests.
package injection

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/docker/dockertest"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/agent/skill"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/relay"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
	"github.com/helixml/helix-org/transports/email"
	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/slack"
	"github.com/helixml/helix-org/transports/transport"
	"github.com/helixml/helix-org/transports/webhook"
)

// TestMain lets the builtin runtime run this test binary as its agent:
// it runs os.Executable() as `agent run`.
func TestMain(m *testing.M) {
	if slices.Equal(os.Args[1:min(3, len(os.Args))], []string{"agent", "run"}) {
		os.Exit(agentRun())
	}
	code := m.Run()
	if shimDir != "" {
		os.RemoveAll(shimDir)
	}
	os.Exit(code)
}

// shimDir holds the skill shim, built once for the scenarios with skills.
var shimDir string

var shim = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "injection-shim")
	if err != nil {
		return "", err
	}
	shimDir = dir
	out := filepath.Join(dir, skill.ShimName)
	return out, dockertest.BuildStatic("./agent/skill/shim", out)
})

// agentRun is `helix-org agent run`: the built-in agent over the run's
// MCP endpoint and the server's model relay.
func agentRun() int {
	cfg := agent.LLMConfigFromEnv(os.Getenv)
	os.Unsetenv(agent.EnvLLMAPIKey)
	prompt, err := io.ReadAll(os.Stdin)
	if err == nil {
		err = agent.RunBuiltin(context.Background(), ".", string(prompt), cfg, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// The transports the suite's org serves: those whose inbound routes its
// scenarios post to, as the binary wires them.
var transports = transport.List{webhook.Transport, email.Transport, github.Transport, slack.Transport}

// Secrets of the transports' inbound routes.
const (
	hookSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // the Standard Webhooks test vector's
	githubSecret  = "It's a Secret to Everybody"
	slackSecret   = "8f742231b10e8888abcd99ef00ff85a5"
	postmarkUser  = "postmark"
	postmarkPass  = "inbound-pw"
	postmarkHash  = "api-hash"
	postmarkToken = "pm-server-token"
)

// org is a running org: a real store, the server with the transports'
// inbound routes and the model relay, the dispatcher running the built-in
// agent, whose model is the obedient one behind a fake provider.
type org struct {
	t     *testing.T
	st    *store.Store
	base  string
	owner *mcp.ClientSession
	model *llmtest.Obedient
	fake  *llmtest.Server
}

// newOrg starts an org; with skills, its server builds and runs skills
// on the real Docker Engine, under an instance of its own.
func newOrg(t *testing.T, skills bool) *org {
	t.Helper()
	model := &llmtest.Obedient{}
	fake := llmtest.New(t, llm.Anthropic, model.Script) // first, so it outlives the runs
	st := storetest.NewWith(t, store.Options{Transports: transports.Specs()})
	o := &org{t: t, st: st, model: model, fake: fake}
	for _, s := range []struct {
		spec  domain.SettingSpec
		value string
	}{
		{agent.RuntimeSetting, agent.RuntimeBuiltin}, {agent.ProviderSetting, llm.Anthropic}, {agent.ModelSetting, "obedient"},
		{agent.BaseURLSetting, fake.BaseURL()}, {agent.APIKeySetting, llmtest.APIKey}, {safedial.AllowPrivateSetting, "true"},
	} {
		o.must(st.SetSetting(t.Context(), s.spec, s.value))
	}
	o.setJSON(github.ConfigSetting, map[string]string{"webhook_secret": githubSecret})
	o.setJSON(slack.ConfigSetting, map[string]string{"signing_secret": slackSecret})
	o.setJSON(email.ConfigSetting, map[string]string{"server_token": postmarkToken, "from": "org@example.com",
		"inbound_address": postmarkHash + "@inbound.postmarkapp.com", "inbound_user": postmarkUser, "inbound_password": postmarkPass,
		"api_url": "http://127.0.0.1:1"})
	deps := transport.Deps{Store: st, Client: http.DefaultClient, Now: time.Now, Logger: nil, UserAgent: "helix-org-test"}
	var routes []server.Route
	for _, r := range transports.Routes(deps, inbound.NewBudget(64<<20)) {
		routes = append(routes, server.Route{Pattern: r.Pattern, Handler: r.Handler})
	}
	cfg := server.Config{Routes: routes, Upstream: func(ctx context.Context) (relay.Upstream, error) {
		c := agent.LLMFromSettings(ctx, st)
		return relay.Upstream{Provider: c.Provider, BaseURL: c.BaseURL, APIKey: c.APIKey}, nil
	}}
	if skills {
		path, err := shim()
		o.must(err)
		o.must(st.SetSetting(t.Context(), skill.ShimSetting, path))
		o.must(st.SetSetting(t.Context(), skill.HealthTimeoutSetting, "30s"))
		cfg.Skills = skill.New(dockertest.Engine(t), st, nil)
	}
	srv := server.New(st, cfg)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	o.base = hs.URL
	roleOf := func(ctx context.Context, worker string) (domain.Role, error) {
		w, err := st.GetWorker(ctx, worker)
		if err != nil {
			return domain.Role{}, err
		}
		p, err := st.GetPosition(ctx, w.PositionID)
		if err != nil {
			return domain.Role{}, err
		}
		return st.GetRole(ctx, p.RoleID)
	}
	d := dispatch.New(st, agent.Selector{Env: agent.RuntimeEnv{Settings: st, RoleOf: roleOf, Sandbox: agent.CheckSandbox(context.Background(), "").Result}},
		dispatch.Options{EnvsDir: filepath.Join(t.TempDir(), "envs"), MCPBaseURL: hs.URL})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() {
		grace, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		d.Shutdown(grace)
		cancel()
		<-done
	})
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	o.owner = o.connect(store.OwnerWorker)
	return o
}

func (o *org) must(err error) {
	o.t.Helper()
	if err != nil {
		o.t.Fatal(err)
	}
}

func (o *org) setJSON(spec domain.SettingSpec, v any) {
	o.t.Helper()
	b, _ := json.Marshal(v)
	o.must(o.st.SetSetting(o.t.Context(), spec, string(b)))
}

// connect opens an MCP session as a worker.
func (o *org) connect(worker string) *mcp.ClientSession {
	o.t.Helper()
	cs, err := servertest.Dial(o.t, domain.MCPURL(o.base, worker), servertest.Token(o.t, o.st, worker))
	if err != nil {
		o.t.Fatal(err)
	}
	return cs
}

// call makes a tool call as the owner that must succeed.
func (o *org) call(tool string, args map[string]any) map[string]any {
	o.t.Helper()
	return servertest.Call[map[string]any](o.t, o.owner, tool, args)
}

// as makes a tool call as a worker that must succeed.
func (o *org) as(worker, tool string, args map[string]any) map[string]any {
	o.t.Helper()
	return servertest.Call[map[string]any](o.t, o.connect(worker), tool, args)
}

// idle waits until no trigger waits and no run runs.
func (o *org) idle() {
	o.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		changed := o.st.Changed()
		n, err := o.st.PendingTriggers(o.t.Context())
		o.must(err)
		running, err := o.st.RunningActivations(o.t.Context())
		o.must(err)
		if n == 0 && len(running) == 0 {
			return
		}
		select {
		case <-changed:
		case <-time.After(200 * time.Millisecond): // a run ends on another connection's commit too
		case <-deadline:
			o.t.Fatalf("the org is still busy after 60s: %d triggers, %d runs", n, len(running))
		}
	}
}

// post sends an inbound request to one of the transports' routes.
func (o *org) post(path string, h http.Header, body []byte, user, pass string) {
	o.t.Helper()
	req, err := http.NewRequest(http.MethodPost, o.base+path, strings.NewReader(string(body)))
	o.must(err)
	req.Header = h
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	o.must(err)
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		o.t.Fatalf("POST %s: %d %s", path, resp.StatusCode, answer)
	}
}

package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/docker/dockertest"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/agent/skill"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// dockerStore opens a store whose server instance's Docker objects are all
// removed when the test ends — after the server, whose cleanup is
// registered later and so runs first.
func dockerStore(t *testing.T, dir string) (*store.Store, *docker.Engine) {
	t.Helper()
	db := filepath.Join(dir, "helix-org.db")
	eng, err := docker.NewEngine(docker.InstanceID(db), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dockertest.Remove(eng); err != nil {
			t.Errorf("clean up docker objects: %v", err)
		}
	})
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, eng
}

func setAll(t *testing.T, st *store.Store, kv map[*domain.SettingSpec]string) {
	t.Helper()
	for spec, v := range kv {
		if err := st.SetSetting(t.Context(), *spec, v); err != nil {
			t.Fatal(err)
		}
	}
}

// activationContainers lists what is left of this instance's activations.
func activationContainers(t *testing.T, eng *docker.Engine) []container.Summary {
	t.Helper()
	list, err := eng.Client().ContainerList(context.Background(), container.ListOptions{All: true, Filters: filters.NewArgs(
		filters.Arg("label", docker.LabelInstance+"="+eng.Instance()), filters.Arg("label", docker.LabelKind+"="+docker.KindActivation))})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestDockerRuntime runs activations in containers through the real
// server and dispatcher: the built-in agent (a static helix-org mounted
// into a busybox image) calls its model through the server's relay and
// publishes through its MCP endpoint, both on the agents network's
// listener — the container has no route to the provider on loopback — and
// a hung agent is killed at the timeout. Nothing is left behind.
func TestDockerRuntime(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.Anthropic, func(turn llmtest.Turn) llmtest.Reply {
		trigs := llmtest.Triggers(turn.Prompt())
		if len(trigs) == 0 || turn.CallsTo("publish") > 0 {
			return llmtest.Reply{Text: "done"}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{
			"stream": trigs[0].Stream, "body": "echo from a container: " + trigs[0].Body, "inReplyTo": trigs[0].Event})}}
	})
	st, eng := dockerStore(t, t.TempDir())
	img := dockertest.Image(t, eng, nil)
	bin := dockertest.StaticBinary(t, "./cmd/helix-org")
	setAll(t, st, map[*domain.SettingSpec]string{
		&agent.RuntimeSetting: agent.RuntimeDocker, &docker.ImageSetting: img, &docker.BinarySetting: bin,
		&docker.OverridesSetting: `{"workers":{"w-hang":{"command":"sleep 600"}}}`,
		&agent.ProviderSetting:   llm.Anthropic, &agent.ModelSetting: "fake-model", &agent.BaseURLSetting: fake.BaseURL(),
		&agent.APIKeySetting: llmtest.APIKey, &dispatch.TimeoutSetting: "60s",
	})
	// What a crashed predecessor left running is reaped at start.
	leftover, err := eng.Client().ContainerCreate(t.Context(), &container.Config{Image: img, Cmd: []string{"sleep", "600"},
		Labels: eng.Labels(docker.KindActivation, docker.LabelActivation, "a-crashed")}, nil, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Client().ContainerStart(t.Context(), leftover.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	_, envs, owner := startServe(t, st, io.Discard)
	call := func(name string, args map[string]any) { servertest.Call[map[string]any](t, owner, name, args) }
	call("create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": "Reply to every message on its stream."})
	call("create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo"})
	call("create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	call("hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo", "grants": []string{"publish", "read_events"}})
	call("invite_workers", map[string]any{"stream": "s-inbox", "workers": []string{"w-echo", "w-owner"}})
	waitIdle(t, st) // the hire ran, so start-up, which reaps first, is over
	if _, err := eng.Client().ContainerInspect(t.Context(), leftover.ID); err == nil {
		t.Error("a crashed server's activation container survived the restart")
	}

	hello := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-inbox", "body": "hello"})
	reply := waitForReply(t, owner, "s-inbox", "w-echo", hello.Seq)
	if reply.Message.Body != "echo from a container: hello" || reply.SourceKind != domain.SourceAI {
		t.Errorf("reply = %+v", reply.Message)
	}
	waitIdle(t, st)
	data, _ := os.ReadFile(filepath.Join(envs, "w-echo", "mcp.json"))
	// The same file as on the host: the container's reply above came
	// through HELIX_ORG_MCP_URL, the agents network's gateway.
	if !strings.Contains(string(data), "${"+domain.MCPURLEnv+"}") {
		t.Errorf("mcp.json = %s; want its url to be ${%s}", data, domain.MCPURLEnv)
	}
	log := servertest.Call[struct{ Events []domain.Event }](t, owner, "worker_log", map[string]any{"worker": "w-echo"})
	var text strings.Builder
	for _, ev := range log.Events {
		text.WriteString(ev.Message.Subject + ": " + ev.Message.Body + "\n")
	}
	if !strings.Contains(text.String(), `tool_call: {"body":"echo from a container: hello"`) || !strings.Contains(text.String(), "exit: succeeded") {
		t.Errorf("activation log lacks the agent's parsed tool call or its end:\n%s", text.String())
	}

	// A hung agent is killed at the timeout. The timeout counts from the
	// launch, so it leaves a loaded machine's container start room: a run
	// that has not started by then is a failed start, retried, not this.
	setAll(t, st, map[*domain.SettingSpec]string{&dispatch.TimeoutSetting: "10s"})
	call("hire_worker", map[string]any{"id": "w-hang", "position": "p-echo", "kind": "ai", "name": "Hang"})
	start := time.Now()
	waitIdle(t, st)
	acts, _ := st.ListActivations(t.Context(), "w-hang")
	if len(acts) != 1 || acts[0].Status != domain.ActivationFailed || !strings.Contains(acts[0].Error, "timed out after 10s and was killed") {
		t.Errorf("hung activation = %+v", acts)
	}
	if el := time.Since(start); el > time.Minute {
		t.Errorf("the hung agent took %s to be killed", el)
	}
	if left := activationContainers(t, eng); len(left) > 0 {
		t.Errorf("%d activation container(s) left: %v", len(left), left[0].Names)
	}
}

// skillSetup points a store at the test's shim and a tight health deadline.
func skillSetup(t *testing.T, st *store.Store) {
	t.Helper()
	setAll(t, st, map[*domain.SettingSpec]string{&skill.ShimSetting: dockertest.StaticBinary(t, "./agent/skill/shim"), &skill.HealthTimeoutSetting: "20s"})
}

const csvHandler = `printf '%s\n' "$INPUT_CSV" | awk -F, 'NR==1{n=NF; for(i=1;i<=NF;i++) h[i]=$i; next}
  {for(i=1;i<=NF;i++) s[i]+=$i}
  END{printf "{"; for(i=1;i<=n;i++) printf "%s\"%s\":%s", (i>1?",":""), h[i], s[i]+0; print "}"}'
`

var csvSkill = map[string]any{"name": "csv_sum", "description": "Sum each column of a CSV with a header row", "template": "shell",
	"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"csv": map[string]any{"type": "string"}}, "required": []string{"csv"}}}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for key, val := range m {
		if key != k {
			out[key] = val
		}
	}
	return out
}

func skillTools(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		if strings.HasPrefix(tool.Name, domain.SkillToolPrefix) {
			out = append(out, tool.Name)
		}
	}
	return out
}

type skillOut struct {
	Output json.RawMessage `json:"output"`
}

// TestSkillsThroughTheServer drives the skill tools over MCP against the
// real factory: a broken handler's build error is the tool error, the
// fixed one works and is called again without a rebuild, and its tool is
// visible only to workers granted it.
func TestSkillsThroughTheServer(t *testing.T) {
	t.Parallel()
	st, _ := dockerStore(t, t.TempDir())
	skillSetup(t, st)
	base, _, owner := startServe(t, st, io.Discard)

	got := servertest.CallErr(t, owner, "create_skill", with(csvSkill, "handler", "for x in; do echo $x\n"))
	if !strings.Contains(got, "syntax error") || !strings.Contains(got, "build log") {
		t.Fatalf("broken handler: tool error = %s", got)
	}
	created := servertest.Call[map[string]any](t, owner, "create_skill", with(csvSkill, "handler", csvHandler))
	if created["version"] != 2.0 || created["status"] != "ready" || created["tool"] != "skill_csv_sum" {
		t.Errorf("created = %v", created)
	}
	input := map[string]any{"csv": "a,b\n1,2\n3,4\n"}
	for range 2 {
		out := servertest.Call[skillOut](t, owner, "call_skill", map[string]any{"name": "csv_sum", "input": input})
		if string(out.Output) != `{"a":4,"b":6}` {
			t.Errorf("call_skill = %s", out.Output)
		}
	}
	listed := servertest.Call[struct{ Skills []domain.Skill }](t, owner, "list_skills", nil)
	if len(listed.Skills) != 1 || listed.Skills[0].Version != 2 || listed.Skills[0].LastUsedAt == nil || listed.Skills[0].Container != created["container"] {
		t.Errorf("list_skills = %+v; want version 2, used, and the same container", listed.Skills)
	}

	// The creator holds the skill's tool; another worker sees it only once
	// granted. The owner holds more tools than tool search shows at once,
	// so it lists them all as a client that turns search off does.
	all, err := servertest.DialHeader(t, base+"/workers/w-owner/mcp", servertest.Token(t, st, "w-owner"), http.Header{domain.ToolSearchHeader: {"off"}})
	if err != nil {
		t.Fatal(err)
	}
	if tools := skillTools(t, all); !slices.Equal(tools, []string{"skill_csv_sum"}) {
		t.Errorf("owner's skill tools = %v", tools)
	}
	servertest.Call[any](t, owner, "create_role", map[string]any{"id": "r-analyst", "title": "Analyst", "content": "x"})
	servertest.Call[any](t, owner, "create_position", map[string]any{"id": "p-analyst", "role": "r-analyst", "title": "Analyst"})
	servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": "w-ana", "position": "p-analyst", "kind": "human", "name": "Ana"})
	ana, err := servertest.Dial(t, base+"/workers/w-ana/mcp", servertest.Token(t, st, "w-ana"))
	if err != nil {
		t.Fatal(err)
	}
	if tools := skillTools(t, ana); len(tools) != 0 {
		t.Errorf("w-ana without the grant sees %v", tools)
	}
	servertest.Call[any](t, owner, "grant_tool", map[string]any{"worker": "w-ana", "tool": "skill_csv_sum"})
	if tools := skillTools(t, ana); !slices.Equal(tools, []string{"skill_csv_sum"}) {
		t.Errorf("w-ana with the grant sees %v", tools)
	}
	out := servertest.Call[skillOut](t, ana, "skill_csv_sum", map[string]any{"csv": "x\n5\n6"})
	if string(out.Output) != `{"x":11}` {
		t.Errorf("skill_csv_sum = %s", out.Output)
	}
}

// TestSkillSurvivesAServerKill: SIGKILL the real binary with a skill
// running; the restarted server health-checks it and the skill works.
func TestSkillSurvivesAServerKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, eng := dockerStore(t, dir)
	db, envs, addr := st.Path(), filepath.Join(dir, "envs"), freeAddr(t)
	skillSetup(t, st)
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	tok := servertest.Token(t, st, "w-owner")
	url := "http://" + addr + "/workers/w-owner/mcp"

	srv := startBinary(t, db, envs, addr)
	owner, err := servertest.Dial(t, url, tok)
	if err != nil {
		t.Fatal(err)
	}
	created := servertest.Call[domain.Skill](t, owner, "create_skill", with(csvSkill, "handler", csvHandler))
	servertest.Call[skillOut](t, owner, "call_skill", map[string]any{"name": "csv_sum", "input": map[string]any{"csv": "a\n1"}})
	srv.Process.Kill()
	srv.Wait()
	owner.Close()

	startBinary(t, db, envs, addr)
	owner, err = servertest.Dial(t, url, tok)
	if err != nil {
		t.Fatal(err)
	}
	out := servertest.Call[skillOut](t, owner, "call_skill", map[string]any{"name": "csv_sum", "input": map[string]any{"csv": "a\n2\n3"}})
	if string(out.Output) != `{"a":5}` {
		t.Errorf("after restart: %s", out.Output)
	}
	sk, _ := st.GetSkill(t.Context(), "csv_sum")
	if sk.Container != created.Container || sk.Status != domain.SkillReady {
		t.Errorf("after restart: %+v; want the same container, still ready", sk)
	}
	insp, err := eng.Client().ContainerInspect(t.Context(), sk.Container)
	if err != nil || !insp.State.Running {
		t.Errorf("skill container after restart: %v", err)
	}
}

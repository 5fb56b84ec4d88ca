package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
)

// SettingReader reads operational config; *store.Store satisfies it.
type SettingReader interface {
	SettingOr(ctx context.Context, spec domain.SettingSpec) (string, error)
	IntSetting(ctx context.Context, spec domain.SettingSpec) int64
}

// RuntimeEnv is what runtimes are built from, per run.
type RuntimeEnv struct {
	Settings SettingReader
	// RoleOf is the role a worker holds, for agent.bash's roles and the
	// docker runtime's overrides.
	RoleOf func(ctx context.Context, worker string) (domain.Role, error)
	// Container builds the docker runtime for a run of the built-in agent
	// configured by llm; nil when the server has no Docker client.
	Container func(ctx context.Context, llm *LLMConfig) (domain.Runtime, error)
	// Helix builds the helix runtime for a run (agent/helix's Host.New);
	// nil when the server was built without it.
	Helix func(ctx context.Context, run domain.Run) (domain.Runtime, error)
	// Cluster builds the kubernetes runtime for a run of the built-in
	// agent configured by llm; nil when the server was built without it.
	Cluster func(ctx context.Context, llm *LLMConfig) (domain.Runtime, error)
	// LookPath finds an executable; exec.LookPath when nil.
	LookPath func(string) (string, error)
	// Sandbox is what CheckSandbox found at start, asked for when a host
	// run needs it (CheckSandboxLater; a check made before: its Result).
	// The host runtimes run their agent in it, and refuse to run at all
	// without it unless agent.sandbox is off; nil is no sandbox.
	Sandbox func() SandboxCheck
	// Logger gets the warning of every unsandboxed run; nil discards it.
	Logger *slog.Logger
	// Sessions keeps the sessions that preserve_context continues; nil
	// starts every run fresh.
	Sessions SessionKeeper
	// Now is the clock of session ages; time.Now when nil.
	Now func() time.Time
}

// RuntimeDef is one row of Runtimes.
type RuntimeDef struct {
	Name        string
	Description string
	// Default, when set, says when an empty agent.runtime picks this
	// runtime; rows are asked in order, and the first whose Picked is
	// true wins.
	Default string
	Picked  func(ctx context.Context, env RuntimeEnv) bool
	// New builds the runtime for one run from the settings, read per run
	// so `config set` applies without a restart. An error means the
	// agent never started: the dispatcher retries, then parks.
	New func(ctx context.Context, env RuntimeEnv, run domain.Run) (domain.Runtime, error)
}

// Runtime names, as agent.runtime takes them.
const (
	RuntimeClaude     = "claude"
	RuntimeCommand    = "command"
	RuntimeBuiltin    = "builtin"
	RuntimeExample    = "example"
	RuntimeDocker     = "docker"
	RuntimeCodex      = "codex"
	RuntimeGemini     = "gemini"
	RuntimeOpenCode   = "opencode"
	RuntimeHelix      = "helix"
	RuntimeKubernetes = "kubernetes"
)

// Runtimes is every runtime an activation can run on. agent.runtime's
// valid values, its description and its errors derive from it: a new
// runtime is one row here.
var Runtimes = []RuntimeDef{
	{Name: RuntimeClaude, Description: "Claude Code (`claude -p`) in the worker's directory, allowed only its helix-org MCP tools; agent.model and agent.effort",
		Default: "when `claude` is on PATH",
		Picked:  func(_ context.Context, env RuntimeEnv) bool { _, err := env.lookPath("claude"); return err == nil },
		New: func(ctx context.Context, env RuntimeEnv, run domain.Run) (domain.Runtime, error) {
			sb, err := env.sandbox(ctx, run)
			if err != nil {
				return nil, err
			}
			return &Claude{Model: env.get(ctx, ModelSetting), Effort: env.get(ctx, EffortSetting), Sandbox: sb}, nil
		}},
	{Name: RuntimeCommand, Description: "agent.command, run with /bin/sh -c in the worker's directory",
		Default: "else when agent.command is set",
		Picked:  func(ctx context.Context, env RuntimeEnv) bool { return env.get(ctx, CommandSetting) != "" },
		New: func(ctx context.Context, env RuntimeEnv, run domain.Run) (domain.Runtime, error) {
			sb, err := env.sandbox(ctx, run)
			if err != nil {
				return nil, err
			}
			return &Command{Line: env.get(ctx, CommandSetting), Sandbox: sb}, nil
		}},
	{Name: RuntimeExample, Description: "the built-in agent with a rule in place of a model: it answers each message that woke it, on its stream, " +
		"with the reply its role gives in backticks (`echo: <body>`); offline, for a first try and for demos",
		Default: "else when agent.model is not set", Picked: func(ctx context.Context, env RuntimeEnv) bool { return env.get(ctx, ModelSetting) == "" },
		New: newExample},
	{Name: RuntimeBuiltin, Description: "the built-in agent (`helix-org agent run`), calling agent.model through the server's relay",
		Default: "else", Picked: func(context.Context, RuntimeEnv) bool { return true }, New: newBuiltin},
	{Name: RuntimeDocker, Description: "a one-shot container of agent.docker.image running agent.docker.cli: the built-in agent, claude, codex, gemini or opencode (agent.docker.*)", New: newContainer},
	{Name: RuntimeCodex, Description: "the Codex CLI (`codex exec`) in the worker's directory, its only MCP server the worker's endpoint; agent.model",
		New: func(ctx context.Context, env RuntimeEnv, run domain.Run) (domain.Runtime, error) {
			sb, err := env.sandbox(ctx, run)
			return &Codex{Model: env.get(ctx, ModelSetting), Sandbox: sb}, err
		}},
	{Name: RuntimeGemini, Description: "Gemini CLI, headless, in the worker's directory, its only MCP server the worker's endpoint; agent.model",
		New: func(ctx context.Context, env RuntimeEnv, run domain.Run) (domain.Runtime, error) {
			sb, err := env.sandbox(ctx, run)
			return &Gemini{Model: env.get(ctx, ModelSetting), Sandbox: sb}, err
		}},
	{Name: RuntimeOpenCode, Description: "OpenCode (`opencode run`) in the worker's directory, its only MCP server the worker's endpoint; agent.model, an Anthropic model",
		New: func(ctx context.Context, env RuntimeEnv, run domain.Run) (domain.Runtime, error) {
			sb, err := env.sandbox(ctx, run)
			return &OpenCode{Model: env.get(ctx, ModelSetting), Sandbox: sb}, err
		}},
	{Name: RuntimeHelix, Description: "a Helix control plane (helix.*): each worker gets a Helix project, agent app and git repository, " +
		"its role on the helix-specs branch, and one chat session its runs share, later prompts queued on it", New: newHelix},
	{Name: RuntimeKubernetes, Description: "a Kubernetes Job per activation in kubernetes.namespace, running kubernetes.image (the built-in agent by default), " +
		"its token and endpoints in a Secret mounted into the pod (kubernetes.*)", New: newCluster},
}

// runtimeSetting derives agent.runtime from the table.
func runtimeSetting(table []RuntimeDef) domain.SettingSpec {
	enum := []string{""}
	var names, defaults []string
	for _, r := range table {
		enum = append(enum, r.Name)
		names = append(names, r.Name)
		if r.Picked != nil {
			defaults = append(defaults, r.Name+" "+r.Default)
		}
	}
	return domain.SettingSpec{Key: "agent.runtime", Type: domain.SettingString, Enum: enum, RunsCode: true,
		Description: "How activations run: " + strings.Join(names, ", ") + ". Empty picks " + strings.Join(defaults, ", ") + "."}
}

// Selector runs each activation on the runtime agent.runtime names, read
// per run, so `config set agent.runtime …` applies without a restart.
type Selector struct {
	Env   RuntimeEnv
	Table []RuntimeDef // Runtimes when nil
}

var _ domain.Runtime = Selector{}

// Run builds the runtime and runs the activation. A runtime that cannot
// be built returns before the agent starts, so the dispatcher retries.
func (s Selector) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	def, err := s.pick(ctx)
	if err != nil {
		return domain.RunResult{ExitStatus: -1}, err
	}
	run.Runtime = def.Name
	rt, err := def.New(ctx, s.Env, run)
	if err != nil {
		return domain.RunResult{Runtime: def.Name, ExitStatus: -1}, err
	}
	preserve, err := s.Env.preserves(ctx, run.WorkerID)
	if err != nil {
		return domain.RunResult{Runtime: def.Name, ExitStatus: -1}, err
	}
	var prev domain.AgentSession
	key := def.Name
	if k, ok := rt.(sessionKeyer); ok {
		key = k.SessionKey(ctx, run.WorkerID)
	}
	if preserve {
		if prev, err = s.Env.resume(ctx, key, &run); err != nil {
			return domain.RunResult{Runtime: def.Name, ExitStatus: -1}, err
		}
	}
	run.KeepHistory = preserve
	res, err := rt.Run(ctx, run)
	res.Runtime = def.Name
	res.Continued = run.Session != "" && res.Session == run.Session
	if preserve {
		if kerr := s.Env.keep(ctx, key, run, prev, res); kerr != nil && s.Env.Logger != nil {
			s.Env.Logger.Error("keep agent session", "worker", run.WorkerID, "activation", run.ActivationID, "err", kerr)
		}
	}
	return res, err
}

// sessionKeyer is a runtime that runs more than one kind of agent (the
// docker runtime's agent.docker.cli): it keeps a worker's preserved
// session per kind, so one CLI is never handed another's session id.
type sessionKeyer interface {
	SessionKey(ctx context.Context, worker string) string
}

func (s Selector) pick(ctx context.Context) (RuntimeDef, error) {
	table := s.Table
	if table == nil {
		table = Runtimes
	}
	name := s.Env.get(ctx, RuntimeSetting)
	for _, r := range table {
		if r.Name == name || name == "" && r.Picked != nil && r.Picked(ctx, s.Env) {
			return r, nil
		}
	}
	setting := runtimeSetting(table)
	return RuntimeDef{}, fmt.Errorf("agent.runtime %q is not available in this build (valid: %s)", name, strings.Join(setting.Enum[1:], ", "))
}

func (env RuntimeEnv) get(ctx context.Context, spec domain.SettingSpec) string {
	v, _ := env.Settings.SettingOr(ctx, spec)
	return v
}

func (env RuntimeEnv) lookPath(name string) (string, error) {
	if env.LookPath != nil {
		return env.LookPath(name)
	}
	return exec.LookPath(name)
}

func newBuiltin(ctx context.Context, env RuntimeEnv, run domain.Run) (domain.Runtime, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("builtin runtime: find the helix-org executable: %w", err)
	}
	// The relay would refuse every call; say what to set at once.
	if err := LLMFromSettings(ctx, env.Settings).Check(); err != nil {
		return nil, err
	}
	llm, err := env.runLLM(ctx, run)
	if err != nil {
		return nil, err
	}
	sb, err := env.sandbox(ctx, run)
	if err != nil {
		return nil, err
	}
	return &Builtin{Exe: exe, LLM: llm, Sandbox: sb}, nil
}

// sandbox is the sandbox of one host run, from the settings read per run:
// nil with agent.sandbox off, which is warned on the run's log and the
// server's every time; an error, so the agent never starts, when
// bubblewrap cannot run here or a shared path is missing.
func (env RuntimeEnv) sandbox(ctx context.Context, run domain.Run) (*Bwrap, error) {
	if env.get(ctx, SandboxSetting) == SandboxOff {
		msg := "agent.sandbox is off: this agent runs unsandboxed as the server's user, able to read the database, its key file, " +
			"every worker's directory and other runs' tokens"
		if run.Log != nil {
			run.Log(domain.LogEntry{Kind: domain.LogNote, Text: "warning: " + msg})
		}
		if env.Logger != nil {
			env.Logger.Warn(msg, "worker", run.WorkerID, "activation", run.ActivationID)
		}
		return nil, nil
	}
	var check SandboxCheck
	if env.Sandbox != nil {
		check = env.Sandbox()
	}
	if check.Err == nil && check.Bwrap == "" {
		check.Err = errors.New("no sandbox was found at start")
	}
	if check.Err != nil {
		return nil, fmt.Errorf("host agents run only in a bubblewrap sandbox, and it cannot run here (%v): install bubblewrap and allow user namespaces, "+
			"use agent.runtime docker, or run host agents unsandboxed as the server's user with `helix-org config set %s %s`", check.Err, SandboxSetting.Key, SandboxOff)
	}
	paths, err := ParseSandboxPaths(env.get(ctx, SandboxPathsSetting))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SandboxPathsSetting.Key, err)
	}
	for _, p := range slices.Concat(paths.ReadOnly, paths.Writable) {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s: %w", SandboxPathsSetting.Key, err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: find the helix-org executable: %w", err)
	}
	return &Bwrap{Path: check.Bwrap, Exe: exe, Paths: paths}, nil
}

// newExample is the built-in agent on exampleModel, in the sandbox.
func newExample(ctx context.Context, env RuntimeEnv, run domain.Run) (domain.Runtime, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("example runtime: find the helix-org executable: %w", err)
	}
	sb, err := env.sandbox(ctx, run)
	if err != nil {
		return nil, err
	}
	return &Builtin{Exe: exe, LLM: LLMConfig{Provider: ExampleProvider, Model: ExampleProvider, MaxTurns: 2}, Sandbox: sb}, nil
}

func newContainer(ctx context.Context, env RuntimeEnv, run domain.Run) (domain.Runtime, error) {
	if env.Container == nil {
		return nil, errors.New("the docker runtime is unavailable: no Docker client could be built from the environment (check DOCKER_HOST)")
	}
	llm, err := env.runLLM(ctx, run)
	if err != nil {
		return nil, err
	}
	return env.Container(ctx, &llm)
}

func newHelix(ctx context.Context, env RuntimeEnv, run domain.Run) (domain.Runtime, error) {
	if env.Helix == nil {
		return nil, errors.New("the helix runtime is unavailable in this server")
	}
	return env.Helix(ctx, run)
}

func newCluster(ctx context.Context, env RuntimeEnv, run domain.Run) (domain.Runtime, error) {
	if env.Cluster == nil {
		return nil, errors.New("the kubernetes runtime is unavailable in this server")
	}
	llm, err := env.runLLM(ctx, run)
	if err != nil {
		return nil, err
	}
	return env.Cluster(ctx, &llm)
}

// LLMFromSettings is the built-in agent's config from agent.*.
func LLMFromSettings(ctx context.Context, st SettingReader) LLMConfig {
	str := func(spec domain.SettingSpec) string { v, _ := st.SettingOr(ctx, spec); return v }
	return LLMConfig{
		Provider:  str(ProviderSetting),
		Model:     str(ModelSetting),
		BaseURL:   str(BaseURLSetting),
		APIKey:    str(APIKeySetting),
		MaxTurns:  int(st.IntSetting(ctx, MaxTurnsSetting)),
		MaxTokens: int(st.IntSetting(ctx, MaxTokensSetting)),
	}
}

// runLLM is the built-in agent's config for one run: the model and
// limits, and bash exactly where agent.bash allows it for the run's
// worker and role. The provider's URL and key are left out: the agent
// gets the relay and its token (LLMConfig.ForRun).
func (env RuntimeEnv) runLLM(ctx context.Context, run domain.Run) (LLMConfig, error) {
	cfg := LLMFromSettings(ctx, env.Settings)
	cfg.BaseURL, cfg.APIKey = "", ""
	scope, err := ParseBashScope(env.get(ctx, BashSetting))
	if err != nil {
		return cfg, err
	}
	role, err := env.RoleOf(ctx, run.WorkerID)
	if err != nil {
		return cfg, err
	}
	cfg.Bash = scope.Allows(run.WorkerID, role.ID)
	byRole, err := ParseByRole(env.get(ctx, ByRoleSetting))
	if err != nil {
		return cfg, err
	}
	if l, ok := byRole[role.ID]; ok {
		cfg.Model, cfg.MaxTurns = cmp.Or(l.Model, cfg.Model), cmp.Or(l.MaxTurns, cfg.MaxTurns)
	}
	if !cfg.Bash && RoleAsksForBash(role.Content) && run.Log != nil {
		run.Log(domain.LogEntry{Kind: domain.LogNote, Text: fmt.Sprintf("role %s asks for `bash: true` in its front matter; ignored: "+
			"role text cannot turn on host capabilities, only an operator can (helix-org config set %s)", role.ID, BashSetting.Key)})
	}
	return cfg, nil
}

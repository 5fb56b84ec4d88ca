package docker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// drainWait bounds how long output may trail a container's exit.
const drainWait = 5 * time.Second

// Paths inside an activation container.
const (
	Workspace  = "/workspace"
	BinaryPath = "/usr/local/bin/helix-org"
)

// Runtime runs each activation as a one-shot container: the worker's
// environment directory mounted as the workspace, the prompt on stdin,
// every output line on the activation stream, and the container removed
// when the run ends — or killed first, when the run's context ends.
type Runtime struct {
	Engine *Engine
	// Image, Command and CLI are the defaults; Overrides may replace them
	// per role or worker, which RoleOf resolves. CLI, when it names an
	// agent CLI (agent.ContainerCLIs), runs that in place of Command.
	Image     string
	Command   string
	CLI       string
	Overrides Overrides
	RoleOf    func(ctx context.Context, worker string) (string, error)
	// Binary, when set, is a static helix-org on the host, mounted
	// read-only at BinaryPath.
	Binary string
	// LLM, when set, is the built-in agent's model and limits, passed to the
	// container as HELIX_ORG_LLM_* pointing at the relay with the run's
	// token: the provider key never enters a container.
	LLM *agent.LLMConfig
	// Model and Effort are agent.model and agent.effort, for a CLI.
	Model, Effort string
	// Env is extra environment from operational config (agent.docker.env),
	// set last so an operator's choice stands.
	Env    map[string]string
	Limits Limits
	// MCPBase returns the base URL at which a container on the agents
	// network reaches the server's MCP endpoints.
	MCPBase func(ctx context.Context) (string, error)
	// Forbidden lists host paths that must never be mounted (the database).
	Forbidden []string
	// StopGrace is how long a container gets between SIGTERM and SIGKILL
	// once its run's context ends; default agent.StopGrace.
	StopGrace time.Duration
}

var _ domain.Runtime = (*Runtime)(nil)

// Run carries out one activation.
func (r *Runtime) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	fail := domain.RunResult{ExitStatus: -1}
	// Bind mounts need absolute paths; the envs dir may be relative to
	// the server's working directory (the default is ./envs).
	dir, err := filepath.Abs(run.EnvDir)
	if err != nil {
		return fail, fmt.Errorf("workspace %s: %w", run.EnvDir, err)
	}
	run.EnvDir = dir
	spec, err := r.prepare(ctx, run)
	if err != nil {
		return fail, err
	}
	id, err := r.create(ctx, run, spec)
	if err != nil {
		return fail, err
	}
	defer r.Engine.RemoveContainer(id)
	return r.attachAndWait(ctx, id, run, spec.agent)
}

// containerSpec is what prepare resolved for one run.
type containerSpec struct {
	override Override
	// inside is the run as seen from the container: its workspace, and
	// the server at the agents network's listener, for MCP and the model
	// relay alike.
	inside  domain.Run
	network Network
	// agent is what runs: agent.docker.command, or a CLI's invocation.
	agent agent.Invocation
}

// SessionKey keeps a worker's preserved session per agent.docker.cli, so
// changing the CLI starts it fresh rather than passing one CLI's session
// id to another.
func (r *Runtime) SessionKey(ctx context.Context, worker string) string {
	role := ""
	if r.RoleOf != nil && len(r.Overrides.Roles) > 0 {
		role, _ = r.RoleOf(ctx, worker) // no role: the worker's and default entries still apply
	}
	ov := r.Overrides.For(Override{Image: r.Image, Command: r.Command, CLI: r.CLI}, worker, role)
	if ov.builtin() {
		return agent.RuntimeDocker
	}
	return agent.RuntimeDocker + "/" + ov.CLI
}

func (r *Runtime) prepare(ctx context.Context, run domain.Run) (containerSpec, error) {
	role := ""
	if r.RoleOf != nil && (len(r.Overrides.Roles) > 0) {
		var err error
		if role, err = r.RoleOf(ctx, run.WorkerID); err != nil {
			return containerSpec{}, fmt.Errorf("role of %s: %w", run.WorkerID, err)
		}
	}
	ov := r.Overrides.For(Override{Image: r.Image, Command: r.Command, CLI: r.CLI}, run.WorkerID, role)
	if ov.Image == "" {
		return containerSpec{}, errors.New("agent.docker.image is not set: build an image with your agent in it and run `helix-org config set agent.docker.image <image>`")
	}
	if len(strings.Fields(ov.Command)) == 0 && ov.builtin() {
		return containerSpec{}, errors.New("agent.docker.command is empty")
	}
	for _, src := range []string{run.EnvDir, r.Binary} {
		if src == "" {
			continue
		}
		if err := checkMount(src, r.Forbidden); err != nil {
			return containerSpec{}, err
		}
	}
	base, err := r.MCPBase(ctx)
	if err != nil {
		return containerSpec{}, fmt.Errorf("server endpoint for containers: %w", err)
	}
	// mcp.json reads the URL from HELIX_ORG_MCP_URL, which the container
	// gets as the address it reaches from inside, not the host's loopback.
	spec := containerSpec{override: ov, inside: run}
	spec.inside.EnvDir, spec.inside.BaseURL, spec.inside.MCPURL = Workspace, base, domain.MCPURL(base, run.WorkerID)
	if spec.agent, err = r.agent(ov, spec.inside); err != nil {
		return containerSpec{}, err
	}
	// The CLI's config goes in before the workspace is handed over.
	if err := spec.agent.WriteFiles(run.EnvDir); err != nil {
		return containerSpec{}, fmt.Errorf("%s config: %w", ov.CLI, err)
	}
	if err := chownTree(run.EnvDir, r.Limits.User); err != nil {
		return containerSpec{}, fmt.Errorf("hand workspace to %s: %w", r.Limits.User, err)
	}
	if spec.network, err = r.Engine.Network(ctx, NetAgents); err != nil {
		return containerSpec{}, err
	}
	return spec, nil
}

// agent is what a container runs for ov: agent.docker.command, fed the
// prompt, its output read as Claude-style stream-json where it is; or
// the agent CLI ov names, as its host runtime runs it, for the run as
// seen from inside.
func (r *Runtime) agent(ov Override, inside domain.Run) (agent.Invocation, error) {
	if ov.builtin() {
		args := strings.Fields(ov.Command)
		return agent.Invocation{Bin: args[0], Args: args[1:], Feed: agent.FeedText(inside.Prompt), Line: agent.LogLine}, nil
	}
	cli, err := agent.ContainerCLI(ov.CLI, r.Model, r.Effort)
	if err != nil {
		return agent.Invocation{}, fmt.Errorf("%s: %w", CLISetting.Key, err)
	}
	return cli.Invocation(inside)
}

func (r *Runtime) create(ctx context.Context, run domain.Run, spec containerSpec) (string, error) {
	inside := spec.inside
	// PATH stays the image's (Docker's default includes BinaryPath's dir).
	env := append([]string{"HOME=" + Workspace, "TMPDIR=/tmp"}, agent.RunEnv(inside)...)
	// The built-in agent's model settings; a CLI has its own variables.
	if r.LLM != nil && spec.override.builtin() {
		env = append(env, r.LLM.ForRun(inside).Environ()...)
	}
	env = overlay(append(env, spec.agent.Env...), r.Env)
	mounts := []mount.Mount{{Type: mount.TypeBind, Source: run.EnvDir, Target: Workspace}}
	if r.Binary != "" {
		bin, err := filepath.Abs(r.Binary)
		if err != nil {
			return "", fmt.Errorf("agent.docker.binary %s: %w", r.Binary, err)
		}
		mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: bin, Target: BinaryPath, ReadOnly: true})
	}
	cfg := &container.Config{
		Image: spec.override.Image, Cmd: append([]string{spec.agent.Bin}, spec.agent.Args...), Env: env, WorkingDir: Workspace, User: r.Limits.User,
		Labels:    r.Engine.Labels(KindActivation, LabelActivation, run.ActivationID, LabelWorker, run.WorkerID),
		OpenStdin: true, StdinOnce: true, AttachStdin: true, AttachStdout: true, AttachStderr: true,
	}
	nets := &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{spec.network.Name: {}}}
	c, err := r.Engine.cli.ContainerCreate(ctx, cfg, r.Limits.HostConfig(mounts), nets, nil, r.Engine.Name(run.ActivationID))
	if err != nil {
		return "", fmt.Errorf("create container from %s: %w", spec.override.Image, err)
	}
	for _, n := range spec.override.Networks {
		if err := r.Engine.cli.NetworkConnect(ctx, n, c.ID, nil); err != nil {
			r.Engine.RemoveContainer(c.ID)
			return "", fmt.Errorf("join network %s: %w", n, err)
		}
	}
	return c.ID, nil
}

// overlay sets extra's variables over env: an operator's agent.docker.env
// replaces a variable of the same name (say ANTHROPIC_BASE_URL, to send a
// container to a provider directly) instead of leaving two.
func overlay(env []string, extra map[string]string) []string {
	out := slices.DeleteFunc(env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, replaced := extra[k]
		return replaced
	})
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// attachAndWait starts the container with what inv feeds on stdin (the
// prompt), logs its output as inv reads it, and waits for it to exit or
// for ctx to end.
func (r *Runtime) attachAndWait(ctx context.Context, id string, run domain.Run, inv agent.Invocation) (domain.RunResult, error) {
	res := domain.RunResult{ExitStatus: -1}
	cli := r.Engine.cli
	hj, err := cli.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return res, fmt.Errorf("attach: %w", err)
	}
	defer hj.Close()
	waitC, errC := cli.ContainerWait(context.WithoutCancel(ctx), id, container.WaitConditionNextExit)
	// Past ctx's end too: an oom in the stop's grace is still news.
	oom := r.watchOOM(context.WithoutCancel(ctx), id, run.Log)
	defer oom.stop()
	if err := cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return res, fmt.Errorf("start container: %w", err)
	}
	// A container is found again by its labels, not a host process group.
	run.Started(domain.AgentProcess{})
	feedCtx, endFeed := context.WithCancel(ctx)
	defer endFeed()
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		inv.Feed(feedCtx, attachedStdin{hj})
	}()
	done := r.stream(hj.Reader, run.Log, inv.Line, &res)
	var code int64 = -1
	var waitErr error
	select {
	case w := <-waitC:
		code = w.StatusCode
	case waitErr = <-errC:
	case <-ctx.Done():
		r.stop(id)
		select {
		case w := <-waitC:
			code = w.StatusCode
			// 128+SIGKILL: the agent outlived the grace after SIGTERM.
			res.Stop = agent.StopStopped
			if code == 137 {
				res.Stop = agent.StopKilled
			}
			run.Log(domain.LogEntry{Kind: domain.LogNote, Text: agent.StopNote(res.Stop, r.grace())})
		case waitErr = <-errC:
		}
	}
	endFeed()
	// The daemon closes the stream once it has sent the last output; wait
	// for that, but not forever.
	select {
	case <-done:
	case <-time.After(drainWait):
		hj.Close()
		<-done
	}
	hj.Close() // ends a write the feed is blocked in
	<-fed
	res.ExitStatus = int(code)
	insp, err := cli.ContainerInspect(context.WithoutCancel(ctx), id)
	oom.end(err == nil && insp.State != nil && insp.State.OOMKilled)
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if waitErr != nil {
		return res, fmt.Errorf("wait for container: %w", waitErr)
	}
	// 128+SIGKILL, and not from us (ctx is live): docker kill, the OOM killer.
	res.Killed = code == 137
	return res, nil
}

// attachedStdin is a container's stdin over its attach connection:
// closing it half-closes the connection, which ends the container's input.
type attachedStdin struct{ hj types.HijackedResponse }

func (a attachedStdin) Write(p []byte) (int, error) { return a.hj.Conn.Write(p) }
func (a attachedStdin) Close() error                { return a.hj.CloseWrite() }

// stream demultiplexes stdout and stderr and logs each line: stdout as
// the agent's output, which line reads, stderr prefixed like the command
// runtime does. The returned channel closes when both are drained.
func (r *Runtime) stream(src io.Reader, log func(domain.LogEntry), line func(string, func(domain.LogEntry), *domain.RunResult), res *domain.RunResult) <-chan struct{} {
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(outW, errW, src)
		outW.CloseWithError(err)
		errW.CloseWithError(err)
	}()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range []struct {
		r      io.Reader
		stderr bool
	}{{outR, false}, {errR, true}} {
		wg.Go(func() {
			sc := bufio.NewScanner(s.r)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				mu.Lock()
				if s.stderr {
					log(domain.LogEntry{Kind: domain.LogOutput, Text: "stderr: " + strings.TrimRight(sc.Text(), "\r")})
				} else {
					line(sc.Text(), log, res)
				}
				mu.Unlock()
			}
			io.Copy(io.Discard, s.r)
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

func (r *Runtime) grace() time.Duration {
	if r.StopGrace <= 0 {
		return agent.StopGrace
	}
	return r.StopGrace
}

// stop sends SIGTERM and, after the grace period, SIGKILL.
func (r *Runtime) stop(id string) {
	grace := r.grace()
	secs := int((grace + time.Second - 1) / time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), grace+30*time.Second)
	defer cancel()
	if err := r.Engine.cli.ContainerStop(ctx, id, container.StopOptions{Timeout: &secs}); err != nil {
		r.Engine.log.Warn("stop container", "container", id, "err", err)
	}
}

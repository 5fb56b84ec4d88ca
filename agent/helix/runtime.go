package helix

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// Store is what the runtime keeps of each worker's Helix workspace;
// *store.Store satisfies it.
type Store interface {
	HelixWorkspace(ctx context.Context, worker string) (domain.HelixWorkspace, error)
	PutHelixWorkspace(ctx context.Context, w domain.HelixWorkspace) error
	SetHelixSession(ctx context.Context, worker, session string) error
	SetHelixSpecsSum(ctx context.Context, worker, sum string) error
	ForgetHelixWorkspace(ctx context.Context, worker string) error
}

// Host is the helix runtime of one server: built once at start, it
// holds what runs share, the bound on how many run on Helix at once.
type Host struct {
	Store    Store
	Settings agent.SettingReader
	// RoleOf is the role a worker holds, named in its project.
	RoleOf func(ctx context.Context, worker string) (domain.Role, error)
	// AllowPrivate lets the client reach Helix on this host or network
	// (safedial's transport.webhook.allow_private); nil never does.
	AllowPrivate func(ctx context.Context) bool

	mu    sync.Mutex
	busy  int
	freed chan struct{}
}

// New builds the runtime of one run from the settings as they are now;
// missing config is an error before anything starts, so the dispatcher
// retries and then parks, saying which keys to set.
func (h *Host) New(ctx context.Context, _ domain.Run) (domain.Runtime, error) {
	cfg := ReadConfig(ctx, h.Settings)
	if err := cfg.Missing(); err != nil {
		return nil, err
	}
	return &Runtime{host: h, cfg: cfg, client: NewClient(cfg, h.AllowPrivate)}, nil
}

// PushSpecs puts a worker's role and identity (role.md and identity.md,
// as dispatch.RoleFiles makes them) on its helix-specs branch when they
// changed, so an edit reaches Helix when it is made, not at the worker's
// next run. A worker with no repository on Helix yet, or a server with
// no Helix configured, has nothing to push.
func (h *Host) PushSpecs(ctx context.Context, worker string, files map[string]string) (bool, error) {
	ws, err := h.Store.HelixWorkspace(ctx, worker)
	if errors.Is(err, domain.ErrNotFound) || err == nil && ws.RepoID == "" {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	cfg := ReadConfig(ctx, h.Settings)
	if cfg.URL == "" || cfg.APIKey == "" {
		return false, nil
	}
	return pushSpecs(ctx, NewClient(cfg, h.AllowPrivate), h.Store, &ws, files)
}

// acquire takes one of helix.desktop_quota slots, waiting for one to free.
func (h *Host) acquire(ctx context.Context, quota int, run domain.Run) error {
	said := false
	for {
		h.mu.Lock()
		if h.busy < quota {
			h.busy++
			h.mu.Unlock()
			return nil
		}
		if h.freed == nil {
			h.freed = make(chan struct{})
		}
		freed := h.freed
		h.mu.Unlock()
		if !said {
			note(run, fmt.Sprintf("waiting for a Helix session slot: %d run(s) on Helix already (%s)", quota, DesktopQuotaSetting.Key))
			said = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-freed:
		}
	}
}

func (h *Host) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.busy--
	if h.freed != nil {
		close(h.freed)
		h.freed = nil
	}
}

// Runtime runs one activation on Helix.
type Runtime struct {
	host   *Host
	cfg    Config
	client *Client
}

var _ domain.Runtime = (*Runtime)(nil)

// Run makes sure the worker's project, app and repository exist and carry
// its current role, gives Helix the run's token, then hands the prompt to
// the worker's session: a new chat on its first run, read to the end of
// its streamed answer; the session's message queue after that, waiting
// for the answer. Everything before the prompt reaches Helix is a failed
// start, which the dispatcher retries with backoff and then parks.
func (r *Runtime) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	fail := domain.RunResult{ExitStatus: -1}
	if err := r.host.acquire(ctx, r.cfg.Quota, run); err != nil {
		return fail, err
	}
	defer r.host.release()
	ws, err := r.prepare(ctx, run)
	if err != nil {
		return fail, err
	}
	prompt := preface(run.WorkerID) + run.Prompt
	var res domain.RunResult
	if ws.SessionID == "" {
		res, err = r.chat(ctx, run, ws, prompt)
	} else {
		res, err = r.queue(ctx, run, ws, prompt)
	}
	if ctx.Err() != nil && res.Session != "" {
		r.stop(context.WithoutCancel(ctx), run, res.Session)
	}
	return res, err
}

// prepare makes the worker's workspace ready for the prompt: project,
// app and repository, its role on helix-specs, the MCP endpoint on the
// app and the run's token in the app's secret. When Helix no longer has
// the app or the repository recorded (deleted on Helix's side), the
// record is dropped, so the dispatcher's retry makes them again.
func (r *Runtime) prepare(ctx context.Context, run domain.Run) (domain.HelixWorkspace, error) {
	ws, err := r.ensure(ctx, run)
	if err != nil {
		return ws, err
	}
	err = r.syncSpecs(ctx, run, &ws)
	if err == nil {
		err = r.attachMCP(ctx, run, ws)
	}
	if err == nil {
		if err = r.client.PutAppSecret(ctx, ws.AppID, TokenSecret, run.Token); err != nil {
			err = fmt.Errorf("give agent app %s the run's token: %w", ws.AppID, err)
		}
	}
	if IsNotFound(err) {
		if ferr := r.host.Store.ForgetHelixWorkspace(context.WithoutCancel(ctx), run.WorkerID); ferr != nil {
			return ws, ferr
		}
		note(run, fmt.Sprintf("Helix no longer has the worker's project %s (%v): the retry makes it again", ws.ProjectID, err))
	}
	return ws, err
}

// stop cancels the turn of a run the server stopped (a cancel, the
// timeout, shutdown), so Helix's agent does not go on without a token.
func (r *Runtime) stop(ctx context.Context, run domain.Run, session string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := r.client.CancelTurn(ctx, session); err != nil {
		note(run, fmt.Sprintf("the run was stopped; cancelling its turn on Helix session %s failed: %v", session, err))
		return
	}
	note(run, "the run was stopped; its turn on Helix session "+session+" was cancelled")
}

// preface tells the agent where its role is and how it acts: Helix's
// agent reads its specs from the repository, not from this server.
func preface(worker string) string {
	return "Your role and identity are on the " + SpecsBranch + " branch of your repository, in workers/" + worker +
		"/.context/role.md and identity.md; pull it before you read them. You act on the org only through your " +
		MCPName + " MCP tools.\n\n"
}

// chat opens the worker's session with its first prompt. The session is
// recorded as soon as Helix names it, so that even when its agent was not
// ready for the prompt (a cold start's race), the retry the dispatcher
// makes goes through the session's durable message queue instead of
// opening another.
func (r *Runtime) chat(ctx context.Context, run domain.Run, ws domain.HelixWorkspace, prompt string) (domain.RunResult, error) {
	var saveErr error
	started := false
	req := ChatRequest{AppID: ws.AppID, ProjectID: ws.ProjectID, OrganizationID: r.cfg.Organization, SessionRole: sessionRole, Type: "text",
		AgentType: agentType, Provider: r.cfg.Provider, Model: r.cfg.Model,
		Messages: []ChatMessage{{Role: "user", Content: ChatContent{ContentType: "text", Parts: []string{prompt}}}}}
	ans, err := r.client.Chat(ctx, req, func(id string) {
		saveErr = r.host.Store.SetHelixSession(context.WithoutCancel(ctx), ws.WorkerID, id)
	}, func(string) {
		if !started {
			started = true
			run.Started(domain.AgentProcess{})
		}
	})
	res := domain.RunResult{Session: ans.SessionID}
	if saveErr != nil {
		return domain.RunResult{ExitStatus: -1}, fmt.Errorf("record Helix session %s: %w", ans.SessionID, saveErr)
	}
	if err == nil && ans.StreamError != "" && !started {
		note(run, fmt.Sprintf("Helix opened session %s but its agent did not take the prompt (%s): the run is retried through the session's message queue",
			ans.SessionID, ans.StreamError))
		return domain.RunResult{ExitStatus: -1, Session: ans.SessionID}, fmt.Errorf("helix session %s: %s", ans.SessionID, ans.StreamError)
	}
	if !started {
		if err != nil {
			return domain.RunResult{ExitStatus: -1, Session: ans.SessionID}, fmt.Errorf("start a Helix chat on app %s: %w", ws.AppID, err)
		}
		run.Started(domain.AgentProcess{})
	}
	return r.answered(run, res, ans.Text, ans.StreamError, err)
}

// queue hands the prompt to the worker's session's message queue and
// waits for the answer: the session's last interaction, once it is a new
// one and done. A session Helix no longer has is forgotten, and the run
// fails to start, so the retry opens a new one.
func (r *Runtime) queue(ctx context.Context, run domain.Run, ws domain.HelixWorkspace, prompt string) (domain.RunResult, error) {
	fail := domain.RunResult{ExitStatus: -1, Session: ws.SessionID}
	before, err := r.client.Output(ctx, ws.SessionID)
	if err == nil {
		_, err = r.client.QueueMessage(ctx, ws.SessionID, prompt)
	}
	if IsNotFound(err) {
		gone := ws.SessionID
		if perr := r.host.Store.SetHelixSession(context.WithoutCancel(ctx), ws.WorkerID, ""); perr != nil {
			return fail, perr
		}
		note(run, "Helix no longer has session "+gone+": the retry opens a new one")
		return fail, fmt.Errorf("helix session %s is gone: %w", gone, err)
	}
	if err != nil {
		return fail, fmt.Errorf("queue the prompt on Helix session %s: %w", ws.SessionID, err)
	}
	run.Started(domain.AgentProcess{})
	note(run, "prompt queued on Helix session "+ws.SessionID)
	res := domain.RunResult{Session: ws.SessionID, Continued: true}
	tick := time.NewTicker(r.cfg.Poll)
	defer tick.Stop()
	for {
		out, err := r.client.Output(ctx, ws.SessionID)
		if err == nil && out.InteractionID != before.InteractionID && out.Done() {
			msg := ""
			if out.Status != "complete" {
				msg = out.Status
			}
			return r.answered(run, res, out.Output, msg, nil)
		}
		select {
		case <-ctx.Done():
			res.ExitStatus = -1
			return res, ctx.Err()
		case <-tick.C:
		}
	}
}

// answered logs the agent's answer and says how the run ended.
func (r *Runtime) answered(run domain.Run, res domain.RunResult, text, failed string, err error) (domain.RunResult, error) {
	if text != "" && run.Log != nil {
		run.Log(domain.LogEntry{Kind: domain.LogAssistant, Text: text})
	}
	switch {
	case err != nil:
		res.ExitStatus = 1
		return res, err
	case failed != "":
		res.ExitStatus = 1
		return res, errors.New("helix session " + res.Session + ": " + failed)
	}
	return res, nil
}

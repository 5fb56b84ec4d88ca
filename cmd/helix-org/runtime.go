package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/helix"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/store"
)

// runtimes wires the runtime table to this server: its settings, the
// org chart (for roles), Docker, when there is one, and the host
// agents' sandbox as checkSandbox found it.
func runtimes(st *store.Store, dh *dockerHost, hx *helix.Host, sandbox func() agent.SandboxCheck, log *slog.Logger) agent.Selector {
	return agent.Selector{Env: agent.RuntimeEnv{Settings: st, Container: dh.container(), Helix: hx.New, Cluster: clusterRuntime(st, log), Sandbox: sandbox, Logger: log, Sessions: st,
		RoleOf: func(ctx context.Context, worker string) (domain.Role, error) { return roleOf(ctx, st, worker) }}}
}

// helixHost is the helix runtime of this server.
func helixHost(st *store.Store) *helix.Host {
	return &helix.Host{Store: st, Settings: st, AllowPrivate: allowPrivate(st),
		RoleOf: func(ctx context.Context, worker string) (domain.Role, error) { return roleOf(ctx, st, worker) }}
}

// allowPrivate is safedial's transport.webhook.allow_private, read per request.
func allowPrivate(st *store.Store) func(context.Context) bool {
	return func(ctx context.Context) bool { return st.BoolSetting(ctx, safedial.AllowPrivateSetting) }
}

// checkSandbox finds out once, at start, whether host agents can run in
// bubblewrap, and says what that means for AI workers on the host
// runtimes under the current agent.sandbox (read again on every run).
//
// The check runs once the server has started (warm: a bubblewrap sandbox
// takes tens of milliseconds to start and stop); its line is logged when
// it is done.
func checkSandbox(ctx context.Context, st *store.Store, after <-chan struct{}, log *slog.Logger) func() agent.SandboxCheck {
	mode, _ := st.SettingOr(ctx, agent.SandboxSetting)
	return agent.CheckSandboxLater(ctx, after, "", func(check agent.SandboxCheck) { logSandbox(log, mode == agent.SandboxOff, check) })
}

func logSandbox(log *slog.Logger, off bool, check agent.SandboxCheck) {
	switch {
	case off:
		log.Warn("agent.sandbox is off: host agents (claude, codex, gemini, opencode, command, builtin) run unsandboxed as the server's user, " +
			"able to read the database, its key file, every worker's directory and other runs' tokens")
	case check.Err != nil:
		log.Error("host agents cannot be sandboxed: AI workers on the claude, command and builtin runtimes will not run "+
			"(use agent.runtime docker, install bubblewrap and allow user namespaces, or `helix-org config set agent.sandbox off` to run them unsandboxed)", "err", check.Err)
	default:
		log.Info("host agents run in a bubblewrap sandbox", "bwrap", check.Bwrap)
	}
}

// reapOrphans is the dispatcher's Reap: it stops the host agents of runs
// a crash cut off. Their containers go in reapContainers.
func reapOrphans(log *slog.Logger) func(context.Context, []domain.Activation) error {
	return func(ctx context.Context, orphans []domain.Activation) error {
		kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		n, err := agent.StopOrphans(kctx, orphans)
		if n > 0 {
			log.Info("stopped agents a crash left running", "count", n)
		}
		return err
	}
}

// reapContainers removes, on a database of its own, this instance's
// leftover activation containers, before the dispatcher runs: it waits
// for Docker's answer, which the first request need not. The runs of
// those containers were recovered (their tokens revoked) already.
func reapContainers(ctx context.Context, st *store.Store, dh *dockerHost, log *slog.Logger) {
	if st.Shared() {
		// Containers left over cannot be told from those other servers
		// on this Docker host run now.
		return
	}
	if err := dh.reapActivations(ctx); err != nil {
		log.Error("stop agents a crash left running", "err", err)
	}
}

// killAgent stops the host process of one activation whose server is
// gone (its lease lapsed), waiting up to 10s for it to die.
func killAgent(ctx context.Context, a domain.Activation) error {
	kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := agent.StopOrphans(kctx, []domain.Activation{a})
	return err
}

// roleOf is the role a worker holds, through its position.
func roleOf(ctx context.Context, st *store.Store, worker string) (domain.Role, error) {
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

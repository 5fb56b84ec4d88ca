package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// runtimes wires the runtime table to this server: its settings, the
// org chart (for roles) and Docker, when there is one.
func runtimes(st *store.Store, dh *dockerHost) agent.Selector {
	return agent.Selector{Env: agent.RuntimeEnv{Settings: st, Container: dh.container(),
		RoleOf: func(ctx context.Context, worker string) (domain.Role, error) { return roleOf(ctx, st, worker) }}}
}

// reapOrphans is the dispatcher's Reap: it stops the host agents of runs
// a crash cut off, then, on a database of its own, this instance's
// leftover activation containers.
func reapOrphans(st *store.Store, dh *dockerHost, log *slog.Logger) func(context.Context, []domain.Activation) error {
	return func(ctx context.Context, orphans []domain.Activation) error {
		kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		n, err := agent.StopOrphans(kctx, orphans)
		if n > 0 {
			log.Info("stopped agents a crash left running", "count", n)
		}
		if st.Shared() {
			// Containers left over cannot be told from those other
			// servers on this Docker host run now.
			return err
		}
		return errors.Join(err, dh.reapActivations(ctx))
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

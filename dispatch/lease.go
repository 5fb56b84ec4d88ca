package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// lease is dispatch.lease, never below a tick's worth.
func (d *Dispatcher) lease(ctx context.Context) time.Duration {
	return max(d.st.DurationSetting(ctx, LeaseSetting), 10*time.Millisecond)
}

// track registers a run in flight and holds its lease while its agent
// (proc, once started) lives. The returned context ends when the run is
// cancelled or reaped elsewhere; stop ends the tracking once the run has
// returned.
func (d *Dispatcher) track(id string, proc *atomic.Pointer[domain.AgentProcess]) (context.Context, func()) {
	ctx, cancel := context.WithCancel(d.runCtx)
	d.mu.Lock()
	d.runs[id] = cancel
	d.mu.Unlock()
	held := make(chan struct{})
	go func() { defer close(held); d.holdLease(ctx, id, proc, cancel) }()
	return ctx, func() {
		d.mu.Lock()
		delete(d.runs, id)
		d.mu.Unlock()
		cancel()
		<-held
	}
}

// holdLease renews a run's lease every third of a lease period while its
// agent process is alive (not while its model talks: a dead process whose
// run hangs lets the lease lapse). A lease that can no longer be renewed
// means the activation ended elsewhere, so the run is stopped.
func (d *Dispatcher) holdLease(ctx context.Context, id string, proc *atomic.Pointer[domain.AgentProcess], stop context.CancelFunc) {
	lease := d.lease(ctx)
	t := time.NewTicker(lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if d.agentGone(id, proc.Load()) {
			continue // let the lease lapse
		}
		running, err := d.st.RenewLease(context.WithoutCancel(ctx), id, lease)
		switch {
		case err != nil:
			d.log.Error("renew lease", "activation", id, "err", err)
		case !running:
			d.log.Info("activation ended elsewhere: stopping its agent", "activation", id)
			stop()
			return
		}
	}
}

// agentGone reports whether a run's agent process is known to have died:
// only then may a run in flight here lose its lease. Before its agent
// starts, or with no process group to look at, the run is taken as alive.
func (d *Dispatcher) agentGone(id string, p *domain.AgentProcess) bool {
	return p != nil && p.PGID > 0 && d.opts.Alive != nil && !d.opts.Alive(id, *p)
}

// stopEnded stops the runs in flight whose activation ended elsewhere —
// cancelled by an operator or a manager, possibly from another process —
// so their agents do not go on acting.
func (d *Dispatcher) stopEnded(ctx context.Context) {
	d.mu.Lock()
	ids := make([]string, 0, len(d.runs))
	for id := range d.runs {
		ids = append(ids, id)
	}
	d.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	ended, err := d.st.StoppedActivations(ctx, ids)
	if err != nil {
		d.log.Error("check runs in flight", "err", err)
		return
	}
	for _, id := range ended {
		d.stopRun(id)
	}
}

// stopRun cancels the run of activation id, if it is in flight here.
func (d *Dispatcher) stopRun(id string) bool {
	d.mu.Lock()
	cancel, ok := d.runs[id]
	d.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

// ReapLapsed fails the running activations whose lease lapsed — their
// server died, or their agent did and its run hung — and hands their
// triggers back to pending. An agent still running for one (an orphan of
// a dead server) is stopped first.
func (d *Dispatcher) ReapLapsed(ctx context.Context) error {
	lapsed, err := d.st.LapsedActivations(ctx)
	if err != nil || len(lapsed) == 0 {
		return err
	}
	var errs []error
	for _, a := range lapsed {
		reason := "lease lapsed"
		if a.Process != nil && d.opts.Alive != nil && !d.opts.Alive(a.ID, *a.Process) {
			reason = "agent process died"
		}
		d.mu.Lock()
		_, here := d.runs[a.ID]
		d.mu.Unlock()
		if here && !d.agentGone(a.ID, a.Process) {
			// Its renewal was late (a stalled or overloaded machine), not its
			// agent dead: take the lease back rather than kill live work and
			// run its triggers twice. Only if still lapsed, so a server that
			// adopted it meanwhile keeps it.
			if ok, err := d.st.TakeLapsedLease(ctx, a.ID, d.lease(ctx)); err != nil {
				errs = append(errs, err)
			} else if ok {
				d.log.Warn("lease lapsed while its agent runs here: renewal was late; lease taken back", "activation", a.ID, "worker", a.WorkerID)
			}
			continue
		}
		if !here && d.opts.Adopts != nil && d.opts.Adopts(ctx, a) {
			d.adopt(ctx, a, true) // its server died; its agent did not
			continue
		}
		// An orphan's agent is gone before its triggers can run again; one
		// of ours is stopped after the end is recorded, so that its run's
		// own finish is the no-op and not the other way round (the worker
		// stays reserved until that run returns).
		if !here && d.opts.Kill != nil && a.Process != nil {
			if err := d.opts.Kill(ctx, a); err != nil {
				errs = append(errs, err)
			}
		}
		entry := domain.LogEntry{Kind: domain.LogExit, Text: fmt.Sprintf("failed: %s; its trigger(s) run again", reason)}
		_, err := d.st.EndActivation(ctx, a.ID, store.Ending{Status: domain.ActivationFailed, Error: reason}, logEvent(a.WorkerID, a.ID, entry))
		if err != nil && !errors.Is(err, domain.ErrConflict) { // a conflict: it ended meanwhile
			errs = append(errs, err)
			continue
		}
		d.stopRun(a.ID)
		d.log.Warn("reaped an activation", "activation", a.ID, "worker", a.WorkerID, "reason", reason)
	}
	return errors.Join(errs...)
}

// adopt takes over a run whose server is gone and whose agent is not
// (Options.Adopts): its lease — only if lapsed, when lapsedOnly, so that
// of two servers one adopts — its worker's slot, and the run, which the
// runtime carries on with the same activation id.
func (d *Dispatcher) adopt(ctx context.Context, a domain.Activation, lapsedOnly bool) {
	lease := d.lease(ctx)
	take := d.st.RenewLease
	if lapsedOnly {
		take = d.st.TakeLapsedLease
	}
	if ok, err := take(ctx, a.ID, lease); err != nil || !ok {
		if err != nil {
			d.log.Error("adopt activation", "activation", a.ID, "err", err)
		}
		return
	}
	trigs, err := d.st.ActivationTriggers(ctx, a.ID)
	if err != nil {
		d.log.Error("adopt activation", "activation", a.ID, "err", err)
		return
	}
	d.mu.Lock()
	if d.stopping || d.running[a.WorkerID] {
		d.mu.Unlock()
		return
	}
	d.running[a.WorkerID] = true
	d.wg.Add(1)
	d.mu.Unlock()
	d.log.Info("adopted an activation whose agent outlived its server", "activation", a.ID, "worker", a.WorkerID)
	go func() {
		defer d.release(a.WorkerID)
		d.carryOut(a, trigs, "", a.Process)
	}()
}

package dispatch

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// Options configure a Dispatcher. Limits that operators tune live in
// config (see Settings) and are read on every step, so they apply without
// a restart.
type Options struct {
	// EnvsDir holds one environment directory per worker.
	EnvsDir string
	// MCPBaseURL is how an agent reaches the server, e.g.
	// http://127.0.0.1:8080: its MCP endpoint and the model relay.
	MCPBaseURL string
	// Tick is how often the loop re-checks without a new event (retries
	// coming due, changes made by another process). Default 1s.
	Tick   time.Duration
	Logger *slog.Logger
	// Reap stops what a crashed predecessor left running: the agents of
	// the activations still recorded as running (each with the host
	// process it started, if any) and any container of this instance.
	// Recover calls it before those activations' triggers can run again.
	Reap func(ctx context.Context, orphans []domain.Activation) error
	// Observer, if set, hears of every start and end (the server's metrics).
	Observer Observer
	// Alive tells whether an activation's agent process is still alive;
	// while it is not, its lease is not renewed. Nil: alive while its run
	// has not returned.
	Alive func(activation string, p domain.AgentProcess) bool
	// Kill stops the host process of an activation that no run here
	// holds (its server died), before its triggers run again.
	Kill func(ctx context.Context, a domain.Activation) error
	// Adopts says a run that a crash cut off goes on outside any server
	// (a Kubernetes Job): rather than stopped and started again, it is
	// adopted — its lease taken, and the runtime run again with the same
	// activation, which finds its agent again by the activation id.
	Adopts func(ctx context.Context, a domain.Activation) bool
}

// Dispatcher wakes AI workers for their pending triggers: at most one
// activation per worker, at most max_concurrent overall.
type Dispatcher struct {
	st      *store.Store
	runtime domain.Runtime
	opts    Options
	log     *slog.Logger

	// looping is true while Run runs, for /readyz.
	looping atomic.Bool

	mu       sync.Mutex
	running  map[string]bool
	stopping bool
	// runs cancels the runs in flight by activation id, to stop one that
	// was cancelled or reaped elsewhere (lease.go).
	runs map[string]context.CancelFunc
	wg   sync.WaitGroup

	// runCtx outlives the loop's context so running activations can finish
	// after SIGTERM; Shutdown cancels it at its deadline.
	runCtx    context.Context
	cancelRun context.CancelFunc

	programs programs
}

// New builds a Dispatcher.
func New(st *store.Store, runtime domain.Runtime, opts Options) *Dispatcher {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Tick <= 0 {
		opts.Tick = time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Dispatcher{st: st, runtime: runtime, opts: opts, log: opts.Logger.With("component", "dispatch"),
		running: map[string]bool{}, runs: map[string]context.CancelFunc{}, runCtx: ctx, cancelRun: cancel}
}

// Recover stops the agents a crash left running and hands the triggers
// of their runs back to pending. Call it once at start-up, before Run:
// the old agent is gone before its triggers run again. On a database
// other servers share it leaves the runs whose lease is live alone (they
// may be theirs); those of a crashed server lapse within a lease and
// ReapLapsed, on whichever server ticks first, takes them over.
func (d *Dispatcher) Recover(ctx context.Context) error {
	orphans, err := d.st.OrphanedActivations(ctx)
	if err != nil {
		return err
	}
	var adopt []domain.Activation
	var keep, interrupt []string
	orphans = slices.DeleteFunc(orphans, func(a domain.Activation) bool {
		if d.opts.Adopts != nil && d.opts.Adopts(ctx, a) {
			adopt, keep = append(adopt, a), append(keep, a.ID)
			return true
		}
		interrupt = append(interrupt, a.ID)
		return false
	})
	if d.opts.Reap != nil {
		// A survivor cannot act on the org either way: its token is
		// revoked below.
		if err := d.opts.Reap(ctx, orphans); err != nil {
			d.log.Error("stop agents a crash left running", "err", err)
		}
	}
	n, err := d.st.RecoverActivations(ctx, interrupt, keep)
	if n > 0 {
		d.log.Info("recovered interrupted activations", "count", n)
	}
	for _, a := range adopt {
		d.adopt(ctx, a, d.st.Shared())
	}
	return err
}

// Run steps whenever the store changes (or on each tick) until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.looping.Store(true)
	defer d.looping.Store(false)
	t := time.NewTicker(d.opts.Tick)
	defer t.Stop()
	for {
		changed := d.st.Changed()
		d.stopEnded(ctx)
		if err := d.Step(ctx); err != nil && ctx.Err() == nil {
			d.log.Error("dispatch step", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-t.C:
			if err := d.ReapLapsed(ctx); err != nil && ctx.Err() == nil {
				d.log.Error("reap activations whose lease lapsed", "err", err)
			}
		}
	}
}

// Running reports whether Run is running and not shutting down.
func (d *Dispatcher) Running() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.looping.Load() && !d.stopping
}

// Step runs the processors over the events waiting for them
// (processors.go), then starts an activation for every worker with
// pending triggers that is not already running, within the concurrency
// cap. It returns once the activations have started.
func (d *Dispatcher) Step(ctx context.Context) error {
	// A processor the database failed wakes no one less: what already
	// waits is started anyway.
	perr := d.runProcessors(ctx)
	workers, err := d.st.WorkersWithPending(ctx)
	if err != nil || len(workers) == 0 {
		return errors.Join(perr, err) // the common case: every store change wakes a step
	}
	max := int(d.st.IntSetting(ctx, MaxConcurrentSetting))
	for _, w := range workers {
		if d.reserve(w, max) {
			go d.activate(w)
		}
	}
	return perr
}

// reserve marks w running if it is idle and a slot is free.
func (d *Dispatcher) reserve(w string, max int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopping || d.running[w] || (max > 0 && len(d.running) >= max) {
		return false
	}
	d.running[w] = true
	d.wg.Add(1)
	return true
}

func (d *Dispatcher) release(w string) {
	d.mu.Lock()
	delete(d.running, w)
	d.mu.Unlock()
	d.wg.Done()
}

// Shutdown stops new activations and waits for running ones until ctx
// ends; then it cancels them, and their triggers stay pending for the next start.
func (d *Dispatcher) Shutdown(ctx context.Context) error {
	d.mu.Lock()
	d.stopping = true
	d.mu.Unlock()
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		d.cancelRun()
		<-done
		return fmt.Errorf("activations still running at shutdown deadline were interrupted: %w", ctx.Err())
	}
}

// Wait blocks until no activation is running (for tests and benchmarks).
func (d *Dispatcher) Wait() { d.wg.Wait() }

func (d *Dispatcher) activate(w string) {
	defer d.release(w)
	if d.parkTooDeep(d.runCtx, w) {
		return
	}
	act, trigs, tok, err := d.claim(w)
	if err != nil {
		return
	}
	d.carryOut(act, trigs, tok, nil)
}

// carryOut runs a claimed activation to its end and records it. running,
// when set, is its agent, already started (an adopted run).
func (d *Dispatcher) carryOut(act domain.Activation, trigs []domain.Trigger, tok string, running *domain.AgentProcess) {
	var proc atomic.Pointer[domain.AgentProcess]
	proc.Store(running)
	ctx, stop := d.track(act.ID, &proc)
	defer stop()
	begin := time.Now()
	hint := &failureHint{}
	res, runErr := d.run(ctx, act, trigs, tok, d.st.DurationSetting(ctx, TimeoutSetting), hint, func(p domain.AgentProcess) {
		if proc.CompareAndSwap(nil, &p) {
			d.started(act, len(trigs), p)
		}
	}, func() {
		if p := proc.Load(); p != nil {
			proc.Store(&domain.AgentProcess{Runtime: p.Runtime})
		}
	})
	// Record the end even while shutting down: use a fresh context.
	endCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch {
	case d.runCtx.Err() == nil && proc.Load() == nil:
		if runErr == nil {
			runErr = errors.New("the runtime returned without starting the agent")
		}
		act.Status, act.Error = domain.ActivationFailed, notStarted.status+": "+runErr.Error()
		d.ended(act, len(trigs), res.Runtime, false, time.Since(begin))
		d.requeue(endCtx, act, trigs, notStarted, runErr)
		return
	case d.runCtx.Err() == nil && ctx.Err() == nil && (res.Killed || runErr == nil && res.ExitStatus < 0):
		// Killed by a signal nobody here sent (a process's exit status is
		// then -1; through a shell or bwrap that did not exec it, 137 or
		// 143, which the runtime reports as Killed): the work may be half
		// done, so the triggers run again, as after a failed start.
		act.Status, act.Error = domain.ActivationFailed, agentDied.status+": killed by a signal"
		d.ended(act, len(trigs), res.Runtime, true, time.Since(begin))
		d.requeue(endCtx, act, trigs, agentDied, errors.New("killed by a signal"))
		return
	}
	d.finish(endCtx, act, len(trigs), res, runErr, hint, time.Since(begin))
}

// claim starts an activation of w over its pending triggers and takes
// its lease. ErrNotFound (nothing to run, or w runs already — perhaps on
// another server) is not logged.
func (d *Dispatcher) claim(w string) (domain.Activation, []domain.Trigger, string, error) {
	ctx := d.runCtx
	id := domain.PrefixActivation + domain.RandomSlug(12)
	timeout := d.st.DurationSetting(ctx, TimeoutSetting)
	act, trigs, tok, err := d.st.ClaimLeased(ctx, w, id, timeout+time.Minute, d.lease(ctx))
	if err != nil {
		if !errors.Is(err, domain.ErrNotFound) {
			d.log.Error("claim", "worker", w, "err", err)
		}
		return act, nil, "", err
	}
	return act, trigs, tok, nil
}

// finish records how a run that reached its agent ended.
func (d *Dispatcher) finish(ctx context.Context, act domain.Activation, n int, res domain.RunResult, runErr error, hint *failureHint, took time.Duration) {
	act.Status = domain.ActivationSucceeded
	act.ExitStatus = &res.ExitStatus
	act.InputTokens, act.OutputTokens = res.InputTokens, res.OutputTokens
	switch {
	case d.runCtx.Err() != nil:
		act.Status, act.Error = domain.ActivationInterrupted, "interrupted by shutdown"
	case runErr != nil:
		act.Status, act.Error = domain.ActivationFailed, runErr.Error()
	case res.ExitStatus != 0:
		act.Status, act.Error = domain.ActivationFailed, exitError(res.ExitStatus, hint.String())
	}
	// A run the relay stopped for its budget failed for that reason,
	// however its agent took the refusal.
	if stop, err := d.st.BudgetStop(ctx, act.ID); err == nil && stop != "" && act.Status != domain.ActivationInterrupted {
		act.Status, act.Error = domain.ActivationFailed, stop
	}
	// Reported before it is recorded: whoever sees the run end in the
	// store sees it in the metrics too.
	d.ended(act, n, res.Runtime, true, took)
	text := exitText(act) + sessionText(res)
	// The record of a run says what it read that counts: its final label,
	// naming the first item that raised it.
	if label, err := d.st.ActivationLabel(ctx, act.ID); err == nil && !label.IsZero() {
		text += "\nlabel: " + label.String()
	}
	if err := d.st.FinishActivation(ctx, act, logEvent(act.WorkerID, act.ID, domain.LogEntry{Kind: domain.LogExit, Text: text})); err != nil {
		d.log.Error("finish activation", "activation", act.ID, "err", err)
	}
}

// sessionText names the agent CLI's session on the run's record, and
// whether the run continued it (preserve_context).
func sessionText(res domain.RunResult) string {
	switch {
	case res.Session == "":
		return ""
	case res.Continued:
		return "\nsession: " + res.Session + " (continued)"
	}
	return "\nsession: " + res.Session + " (new)"
}

func exitText(a domain.Activation) string {
	if a.Error != "" {
		return fmt.Sprintf("%s: %s", a.Status, a.Error)
	}
	return string(a.Status)
}

// started records that the agent runs — its process, for a restart after
// a crash to stop — and logs the start. The runtime waits for it, so the
// process is on record before the agent gets its prompt.
func (d *Dispatcher) started(act domain.Activation, n int, p domain.AgentProcess) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	entry := domain.LogEntry{Kind: domain.LogStart, Text: fmt.Sprintf("activation %s started with %d trigger(s)", act.ID, n)}
	if err := d.st.StartActivation(ctx, act.ID, p, logEvent(act.WorkerID, act.ID, entry)); err != nil {
		d.log.Error("record activation start", "activation", act.ID, "err", err)
	}
	d.log.Info("activation started", "worker", act.WorkerID, "activation", act.ID, "triggers", n, "runtime", p.Runtime)
	if d.opts.Observer != nil {
		d.opts.Observer.ActivationStarted()
	}
}

// run prepares the environment and hands the activation to the runtime,
// which calls onStart once the agent runs; an error before then means the
// agent never started.
func (d *Dispatcher) run(ctx context.Context, act domain.Activation, trigs []domain.Trigger, tok string, timeout time.Duration, hint *failureHint, onStart func(domain.AgentProcess), agentEnded func()) (domain.RunResult, error) {
	w, err := d.st.GetWorker(ctx, act.WorkerID)
	if err != nil {
		return domain.RunResult{}, err
	}
	dir, err := d.project(ctx, w)
	if err != nil {
		return domain.RunResult{}, err
	}
	// Messages sent to an earlier run that it never read join the prompt.
	said, err := d.st.TakeSteering(ctx, w.ID, act.ID)
	if err != nil {
		return domain.RunResult{}, err
	}
	names := &toolNames{}
	run := domain.Run{ActivationID: act.ID, WorkerID: w.ID, EnvDir: dir, BaseURL: d.opts.MCPBaseURL, MCPURL: domain.MCPURL(d.opts.MCPBaseURL, w.ID), Token: tok,
		Prompt: RenderPrompt(w, act, trigs, d.recallFor(ctx, w, act, trigs)) + SteeringPrompt(said), Timeout: timeout,
		Log: func(e domain.LogEntry) {
			e = names.name(e)
			hint.note(e)
			d.appendLog(context.Background(), w.ID, act.ID, e)
		}, OnStart: onStart,
		Steer: func(ctx context.Context) ([]domain.SteerMessage, error) { return d.st.TakeSteering(ctx, w.ID, act.ID) }}
	ws, err := d.prepareWorkspace(ctx, w, dir, run.Log)
	if err != nil {
		return domain.RunResult{}, err
	}
	if err := d.workspaceLabel(ctx, ws, act.ID, run.Log); err != nil {
		return domain.RunResult{}, err
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := d.runtime.Run(runCtx, run)
	// The agent has exited: the lease is held for the server's own work
	// on the workspace now, not for a process that is alive.
	agentEnded()
	d.commitWorkspace(context.WithoutCancel(ctx), w, ws, act.ID, run.Log)
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		return res, fmt.Errorf("timed out after %s and was killed", timeout)
	}
	return res, err
}

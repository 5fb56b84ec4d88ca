package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/helixml/helix-org/domain"
)

type fleetPage struct {
	Running []fleetCard
	Idle    []fleetCard
	Err     string
	Pager   pager
}

// fleetCard is one AI worker's current run, as far as its log tells.
type fleetCard struct {
	Worker     domain.Worker
	Status     string
	Why        string // what a waiting worker waits for
	Activation *domain.Activation
	// Elapsed is how long the run has gone, as of the page's render; the
	// page script keeps it ticking.
	Elapsed string
	WokenBy []domain.Trigger
	// Tool is the tool the run is calling now, or called last when
	// Calling is false; Args is what it was called with.
	Tool    string
	Args    string
	Calling bool
	// Task is the spec task the run is on, with the items before and
	// after it; nil until spec tasks exist (see taskOf).
	Task *taskView
	// LogErr is why the viewer may not see this worker's runs.
	LogErr string
}

// taskView is the spec task item a run is on and its neighbours, so the
// fleet shows where in its list a run is.
type taskView struct {
	Task    string
	Title   string
	Before  []string
	Current string
	After   []string
}

// taskOf returns the spec task item the activation's worker is on: a
// builder works one item at a time, so the worker names it.
func (u *UI) taskOf(ctx context.Context, act domain.Activation) (*taskView, error) {
	view, f, ok, err := u.st.WorkerItem(ctx, act.WorkerID)
	if err != nil || !ok {
		return nil, err
	}
	title := func(seq int) string {
		for _, it := range view.Items {
			if it.Seq == seq {
				return fmt.Sprintf("%d. %s", it.Seq, it.Title)
			}
		}
		return ""
	}
	tv := &taskView{Task: view.Task.ID, Title: view.Task.Title, Current: fmt.Sprintf("%s (%s)", title(f.Item), f.Elapsed)}
	if f.Before > 0 {
		tv.Before = []string{title(f.Before)}
	}
	if f.After > 0 {
		tv.After = []string{title(f.After)}
	}
	return tv, nil
}

// handleFleet shows every AI worker the viewer may watch, running ones
// first with what woke them, how long they have run and the tool they are
// calling; the page refreshes live as runs move.
func (u *UI) handleFleet(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	live := u.liveURL(ctx, "view", "fleet")
	p := fleetPage{}
	ais, err := invoke[struct{ Workers []domain.Worker }](ctx, v, "list_workers", map[string]any{"kind": domain.WorkerAI})
	if err == nil {
		err = needs(v, "worker_log")
	}
	if err != nil {
		p.Err = err.Error()
		u.render(w, r, http.StatusOK, "fleet", pageData{Title: "Fleet", Nav: "fleet", V: v, Body: p})
		return
	}
	running, err := u.st.RunningActivations(ctx)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	states, err := u.workerStatus(ctx, v)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	runs := map[string]domain.Activation{}
	for _, a := range running {
		runs[a.WorkerID] = a
	}
	page, next := pageAfter(ais.Workers, func(w domain.Worker) string { return w.ID }, r.URL.Query().Get("after"), limitOf(r))
	p.Pager = newPager(r, "after", next)
	for _, wk := range page {
		c, err := u.fleetCard(ctx, v, wk, runs, states)
		if err != nil {
			u.fail(w, r, v, err)
			return
		}
		if c.Activation != nil {
			p.Running = append(p.Running, c)
		} else {
			p.Idle = append(p.Idle, c)
		}
	}
	u.render(w, r, http.StatusOK, "fleet", pageData{Title: "Fleet", Nav: "fleet", V: v, Live: live, Body: p})
}

// fleetCard reads what a running worker's log tells. Only a run's details
// need worker_log's own check for that worker; idle or running, as on the
// org chart, takes the worker_log grant alone.
func (u *UI) fleetCard(ctx context.Context, v *viewer, wk domain.Worker, runs map[string]domain.Activation, states map[string]workerState) (fleetCard, error) {
	c := fleetCard{Worker: wk, Status: statusIdle}
	if s, ok := states[wk.ID]; ok {
		c.Status, c.Why = s.Status, s.Why
	}
	act, ok := runs[wk.ID]
	if !ok {
		if c.Status == statusRunning { // it ended between the two reads
			c.Status = statusIdle
		}
		return c, nil
	}
	if err := probeLog(ctx, v, wk.ID); err != nil {
		c.LogErr, c.Status, c.Why = err.Error(), "", ""
		return c, nil
	}
	task, err := u.taskOf(ctx, act)
	if err != nil {
		return c, err
	}
	c.Status, c.Activation, c.Task = statusRunning, &act, task
	c.Elapsed = "running " + u.st.Now().Sub(act.StartedAt).Round(time.Second).String()
	trigs, err := u.st.ActivationTriggers(ctx, act.ID)
	if err != nil {
		return c, err
	}
	c.WokenBy = trigs
	step, ok, err := u.st.LatestLogEntry(ctx, wk.ID, act.ID, domain.LogToolCall, domain.LogToolResult)
	if err != nil || !ok {
		return c, err
	}
	var extra struct{ Tool string }
	json.Unmarshal(step.Message.Extra, &extra)
	c.Tool, c.Calling = extra.Tool, step.Message.Subject == string(domain.LogToolCall)
	if c.Calling {
		c.Args = step.Message.Body
	}
	return c, nil
}

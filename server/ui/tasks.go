package ui

import (
	"fmt"
	"net/http"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type tasksPage struct {
	Tasks []taskRow
	Err   string
	// The people the new-task form offers: AI workers to plan and build,
	// people to review. Empty when the viewer may not list workers; the
	// form then takes ids.
	AI, Humans []domain.Worker
	PRModes    []domain.PullRequestMode
	// Picked are the builders ticked in a form the tool just refused.
	Picked map[string]bool
}

// taskRow is a task in the list, with its items done as a meter.
type taskRow struct {
	store.SpecTaskSummary
	Progress meter
}

// handleTasks lists the spec tasks, highest priority first, with the
// form that starts one; the list updates live as tasks and items move.
func (u *UI) handleTasks(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	live := u.liveURL(ctx, "view", "tasks")
	p := tasksPage{PRModes: domain.PullRequestModes, Picked: map[string]bool{}}
	if f := flashFrom(ctx); f != nil && f.Tool == "create_spec_task" {
		for _, b := range f.Form["builders[]"] {
			p.Picked[b] = true
		}
	}
	got, err := invoke[struct{ Tasks []store.SpecTaskSummary }](ctx, v, "list_spec_tasks", nil)
	if err != nil && u.cfg.Status(err) >= 500 {
		u.fail(w, r, v, err)
		return
	}
	if err != nil {
		p.Err, live = err.Error(), ""
	}
	for _, t := range got.Tasks {
		p.Tasks = append(p.Tasks, taskRow{SpecTaskSummary: t,
			Progress: newMeter(float64(t.Done), float64(t.Items), 0, "progress", fmt.Sprintf("%d of %d items done", t.Done, t.Items))})
	}
	if v.Can("create_spec_task") {
		if all, err := invoke[struct{ Workers []domain.Worker }](ctx, v, "list_workers", nil); err == nil {
			for _, wk := range all.Workers {
				if wk.Kind == domain.WorkerAI {
					p.AI = append(p.AI, wk)
				} else {
					p.Humans = append(p.Humans, wk)
				}
			}
		}
	}
	u.render(w, r, http.StatusOK, "tasks", pageData{Title: "Tasks", Nav: "tasks", V: v, Live: live, Body: p})
}

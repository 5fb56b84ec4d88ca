package ui

import (
	"context"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// taskView reloads a task's page on every event of its stream: its
// transitions, its items' moves, reviews from a forge. Whether an event
// came is all it uses, so get_spec_task — which shows the task whole —
// is the check, as for the page itself.
func (u *UI) taskView(v *viewer, id string) *liveView {
	stream := domain.TaskStream(id)
	return &liveView{streams: []string{stream}, match: onStreams(stream), check: func(ctx context.Context) error {
		_, err := invoke[struct{}](ctx, v, "get_spec_task", map[string]any{"task": id})
		return err
	}}
}

// tasksView reloads the list of tasks when a task starts or moves (on
// s-org, for a viewer who may read it) or one of its items moves (on the
// tasks' own streams), tasks begun after the view opened too.
func (u *UI) tasksView(ctx context.Context, v *viewer) (*liveView, error) {
	if err := needs(v, "list_spec_tasks"); err != nil {
		return nil, err
	}
	got, err := invoke[struct{ Tasks []store.SpecTaskSummary }](ctx, v, "list_spec_tasks", nil)
	if err != nil {
		return nil, err
	}
	// readable holds the tasks' streams the viewer may watch: those
	// listed now, and later ones once get_spec_task lets the viewer see
	// the task.
	readable := map[string]bool{}
	var streams []string
	for _, t := range got.Tasks {
		streams = append(streams, domain.TaskStream(t.ID))
		readable[domain.TaskStream(t.ID)] = true
	}
	org := probeStream(ctx, v, domain.StreamOrg) == nil
	if org {
		streams = append(streams, domain.StreamOrg)
	}
	match := func(ev domain.Event) bool {
		if ev.StreamID == domain.StreamOrg {
			return org && strings.HasPrefix(changeOf(ev).Action, "spec_task_")
		}
		kind, _ := domain.StreamKindOf(ev.StreamID)
		return kind == domain.StreamTask
	}
	admit := func(ctx context.Context, ev domain.Event) bool {
		if ev.StreamID == domain.StreamOrg {
			return true
		}
		ok, asked := readable[ev.StreamID]
		if !asked {
			task := domain.PrefixTask + strings.TrimPrefix(ev.StreamID, domain.TaskStream(""))
			_, err := invoke[struct{}](ctx, v, "get_spec_task", map[string]any{"task": task})
			ok = err == nil
			readable[ev.StreamID] = ok
		}
		return ok
	}
	return &liveView{streams: streams, match: match, admit: admit, check: func(ctx context.Context) error { return needs(v, "list_spec_tasks") }}, nil
}

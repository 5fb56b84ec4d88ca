package ui

import (
	"context"
	"fmt"
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
// tasks' own streams).
func (u *UI) tasksView(ctx context.Context, v *viewer) (*liveView, error) {
	got, err := invoke[struct{ Tasks []store.SpecTaskSummary }](ctx, v, "list_spec_tasks", nil)
	if err != nil {
		return nil, err
	}
	var streams []string
	for _, t := range got.Tasks {
		streams = append(streams, domain.TaskStream(t.ID))
	}
	ofTasks := onStreams(streams...)
	org := probeStream(ctx, v, domain.StreamOrg) == nil
	if org {
		streams = append(streams, domain.StreamOrg)
	}
	if len(streams) == 0 {
		return nil, fmt.Errorf("nothing here you may watch: no spec task yet, and s-org takes read_events: %w", domain.ErrForbidden)
	}
	match := func(ev domain.Event) bool {
		if ev.StreamID == domain.StreamOrg {
			return org && strings.HasPrefix(changeOf(ev).Action, "spec_task_")
		}
		return ofTasks(ev)
	}
	return &liveView{streams: streams, match: match, check: func(ctx context.Context) error { return needs(v, "list_spec_tasks") }}, nil
}

package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// farCursor is a read cursor past any real event, for asking a read tool
// "may I read this?" without reading anything. It stays exact as a JSON
// number (2^53).
const farCursor = 1 << 53

// liveView builds the view a /ui/live request names. Every view checks
// access through a read tool, so it shows exactly what read_events or
// worker_log would show the viewer over MCP.
func (u *UI) liveView(ctx context.Context, v *viewer, r *http.Request) (*liveView, error) {
	q := r.URL.Query()
	switch q.Get("view") {
	case "stream":
		id := q.Get("stream")
		return u.streamView(v, id, func(ev domain.Event) ([]byte, error) { return u.partial("event", ev) }), nil
	case "chat":
		other := q.Get("worker")
		id := store.DMStreamID(v.Worker.ID, other)
		// The page already showed who this is; a worker not found just
		// leaves its messages under its id.
		with, err := u.st.GetWorker(ctx, other)
		if err != nil {
			with = domain.Worker{ID: other}
		}
		view := u.streamView(v, id, func(ev domain.Event) ([]byte, error) {
			return u.partial("bubble", bubble(ev, v.Worker, with))
		})
		// Before the first message the DM stream does not exist yet; the
		// viewer is one of its two members by construction, so holding
		// read_events and dm is enough to wait for it.
		view.check = func(ctx context.Context) error {
			if _, err := u.st.GetStream(ctx, id); errors.Is(err, domain.ErrNotFound) {
				return firstErr(needs(v, "read_events"), needs(v, "dm"))
			}
			return probeStream(ctx, v, id)
		}
		return view, nil
	case "log":
		worker := q.Get("worker")
		return &liveView{streams: []string{domain.ActivationStreamPrefix + worker}, match: onStreams(domain.ActivationStreamPrefix + worker),
			check:  func(ctx context.Context) error { return probeLog(ctx, v, worker) },
			render: func(ev domain.Event) ([]byte, error) { return u.partial("logline", ev) }}, nil
	case "audit":
		f := auditFilterOf(q)
		view := u.streamView(v, domain.StreamOrg, func(ev domain.Event) ([]byte, error) { return u.partial("auditrow", auditRowOf(ev)) })
		view.match = func(ev domain.Event) bool { return ev.StreamID == domain.StreamOrg && f.matches(ev) }
		return view, nil
	case "org":
		return u.refreshView(ctx, v, true, []domain.LogKind{domain.LogStart, domain.LogExit})
	case "memory":
		// Endorsements are on s-org; a run's end may have moved scores.
		return u.refreshView(ctx, v, true, []domain.LogKind{domain.LogExit})
	case "fleet":
		return u.refreshView(ctx, v, false, []domain.LogKind{domain.LogStart, domain.LogExit, domain.LogToolCall, domain.LogToolResult})
	case "tasks":
		return u.tasksView(ctx, v)
	case "task":
		return u.taskView(v, q.Get("task")), nil
	case "money":
		// Spend is recorded with each model call. A run logs what each
		// call answered (a message or a tool call), so those, a run's end
		// and a budget set (on s-org) are when the page shows it anew;
		// the page reloads at most once a second however many come.
		return u.refreshView(ctx, v, true, []domain.LogKind{domain.LogAssistant, domain.LogToolCall, domain.LogExit})
	}
	return nil, domain.Invalid("view", "unknown live view %q (valid: stream, chat, log, audit, org, memory, fleet, tasks, task, money)", q.Get("view"))
}

// streamView shows the events of one stream the viewer may read.
func (u *UI) streamView(v *viewer, id string, render func(domain.Event) ([]byte, error)) *liveView {
	return &liveView{streams: []string{id}, match: onStreams(id), render: render,
		check: func(ctx context.Context) error { return probeStream(ctx, v, id) }}
}

// refreshView wakes a page that reloads its content: the org chart on
// changes to the org and runs starting or ending, the fleet on every step
// of a run; both on a call being held for approval or decided, which
// changes a worker's status. It watches only what the viewer may read,
// and follows workers hired after it opened too: a set of streams taken
// at connect would miss the end of a new worker's first run, and leave
// its card "running" (the run's start showed through the hire's reload).
func (u *UI) refreshView(ctx context.Context, v *viewer, org bool, kinds []domain.LogKind) (*liveView, error) {
	var streams []string
	org = org && probeStream(ctx, v, domain.StreamOrg) == nil
	if org {
		streams = append(streams, domain.StreamOrg)
	}
	logs := v.Can("worker_log")
	if logs {
		all, err := invoke[struct{ Workers []domain.Worker }](ctx, v, "list_workers", nil)
		if err != nil {
			return nil, err
		}
		// What the replay reads; later workers' streams come live.
		for _, w := range all.Workers {
			if w.Kind == domain.WorkerAI {
				streams = append(streams, domain.ActivationStreamPrefix+w.ID)
			}
			streams = append(streams, domain.InboxStream(w.ID))
		}
	}
	if !org && !logs {
		return nil, fmt.Errorf("nothing here you may watch: it takes read_events (on s-org) or worker_log: %w", domain.ErrForbidden)
	}
	match := func(ev domain.Event) bool {
		switch kind, _ := domain.StreamKindOf(ev.StreamID); {
		case ev.StreamID == domain.StreamOrg:
			return org
		case kind == domain.StreamActivations:
			return logs && slices.Contains(kinds, domain.LogKind(ev.Message.Subject))
		case kind == domain.StreamInbox:
			// Approval notices reach the approver and the requester:
			// only whether one came is used, never what it says.
			return logs && isApprovalNotice(ev)
		}
		return false
	}
	return &liveView{streams: streams, match: match, admit: u.admitLogs(v), check: func(context.Context) error { return nil }}, nil
}

// admitLogs lets through the runs of the workers whose log the viewer may
// read (worker_log's own check), asked once per worker.
func (u *UI) admitLogs(v *viewer) func(context.Context, domain.Event) bool {
	readable := map[string]bool{}
	return func(ctx context.Context, ev domain.Event) bool {
		kind, w := domain.StreamKindOf(ev.StreamID)
		if kind != domain.StreamActivations {
			return true
		}
		ok, asked := readable[w]
		if !asked {
			ok = probeLog(ctx, v, w) == nil
			readable[w] = ok
		}
		return ok
	}
}

// isApprovalNotice says whether an inbox event is an approval request or
// its outcome (kind approval_request, approval_executed, approval_denied).
func isApprovalNotice(ev domain.Event) bool {
	var extra struct{ Kind string }
	json.Unmarshal(ev.Message.Extra, &extra)
	return strings.HasPrefix(extra.Kind, "approval_")
}

func onStreams(ids ...string) func(domain.Event) bool {
	set := map[string]bool{}
	for _, id := range ids {
		set[id] = true
	}
	return func(ev domain.Event) bool { return set[ev.StreamID] }
}

// probeStream asks read_events whether the viewer may read a stream, with
// a cursor past the end so nothing is read.
func probeStream(ctx context.Context, v *viewer, id string) error {
	_, err := invoke[any](ctx, v, "read_events", map[string]any{"streams": []string{id}, "since": farCursor, "limit": 1})
	return err
}

// probeLog asks worker_log whether the viewer may read a worker's runs.
func probeLog(ctx context.Context, v *viewer, worker string) error {
	_, err := invoke[any](ctx, v, "worker_log", map[string]any{"worker": worker, "since": farCursor, "limit": 1})
	return err
}

// needs is the refusal for a tool the viewer does not hold, worded as
// the tools word it.
func needs(v *viewer, tool string) error {
	if v.Can(tool) {
		return nil
	}
	_, err := invoke[any](context.Background(), v, tool, nil)
	return err
}

// partial renders one of the shared partial templates.
func (u *UI) partial(name string, data any) ([]byte, error) {
	var buf bytes.Buffer
	err := u.pages()["error"].ExecuteTemplate(&buf, name, data)
	return buf.Bytes(), err
}

package ui

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type inboxPage struct {
	Items []inboxItem
	// Notes say which sources the viewer cannot see, and why.
	Notes []string
	Pager pager
}

// inboxItem is one thing waiting for the viewer.
type inboxItem struct {
	At time.Time
	// Kind is a slug for styling; Label says it in words.
	Kind  string
	Label string
	Title string
	Text  string
	Link  string
	// Approval, when set, is a request the viewer may decide here.
	Approval string
	// Args are a request's arguments, each in full: what approving it
	// would run, which an excerpt could cut off.
	Args []callArg
	// About is the approval request a notice is about; Request marks the
	// item that lists the request itself, whose notice is then left out.
	About   string
	Request bool
	// Undecodable is why an event's stored message could not be read.
	Undecodable string
	// Key is what dismiss_inbox takes to dismiss the item: its event or
	// run id ("" when it cannot be dismissed, as a request to decide).
	Key string
	// Outcome says how the approval a notice is about was decided, once it
	// was; OutcomeKind is its slug (approved, denied, failed, expired).
	Outcome, OutcomeKind string
	// Question, when set, is an open ask_human question to the viewer,
	// answered here; Asker is who waits for the answer.
	Question, Asker string
}

// inboxSource feeds the inbox: the viewer's items before a time, newest
// first, at most limit of them.
type inboxSource func(ctx context.Context, u *UI, v *viewer, before time.Time, limit int) ([]inboxItem, error)

// inboxSources is everything that reaches a person's inbox. Governance
// work adds approvals and budget or loop incidents here: a new source is
// one more function in this list.
var inboxSources = []inboxSource{addressedToMe, failedRunsBelowMe, myNotices, approvalsToDecide}

// handleInbox merges every source by time, newest first, paged by time.
func (u *UI) handleInbox(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	before, _ := time.Parse(time.RFC3339Nano, r.URL.Query().Get("before"))
	limit := limitOf(r)
	var p inboxPage
	var items []inboxItem
	for _, src := range inboxSources {
		got, err := src(ctx, u, v, before, limit+1)
		if err != nil {
			if u.cfg.Status(err) >= 500 {
				u.fail(w, r, v, err)
				return
			}
			p.Notes = append(p.Notes, err.Error())
		}
		items = append(items, got...)
	}
	items = withoutListedNotices(items)
	slices.SortStableFunc(items, func(a, b inboxItem) int { return b.At.Compare(a.At) })
	next := ""
	if len(items) > limit {
		items = items[:limit]
		next = items[limit-1].At.Format(time.RFC3339Nano)
	}
	p.Items, p.Pager = items, newPager(r, "before", next)
	u.render(w, r, http.StatusOK, "inbox", pageData{Title: "Inbox", Nav: "inbox", V: v, Body: p})
}

// withoutListedNotices drops the notice of an approval request that is
// listed itself (with approve and deny), so it shows once.
func withoutListedNotices(items []inboxItem) []inboxItem {
	listed := map[string]bool{}
	for _, it := range items {
		if it.Request {
			listed[it.About] = true
		}
	}
	return slices.DeleteFunc(items, func(it inboxItem) bool { return !it.Request && listed[it.About] })
}

// addressedToMe: messages on streams the viewer follows whose "to" names
// them, direct messages included — what read_events would give them.
func addressedToMe(ctx context.Context, u *UI, v *viewer, before time.Time, limit int) ([]inboxItem, error) {
	if err := needs(v, "read_events"); err != nil {
		return nil, err
	}
	streams, err := u.st.SubscribedStreams(ctx, v.Worker.ID)
	if err != nil {
		return nil, err
	}
	evs, err := u.st.EventsBefore(ctx, store.PageQuery{StreamIDs: streams, Until: before, To: v.Worker.ID, Limit: limit, Undismissed: v.Worker.ID})
	var out []inboxItem
	for _, ev := range evs {
		link := u.cfg.Root + "/ui/streams/" + ev.StreamID + "#ev-" + strconv.FormatInt(ev.Seq, 10)
		if domain.IsDM(ev.StreamID) && ev.Source != "" {
			link = u.cfg.Root + "/ui/chat/" + ev.Source
		}
		out = append(out, inboxItem{At: ev.CreatedAt, Kind: "message", Label: "message", Link: link, Key: ev.ID,
			Title: cmp.Or(ev.Message.From, ev.Source, "system") + " on " + ev.StreamID, Text: cmp.Or(ev.Message.Subject, ev.Message.Body), Undecodable: ev.Undecodable})
		markAsked(&out[len(out)-1], ev)
	}
	if err != nil {
		return out, err
	}
	return out, openQuestions(ctx, u, out)
}

// markAsked labels what ask_human sent: a question (its text shown whole,
// for it is what is asked) or a notice.
func markAsked(it *inboxItem, ev domain.Event) {
	var ask store.AskExtra
	if json.Unmarshal(ev.Message.Extra, &ask) != nil || ev.Source == "" {
		return
	}
	switch ask.Ask {
	case "question":
		it.Kind, it.Label, it.Text, it.Question, it.Asker = "question", "answered", ev.Message.Body, ev.ID, ev.Source
	case "notice":
		it.Kind, it.Label, it.Text = "notice", "notice", ev.Message.Body
	}
}

// openQuestions keeps the answer box on the questions still waiting, and
// labels them open; the rest show as answered.
func openQuestions(ctx context.Context, u *UI, items []inboxItem) error {
	var ids []string
	for _, it := range items {
		if it.Question != "" {
			ids = append(ids, it.Question)
		}
	}
	open, err := u.st.OpenQuestions(ctx, ids)
	for i := range items {
		if id := items[i].Question; id != "" && open[id] {
			items[i].Label = "open question"
		} else {
			items[i].Question = ""
		}
	}
	return err
}

// myNotices: what the system put in the viewer's own inbox stream —
// budget warnings and stops, approval requests and outcomes, incidents —
// labelled by the notice's kind.
func myNotices(ctx context.Context, u *UI, v *viewer, before time.Time, limit int) ([]inboxItem, error) {
	if err := needs(v, "read_events"); err != nil {
		return nil, err
	}
	stream := domain.InboxStream(v.Worker.ID)
	evs, err := u.st.EventsBefore(ctx, store.PageQuery{StreamIDs: []string{stream}, Until: before, Limit: limit, Undismissed: v.Worker.ID})
	if err != nil {
		return nil, err
	}
	var out []inboxItem
	for _, ev := range evs {
		var extra struct {
			Kind     string
			Approval struct{ ID string }
		}
		json.Unmarshal(ev.Message.Extra, &extra) // a notice without a kind is a plain notice
		kind, label := noticeKind(extra.Kind)
		item := inboxItem{At: ev.CreatedAt, Kind: kind, Label: label, About: extra.Approval.ID, Key: ev.ID,
			Link:  u.cfg.Root + "/ui/streams/" + stream + "#ev-" + strconv.FormatInt(ev.Seq, 10),
			Title: cmp.Or(ev.Message.Subject, "Notice"), Text: ev.Message.Body, Undecodable: ev.Undecodable}
		if item.About != "" {
			// The notice was written when the request was made or decided;
			// the request itself says where it stands now.
			a, err := u.st.GetApproval(ctx, item.About)
			if err != nil && !errors.Is(err, domain.ErrNotFound) {
				return nil, err
			}
			item.OutcomeKind, item.Outcome = approvalOutcome(a)
		}
		out = append(out, item)
	}
	return out, nil
}

// callArg is one argument of a call: a string as it is, anything else as
// compact JSON.
type callArg struct{ Name, Value string }

// callArgs are a call's arguments by name; arguments that are not a JSON
// object come back whole, under no name.
func callArgs(raw json.RawMessage) []callArg {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		if len(raw) == 0 {
			return nil
		}
		return []callArg{{Value: string(raw)}}
	}
	out := make([]callArg, 0, len(fields))
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		v := string(fields[name])
		var str string
		if json.Unmarshal(fields[name], &str) == nil {
			v = str
		}
		out = append(out, callArg{Name: name, Value: v})
	}
	return out
}

// approvalOutcome says how a request was decided and what came of it;
// nothing while it waits.
func approvalOutcome(a domain.Approval) (kind, text string) {
	by := cmp.Or(a.DecidedBy, "the operator") + " at " + when(a.DecidedAt)
	switch a.State {
	case domain.ApprovalApproved:
		return "approved", "Approved by " + by + "; the call is running."
	case domain.ApprovalExecuted:
		if a.Error != "" {
			return "failed", "Approved by " + by + "; the call ran and failed: " + a.Error
		}
		return "approved", "Approved by " + by + "; the call ran."
	case domain.ApprovalDenied:
		text = "Denied by " + by + "."
		if a.Note != "" {
			text += " Note: " + a.Note
		}
		return "denied", text
	case domain.ApprovalExpired:
		return "expired", "Expired undecided at " + when(a.ExpiresAt) + "; the worker must ask again."
	}
	return "", ""
}

// noticeKind maps a notice's kind (budget_soft, budget_hard, approval…)
// to a style slug and a label: the family before the first underscore.
func noticeKind(kind string) (slug, label string) {
	family, _, _ := strings.Cut(kind, "_")
	if family == "" {
		return "notice", "notice"
	}
	return family, family
}

// failedRunsBelowMe: failed runs of the AI workers the viewer manages —
// those in positions below theirs on the chart (the owner manages all).
func failedRunsBelowMe(ctx context.Context, u *UI, v *viewer, before time.Time, limit int) ([]inboxItem, error) {
	if err := needs(v, "worker_log"); err != nil {
		return nil, err
	}
	managed, err := u.managed(ctx, v)
	if err != nil || len(managed) == 0 {
		return nil, err
	}
	acts, err := u.st.ActivationsBefore(ctx, store.ActivationQuery{Workers: managed, Status: domain.ActivationFailed, Before: before, Limit: limit, Undismissed: v.Worker.ID})
	var out []inboxItem
	for _, a := range acts {
		out = append(out, inboxItem{At: a.StartedAt, Kind: "failed-run", Label: "failed run", Link: u.cfg.Root + "/ui/workers/" + a.WorkerID, Key: a.ID,
			Title: a.WorkerID + "'s run " + a.ID + " failed", Text: a.Error})
	}
	return out, err
}

// approvalsToDecide: pending approval requests the viewer is the approver
// of (the owner: all), with approve and deny on the page, and the
// viewer's own calls waiting for someone else.
func approvalsToDecide(ctx context.Context, u *UI, v *viewer, before time.Time, limit int) ([]inboxItem, error) {
	if err := needs(v, "list_approvals"); err != nil {
		return nil, err
	}
	got, err := invoke[struct{ Approvals []domain.Approval }](ctx, v, "list_approvals", nil)
	var out []inboxItem
	for _, a := range got.Approvals {
		if (!before.IsZero() && !a.CreatedAt.Before(before)) || len(out) == limit {
			continue
		}
		text := a.Why
		if a.Reason != "" {
			text += " — " + a.Reason
		}
		item := inboxItem{At: a.CreatedAt, Kind: "approval", Label: "approval", Link: u.cfg.Root + "/ui/workers/" + a.WorkerID,
			Title: a.WorkerID + " asks to call " + a.Tool, Text: text, Args: callArgs(a.Arguments), Approval: a.ID, About: a.ID, Request: true}
		switch a.Kind {
		case domain.ApprovalDeclassify:
			// What only its readers may read would reach others: one of
			// them decides whether to share it.
			item.Kind, item.Label = "declassify", "declassify"
			item.Title = a.WorkerID + " asks to share, with " + a.Tool + ", what only " + strings.Join(a.Label.Readers, ", ") + " may read"
		case domain.ApprovalUntrusted:
			item.Kind, item.Label = "untrusted", "untrusted input"
		}
		switch {
		case a.WorkerID == v.Worker.ID && a.Approver != v.Worker.ID:
			item.Label, item.Title, item.Approval = "waiting", "Your call of "+a.Tool+" waits for "+a.Approver, ""
		case a.Approver != v.Worker.ID && !v.IsOwner():
			continue
		}
		out = append(out, item)
	}
	return out, err
}

// managed lists the AI workers in positions below the viewer's, read
// through list_positions and list_workers.
func (u *UI) managed(ctx context.Context, v *viewer) ([]string, error) {
	positions, err := invoke[struct{ Positions []domain.Position }](ctx, v, "list_positions", nil)
	if err != nil {
		return nil, err
	}
	workers, err := invoke[struct{ Workers []domain.Worker }](ctx, v, "list_workers", map[string]any{"kind": domain.WorkerAI})
	if err != nil {
		return nil, err
	}
	nodes := map[string]*orgNode{}
	for _, p := range positions.Positions {
		nodes[p.ID] = &orgNode{Position: p}
	}
	parent := parents(positions.Positions, nodes)
	below := func(pos string) bool {
		for up := parent[pos]; up != ""; up = parent[up] {
			if up == v.Worker.PositionID {
				return true
			}
		}
		return false
	}
	var out []string
	for _, w := range workers.Workers {
		if below(w.PositionID) || (v.IsOwner() && w.PositionID != v.Worker.PositionID) {
			out = append(out, w.ID)
		}
	}
	return out, nil
}

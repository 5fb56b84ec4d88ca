package ui

import (
	"net/http"
	"slices"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type workerPage struct {
	Worker   domain.Worker
	Position domain.Position
	Role     string
	Streams  []string
	Grants   []grantRow
	GrantErr string
	// Grantable are the tools the viewer could grant: those it holds.
	Grantable   []string
	Activations []domain.Activation
	ActPager    pager
	Log         []domain.Event
	LogErr      string
	IsAI, IsMe  bool
}

type grantRow struct {
	domain.Grant
	Live bool `json:"live"`
}

// handleWorker shows one worker: identity, role, grants, streams and, for
// an AI worker, its recent runs and its activation log, live.
func (u *UI) handleWorker(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	id := r.PathValue("id")
	live := u.liveURL(ctx, "view", "log", "worker", id)
	got, err := invoke[struct {
		Worker   domain.Worker
		Position domain.Position
		Streams  []string
	}](ctx, v, "get_worker", map[string]any{"id": id})
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	p := workerPage{Worker: got.Worker, Position: got.Position, Role: got.Position.RoleID, Streams: got.Streams,
		Grantable: v.granted, IsAI: got.Worker.Kind == domain.WorkerAI, IsMe: id == v.Worker.ID}
	if role, err := invoke[domain.Role](ctx, v, "get_role", map[string]any{"id": got.Position.RoleID}); err == nil {
		p.Role = role.Title
	}
	grants, err := invoke[struct{ Grants []grantRow }](ctx, v, "list_grants", map[string]any{"worker": id})
	p.Grants, p.GrantErr = grants.Grants, sectionErr(err)
	if p.IsAI {
		if err := probeLog(ctx, v, id); err != nil {
			p.LogErr, live = err.Error(), ""
		} else if err := u.workerRuns(r, id, &p); err != nil {
			u.fail(w, r, v, err)
			return
		}
	} else {
		live = ""
	}
	u.render(w, r, http.StatusOK, "worker", pageData{Title: got.Worker.Name, Nav: "org", V: v, Live: live, Body: p})
}

// workerRuns reads a worker's runs, newest first and paged, and the tail
// of its activation log. The caller has checked worker_log allows it.
func (u *UI) workerRuns(r *http.Request, id string, p *workerPage) error {
	ctx := r.Context()
	before, _ := time.Parse(time.RFC3339Nano, r.URL.Query().Get("before"))
	limit := limitOf(r)
	acts, err := u.st.ActivationsBefore(ctx, store.ActivationQuery{Workers: []string{id}, Before: before, Limit: limit + 1})
	if err != nil {
		return err
	}
	next := ""
	if len(acts) > limit {
		acts = acts[:limit]
		next = acts[limit-1].StartedAt.Format(time.RFC3339Nano)
	}
	p.Activations, p.ActPager = acts, newPager(r, "before", next)
	tail, err := u.st.EventsBefore(ctx, store.PageQuery{StreamIDs: []string{domain.ActivationStreamPrefix + id}, Limit: 50})
	slices.Reverse(tail)
	p.Log = tail
	return err
}

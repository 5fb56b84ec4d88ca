package ui

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// Worker statuses on the org chart and fleet. The first word is the
// status's CSS class (see the "status" template).
const (
	statusIdle    = "idle"
	statusRunning = "running"
	// statusWaiting: work is pending but a reached budget holds it.
	statusWaiting = "waiting for budget"
	// statusApproval: a call the worker made is held for a person.
	statusApproval = "waiting for approval"
	// statusCannotStart: its agent failed to start and its work waits
	// for a retry or, parked, for an operator.
	statusCannotStart = "cannot start"
)

type orgPage struct {
	Roots []*orgNode
	// Graph is the same chart laid out as a picture, for wide screens.
	Graph     orgGraph
	Err       string
	Roles     []domain.Role
	Positions []domain.Position
	// Hire and Under preselect the hire and new-position forms.
	Hire, Under string
	Pager       pager
	Grantable   []string
	Kinds       []domain.WorkerKind
	// What the viewer may do, worked out once for the whole tree.
	CanHire, CanAddPosition, CanDismiss bool
	Me                                  string
	// Processors stand between streams and the workers they wake.
	Processors []domain.Processor
}

// orgNode is one position in the chart with its people and reports.
type orgNode struct {
	Position domain.Position
	Role     string
	Workers  []workerCard
	Children []*orgNode
}

type workerCard struct {
	domain.Worker
	Status string
	Why    string // what a waiting worker waits for
}

// workerState is a worker's status on the chart and fleet, and why.
type workerState struct{ Status, Why string }

// handleOrg shows the org chart: positions as a tree by reports-to, each
// with its role and workers. Everything on it is read through the tools,
// so the viewer sees what list_positions, list_roles and list_workers
// show them.
func (u *UI) handleOrg(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	live := ""
	if v.Can("read_events") || v.Can("worker_log") {
		live = u.liveURL(ctx, "view", "org")
	}
	p := orgPage{Hire: r.URL.Query().Get("hire"), Under: r.URL.Query().Get("under"), Kinds: domain.WorkerKinds, Grantable: v.granted,
		CanHire: v.Can("hire_worker"), CanAddPosition: v.Can("create_position"), CanDismiss: v.Can("dismiss_worker"), Me: v.Worker.ID}
	positions, err := invoke[struct{ Positions []domain.Position }](ctx, v, "list_positions", nil)
	roles, rerr := invoke[struct{ Roles []domain.Role }](ctx, v, "list_roles", nil)
	workers, werr := invoke[struct{ Workers []domain.Worker }](ctx, v, "list_workers", nil)
	if err = firstErr(err, rerr, werr); err != nil {
		p.Err = err.Error()
	}
	p.Roles, p.Positions = roles.Roles, positions.Positions
	status, err := u.workerStatus(ctx, v)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	roots := orgTree(positions.Positions, roles.Roles, workers.Workers, status)
	// The chart pages by the branches under its root, ordered by id.
	if len(roots) == 1 {
		root := *roots[0]
		var next string
		root.Children, next = pageAfter(root.Children, func(n *orgNode) string { return n.Position.ID }, r.URL.Query().Get("after"), limitOf(r))
		roots = []*orgNode{&root}
		p.Pager = newPager(r, "after", next)
	}
	p.Roots, p.Graph = roots, layoutOrg(roots, p.CanHire || p.CanAddPosition)
	if v.Can("list_processors") {
		procs, _ := invoke[struct{ Processors []domain.Processor }](ctx, v, "list_processors", nil)
		p.Processors = procs.Processors
	}
	u.render(w, r, http.StatusOK, "org", pageData{Title: "Org chart", Nav: "org", V: v, Live: live, Body: p})
}

// workerStatus says which workers are running now, and which wait for a
// budget or for a person to approve a call they made. Runs are shown to
// those who may read activation logs (worker_log), as on the fleet page.
func (u *UI) workerStatus(ctx context.Context, v *viewer) (map[string]workerState, error) {
	out := map[string]workerState{}
	if !v.Can("worker_log") {
		return out, nil
	}
	waiting, err := u.st.WaitingWorkers(ctx)
	if err != nil {
		return out, err
	}
	for w, why := range waiting {
		out[w] = workerState{statusWaiting, why}
	}
	failing, err := u.st.StartFailures(ctx)
	if err != nil {
		return out, err
	}
	for w, why := range failing {
		out[w] = workerState{statusCannotStart, why}
	}
	held, err := u.st.HeldCalls(ctx)
	if err != nil {
		return out, err
	}
	heldFor := heldWhy(held)
	for w, why := range heldFor {
		out[w] = workerState{statusApproval, why}
	}
	running, err := u.st.RunningActivations(ctx)
	for _, a := range running {
		// A run goes on while its held call waits: say both.
		out[a.WorkerID] = workerState{statusRunning, heldFor[a.WorkerID]}
	}
	return out, err
}

// heldWhy says, per worker, what its held calls wait on: the first
// call's tool and approver, and how many more there are.
func heldWhy(held []domain.Approval) map[string]string {
	calls := map[string][]domain.Approval{}
	for _, a := range held {
		calls[a.WorkerID] = append(calls[a.WorkerID], a)
	}
	out := map[string]string{}
	for w, as := range calls {
		why := fmt.Sprintf("waits for %s to approve %s", as[0].Approver, as[0].Tool)
		if n := len(as) - 1; n == 1 {
			why += " and 1 more call"
		} else if n > 1 {
			why += fmt.Sprintf(" and %d more calls", n)
		}
		out[w] = why
	}
	return out
}

// orgTree hangs each position under the one it reports to; a position
// without reportsTo (or reporting to one not shown) hangs under p-owner.
func orgTree(positions []domain.Position, roles []domain.Role, workers []domain.Worker, status map[string]workerState) []*orgNode {
	titles := map[string]string{}
	for _, r := range roles {
		titles[r.ID] = r.Title
	}
	nodes := map[string]*orgNode{}
	for _, p := range positions {
		nodes[p.ID] = &orgNode{Position: p, Role: cmp.Or(titles[p.RoleID], p.RoleID)}
	}
	for _, w := range workers {
		if n, ok := nodes[w.PositionID]; ok {
			s := status[w.ID]
			if s.Status == "" && w.Kind == domain.WorkerAI {
				s.Status = statusIdle
			}
			n.Workers = append(n.Workers, workerCard{Worker: w, Status: s.Status, Why: s.Why})
		}
	}
	parent := parents(positions, nodes)
	var roots []*orgNode
	for _, p := range positions { // sorted by id, so children are too
		if up := parent[p.ID]; up != "" {
			nodes[up].Children = append(nodes[up].Children, nodes[p.ID])
		} else {
			roots = append(roots, nodes[p.ID])
		}
	}
	ownerFirst := func(n *orgNode) int {
		if n.Position.ID == store.OwnerPosition {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(roots, func(a, b *orgNode) int { return cmp.Compare(ownerFirst(a), ownerFirst(b)) })
	return roots
}

// parents maps each shown position to the shown one it hangs under ("" for
// a root), breaking any reports-to cycle so the chart stays a tree.
func parents(positions []domain.Position, nodes map[string]*orgNode) map[string]string {
	parent := map[string]string{}
	for _, p := range positions {
		up := p.ReportsTo
		if _, ok := nodes[up]; !ok || up == p.ID {
			up = store.OwnerPosition
		}
		if _, ok := nodes[up]; !ok || p.ID == store.OwnerPosition {
			up = ""
		}
		parent[p.ID] = up
	}
	for _, p := range positions {
		seen := map[string]bool{p.ID: true}
		for up := parent[p.ID]; up != ""; up = parent[up] {
			if seen[up] {
				parent[p.ID] = "" // p sits on a cycle: show it at the top
				break
			}
			seen[up] = true
		}
	}
	return parent
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

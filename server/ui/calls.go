package ui

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

type callsPage struct {
	Rows   []domain.ToolCall
	Filter callsFilter
	// All: the viewer is the owner and sees every worker's calls; else
	// only those of the workers whose runs it may read.
	All   bool
	Err   string
	Pager pager
	// ShowReads is this page's filter with successful reads shown.
	ShowReads string
}

// callsFilter narrows the calls shown. Reads that succeeded are left out
// unless Reads is "shown": every page of this UI reads through tools as it
// renders, and those calls would bury what workers did.
type callsFilter struct{ Worker, Tool, Reads string }

func (f callsFilter) Set() bool { return f.Worker != "" || f.Tool != "" || f.Reads != "" }

// QuietReads says whether successful reads are left out.
func (f callsFilter) QuietReads() bool { return f.Reads != "shown" && f.Tool == "" }

func callsFilterOf(q url.Values) callsFilter {
	f := callsFilter{Worker: q.Get("worker"), Tool: q.Get("tool")}
	if q.Get("reads") == "shown" {
		f.Reads = "shown"
	}
	return f
}

// handleCalls shows the audit of tool calls, newest first, filtered by
// worker and tool, a page at a time (?limit=, and ?before= the last seq
// of the page before). The owner sees every call; a manager those of the
// workers whose runs it may read (worker_log's rule: itself and the
// workers below it); anyone else is refused, as on the Audit page.
func (u *UI) handleCalls(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	p := callsPage{Filter: callsFilterOf(r.URL.Query()), All: v.IsOwner()}
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	f := store.CallFilter{Worker: p.Filter.Worker, Tool: p.Filter.Tool, Limit: limitOf(r), Before: before}
	if p.Filter.QuietReads() {
		f.QuietTools = tools.ReadOnlyTools()
	}
	if !p.All {
		among, err := u.callsVisibleTo(ctx, v)
		if err != nil {
			u.fail(w, r, v, err)
			return
		}
		if len(among) < 2 {
			p.Err = "Only the owner and managers see the calls workers make: " + v.Worker.ID + " manages nobody."
			u.render(w, r, http.StatusOK, "calls", pageData{Title: "Calls", Nav: "audit", V: v, Body: p})
			return
		}
		f.Among = among
	}
	rows, err := u.st.ListCalls(ctx, f)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	next := ""
	if len(rows) == f.Limit {
		next = strconv.FormatInt(rows[len(rows)-1].Seq, 10)
	}
	p.Rows, p.Pager = rows, newPager(r, "before", next)
	q := r.URL.Query()
	q.Del("before")
	q.Set("reads", "shown")
	p.ShowReads = r.URL.Path + encode(q)
	u.render(w, r, http.StatusOK, "calls", pageData{Title: "Calls", Nav: "audit", V: v, Body: p})
}

// callsVisibleTo are the workers whose calls v may see: those whose
// activation logs it may read.
func (u *UI) callsVisibleTo(ctx context.Context, v *viewer) ([]string, error) {
	workers, err := u.st.ListWorkers(ctx, store.WorkerFilter{})
	if err != nil {
		return nil, err
	}
	among := []string{}
	for _, w := range workers {
		if u.st.CheckReads(ctx, v.Worker.ID, domain.ActivationStreamPrefix+w.ID) == nil {
			among = append(among, w.ID)
		}
	}
	return among, nil
}

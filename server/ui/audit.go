package ui

import (
	"cmp"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type auditPage struct {
	Rows   []auditRow
	Filter auditFilter
	Err    string
	Pager  pager
}

type auditFilter struct{ Actor, Action, Target string }

func auditFilterOf(q url.Values) auditFilter {
	return auditFilter{Actor: q.Get("actor"), Action: q.Get("action"), Target: q.Get("target")}
}

func (f auditFilter) matches(ev domain.Event) bool {
	c := changeOf(ev)
	return (f.Actor == "" || c.Actor == f.Actor) && (f.Action == "" || c.Action == f.Action) && (f.Target == "" || c.Target == f.Target)
}

// auditRow is one change to the org: who did what to which record, and
// each field's value before and after.
type auditRow struct {
	Seq    int64
	Event  domain.Event
	Change store.Change
	Diff   []fieldChange
}

type fieldChange struct{ Field, Before, After string }

// handleAudit shows s-org, the audit trail, newest first, filtered by
// actor, action and target and paged; the first page updates live.
func (u *UI) handleAudit(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	q := r.URL.Query()
	f := auditFilterOf(q)
	before, _ := strconv.ParseInt(q.Get("before"), 10, 64)
	live := ""
	if before == 0 {
		live = u.liveURL(ctx, "view", "audit", "actor", f.Actor, "action", f.Action, "target", f.Target)
	}
	p := auditPage{Filter: f}
	if err := probeStream(ctx, v, domain.StreamOrg); err != nil {
		p.Err = err.Error()
		u.render(w, r, http.StatusOK, "audit", pageData{Title: "Audit", Nav: "audit", V: v, Body: p})
		return
	}
	limit := limitOf(r)
	evs, err := u.st.EventsBefore(ctx, store.PageQuery{StreamIDs: []string{domain.StreamOrg}, Before: before, Limit: limit,
		Actor: f.Actor, Action: f.Action, Target: f.Target})
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	next := ""
	if len(evs) == limit {
		next = strconv.FormatInt(evs[len(evs)-1].Seq, 10)
	}
	for _, ev := range evs {
		p.Rows = append(p.Rows, auditRowOf(ev))
	}
	p.Pager = newPager(r, "before", next)
	u.render(w, r, http.StatusOK, "audit", pageData{Title: "Audit", Nav: "audit", V: v, Live: live, Body: p})
}

func changeOf(ev domain.Event) store.Change {
	var c store.Change
	json.Unmarshal(ev.Message.Extra, &c)
	return c
}

func auditRowOf(ev domain.Event) auditRow {
	c := changeOf(ev)
	return auditRow{Seq: ev.Seq, Event: ev, Change: c, Diff: diff(c.Before, c.After)}
}

// diff lists the top-level fields that differ between two records.
func diff(before, after any) []fieldChange {
	bm, bok := before.(map[string]any)
	am, aok := after.(map[string]any)
	if !bok && !aok {
		if before == nil && after == nil {
			return nil
		}
		return []fieldChange{{Field: "value", Before: text(before), After: text(after)}}
	}
	keys := slices.Sorted(maps.Keys(am))
	for k := range bm {
		if _, ok := am[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(fieldRank(a), fieldRank(b)) })
	var out []fieldChange
	for _, k := range keys {
		b, a := text(bm[k]), text(am[k])
		if b != a {
			out = append(out, fieldChange{Field: k, Before: b, After: a})
		}
	}
	return out
}

// fieldRank puts the fields that say what a record is first.
func fieldRank(f string) int {
	if i := slices.Index([]string{"id", "title", "name", "kind", "tool", "worker", "stream", "roleId", "positionId", "reportsTo"}, f); i >= 0 {
		return i
	}
	return 100
}

func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

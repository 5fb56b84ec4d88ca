package ui

import (
	"net/http"
	"slices"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// memoryRuns and memoryLinks bound what one insight shows of its
// feedback history and its links.
const (
	memoryRuns  = 5
	memoryLinks = 8
)

type memoryPage struct {
	// Quarantined insights wait for a person to endorse them; all are
	// listed, since each asks for a decision.
	Quarantined []memoryCard
	Insights    []memoryCard
	Err         string
	Filter      memoryFilter
	Types       []domain.InsightType
	Scopes      []domain.InsightScope
	Pager       pager
	CanEndorse  bool
	// Health sums up the whole memory, for the owner, who sees it all.
	Health *domain.MemoryHealth
}

type memoryFilter struct{ Type, Scope, Tag string }

// memoryCard is one insight with the scores recall would give it before
// relevance: effectiveness (learned and baseline), recency, and the use a
// prompt would make of it.
type memoryCard struct {
	domain.Insight
	Effectiveness, SuccessRate, Recency float64
	Use                                 domain.InsightUse
	Sinks                               bool
	Links                               []memoryLink
	MoreLinks                           int
	Runs                                []store.InsightRun
	// Votes are people's word on it outside a run, on every version.
	Votes []domain.InsightVote
}

// memoryLink is a link seen from one insight: the other end, and whether
// this insight led to it (Out) or came from it.
type memoryLink struct {
	Other      string
	Kind       domain.InsightLinkKind
	Similarity float64
	Out        bool
}

// handleMemory shows the insights the viewer may recall — what
// list_insights shows them — with their scores, links and feedback, and
// the quarantined ones with Endorse.
func (u *UI) handleMemory(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	q := r.URL.Query()
	p := memoryPage{Filter: memoryFilter{Type: q.Get("type"), Scope: q.Get("scope"), Tag: q.Get("tag")},
		Types: domain.InsightTypes, Scopes: domain.InsightScopes, CanEndorse: v.Can("endorse_insight")}
	if err := firstErr(validIf("type", p.Filter.Type, domain.InsightType(p.Filter.Type).Validate),
		validIf("scope", p.Filter.Scope, domain.InsightScope(p.Filter.Scope).Validate)); err != nil {
		u.fail(w, r, v, err)
		return
	}
	live := ""
	if err := needs(v, "list_insights"); err != nil {
		p.Err = err.Error()
	} else if all, err := u.st.ListInsights(ctx, v.Worker.ID, store.InsightFilter{Scope: domain.InsightScope(p.Filter.Scope),
		Type: domain.InsightType(p.Filter.Type), Tag: p.Filter.Tag}); err != nil {
		u.fail(w, r, v, err)
		return
	} else {
		if v.Can("read_events") || v.Can("worker_log") {
			live = u.liveURL(ctx, "view", "memory")
		}
		quarantined, trusted := splitQuarantined(all)
		page, next := pageAfterID(trusted, q.Get("after"), limitOf(r))
		p.Pager = newPager(r, "after", next)
		if p.Quarantined, err = u.memoryCards(r, v, quarantined); err == nil {
			p.Insights, err = u.memoryCards(r, v, page)
		}
		if err == nil && v.IsOwner() {
			var h domain.MemoryHealth
			h, err = u.st.MemoryHealth(ctx)
			p.Health = &h
		}
		if err != nil {
			u.fail(w, r, v, err)
			return
		}
	}
	u.render(w, r, http.StatusOK, "memory", pageData{Title: "Memory", Nav: "memory", V: v, Live: live, Body: p})
}

// validIf checks a filter's value when one is given.
func validIf(field, value string, validate func(field string) error) error {
	if value == "" {
		return nil
	}
	return validate(field)
}

func splitQuarantined(all []domain.Insight) (quarantined, trusted []domain.Insight) {
	for _, in := range all {
		if in.Quarantined() {
			quarantined = append(quarantined, in)
		} else {
			trusted = append(trusted, in)
		}
	}
	return quarantined, trusted
}

// pageAfterID pages a list in its own order: up to limit insights after
// the one with id after, and the id to continue from ("" at the end).
func pageAfterID(ins []domain.Insight, after string, limit int) ([]domain.Insight, string) {
	if i := slices.IndexFunc(ins, func(in domain.Insight) bool { return in.ID == after }); i >= 0 {
		ins = ins[i+1:]
	}
	if len(ins) <= limit {
		return ins, ""
	}
	return ins[:limit], ins[limit-1].ID
}

// memoryCards scores each insight as recall's learned ranking would, and
// reads its links, recent runs and votes.
func (u *UI) memoryCards(r *http.Request, v *viewer, ins []domain.Insight) ([]memoryCard, error) {
	now := u.st.Now()
	out := make([]memoryCard, 0, len(ins))
	for _, in := range ins {
		ranked := domain.Rank(domain.RankLearned, []domain.Candidate{{Insight: in}}, now, 1)[0]
		c := memoryCard{Insight: in, Effectiveness: ranked.Effectiveness, SuccessRate: in.Stats.BaselineEffectiveness(),
			Recency: ranked.Recency, Use: ranked.Use(0), Sinks: ranked.Sunk}
		links, err := u.st.InsightLinks(r.Context(), in.ID)
		if err != nil {
			return nil, err
		}
		for _, l := range links {
			ml := memoryLink{Other: l.To, Kind: l.Kind, Similarity: l.Similarity, Out: true}
			if l.To == in.ID {
				ml.Other, ml.Out = l.From, false
			}
			c.Links = append(c.Links, ml)
		}
		if len(c.Links) > memoryLinks {
			c.Links, c.MoreLinks = c.Links[:memoryLinks], len(c.Links)-memoryLinks
		}
		if c.Runs, err = u.st.InsightRuns(r.Context(), in.ID, memoryRuns); err != nil {
			return nil, err
		}
		if c.Votes, err = u.st.InsightVotes(r.Context(), v.Worker.ID, in.ID); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

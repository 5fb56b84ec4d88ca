package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// The readers policy: a run that read what only a set R may read writes
// only where every reader is in R. audiences says, for each tool that
// writes where others read, who would read what the call writes: nil is
// the whole org or the outside world, which only a run readable by the
// org may reach. A write beyond R waits for a person in R to declassify
// it, unless everything that narrowed R was the trusted words of the
// person who woke the run (domain.Label.OwnWords), which are theirs to
// share where they may.
var audiences = map[string]func(ctx context.Context, env *Env, args json.RawMessage) (audience, error){
	"publish":            publishAudience,
	"dm":                 dmAudience,
	"message_activation": steerAudience,
	"store_insight":      insightAudience,
	"submit_spec":        orgAudience("spec task stream and documents"),
	"report_item":        orgAudience("spec task stream and documents"),
	"create_spec_task":   orgAudience("spec task stream and documents"),
}

// audience is who would read a write: readers (nil: everyone in where)
// and where, for the approver.
type audience struct {
	readers []string
	where   string
	// stream is the stream written on, if any: the person's-own-words
	// rule lets the run write there only if that person reads it.
	stream string
}

// sharesNothing are the writing tools whose calls leave no text of the
// caller's where others read it (a grant, a subscription, a claim): they
// need no declassifying. Every other tool that is not read-only and has
// no audience above writes where the org reads — a role, an identity, a
// stream's or position's name, a skill's code — so a narrowed run's call
// of it waits, as a publish to the org would.
var sharesNothing = map[string]bool{
	"archive_stream": true, "cancel_activation": true, "claim_item": true, "delete_skill": true, "dismiss_worker": true,
	"enable_endpoint": true, "endorse_insight": true, "grant_tool": true, "link_insights": true,
	"retry_delivery": true, "revoke_tool": true, "rollback_skill": true, "set_budget": true, "subscribe": true, "unsubscribe": true,
}

// audienceOf is who would read what a call of tool writes; ok is false
// when it writes nothing others read. An outside tool its server calls
// read-only writes nothing; any other sends its arguments out.
func audienceOf(env *Env, tool string) (of func(context.Context, *Env, json.RawMessage) (audience, error), ok bool) {
	if of, ok := audiences[tool]; ok {
		return of, true
	}
	if domain.IsOutsideTool(tool) {
		if !outsideWrites(env, tool) {
			return nil, false
		}
		server, _, _ := strings.Cut(tool, domain.OutsideToolSep)
		return func(context.Context, *Env, json.RawMessage) (audience, error) {
			return audience{where: "the outside world through mcp server " + server}, nil
		}, true
	}
	if sharesNothing[tool] || strings.HasPrefix(tool, domain.SkillToolPrefix) {
		// A skill runs without network and keeps only what it hands back.
		return nil, false
	}
	if t, ok := builtin(tool); ok && t.hints&readOnly != 0 {
		return nil, false
	}
	return orgAudience("record of " + tool), true
}

func orgAudience(where string) func(context.Context, *Env, json.RawMessage) (audience, error) {
	return func(context.Context, *Env, json.RawMessage) (audience, error) {
		return audience{where: "the org's " + where}, nil
	}
}

// needsDeclassifying says why a write reaches beyond its run's readers,
// or "" when it does not; own is set when it does but may, being the
// words of the person who woke the run: what it writes is then theirs,
// shared, and readable by the org.
func needsDeclassifying(ctx context.Context, env *Env, label domain.Label, tool string, args json.RawMessage) (why string, own bool, err error) {
	if !label.Scoped() {
		return "", false, nil
	}
	of, ok := audienceOf(env, tool)
	if !ok {
		return "", false, nil
	}
	aud, err := of(ctx, env, args)
	if err != nil || label.Within(aud.readers) {
		return "", false, err
	}
	if own, err := ownWords(ctx, env, label, aud); err != nil || own {
		return "", own, err
	}
	readers := "nobody"
	if len(label.Readers) > 0 {
		readers = strings.Join(label.Readers, ", ")
	}
	return fmt.Sprintf("%s would let %s read what only %s may (since this run read %s)", tool, aud.where, readers, label.Narrowed), false, nil
}

// ownWords: everything that narrowed the run's readers was written by a
// person whose event woke it, and that person may read where it writes.
func ownWords(ctx context.Context, env *Env, label domain.Label, aud audience) (bool, error) {
	people, err := env.Store.TriggerPeople(ctx, env.ActivationID)
	if err != nil {
		return false, err
	}
	for _, p := range people {
		if !label.OwnWords(p) {
			continue
		}
		if aud.stream == "" {
			return true, nil
		}
		if env.Store.CheckReads(ctx, p, aud.stream) == nil {
			return true, nil
		}
	}
	return false, nil
}

// publishAudience: a stream's readers (a DM's members, a contact's person,
// a private stream's members), else the org, or the outside world when
// its transport sends outside.
func publishAudience(ctx context.Context, env *Env, args json.RawMessage) (audience, error) {
	stream := streamArg(args)
	st, err := env.Store.GetStream(ctx, stream)
	if err != nil {
		return audience{}, nil // publish itself answers an unknown stream
	}
	readers, err := env.Store.StreamReaders(ctx, stream)
	if err != nil {
		return audience{}, err
	}
	switch {
	case readers != nil:
		return audience{readers: readers, where: fmt.Sprintf("the readers of %s (%s)", stream, strings.Join(readers, ", ")), stream: stream}, nil
	case env.Store.Transports().Outbound(st.Transport.Kind):
		return audience{where: fmt.Sprintf("the outside world through %s stream %s", st.Transport.Kind, stream), stream: stream}, nil
	}
	return audience{where: "everyone in the org on " + stream, stream: stream}, nil
}

// dmAudience: the caller and the worker the DM goes to.
func dmAudience(ctx context.Context, env *Env, args json.RawMessage) (audience, error) {
	var in struct {
		To string `json:"to"`
	}
	json.Unmarshal(args, &in)
	to, err := holder(ctx, env, "to", in.To)
	if err != nil || to == "" {
		return audience{readers: []string{env.Caller}}, nil // dm itself answers a bad to
	}
	return audience{readers: []string{env.Caller, to}, where: "a DM of " + env.Caller + " and " + to}, nil
}

// steerAudience: a message to a run is read by the run's worker.
func steerAudience(ctx context.Context, env *Env, args json.RawMessage) (audience, error) {
	var in struct {
		Activation string `json:"activation"`
	}
	json.Unmarshal(args, &in)
	a, err := env.Store.GetActivation(ctx, in.Activation)
	if err != nil {
		return audience{readers: []string{env.Caller}}, nil // message_activation itself answers a bad activation
	}
	return audience{readers: []string{env.Caller, a.WorkerID}, where: "the run " + a.ID + " of " + a.WorkerID}, nil
}

// insightAudience: whoever may recall an insight of that scope — its one
// worker, the holders of a role or position now, or the org.
func insightAudience(ctx context.Context, env *Env, args json.RawMessage) (audience, error) {
	var in struct {
		Scope  string `json:"scope"`
		Target string `json:"target"`
	}
	json.Unmarshal(args, &in)
	switch domain.InsightScope(in.Scope) {
	case "", domain.ScopeWorker:
		target := in.Target
		if target == "" {
			target = env.Caller
		}
		return audience{readers: []string{target}, where: "insights of " + target}, nil
	case domain.ScopeRole, domain.ScopePosition:
		holders, err := env.Store.InsightScopeHolders(ctx, domain.InsightScope(in.Scope), in.Target)
		if err != nil {
			return audience{}, err
		}
		return audience{readers: holders, where: fmt.Sprintf("the holders of %s %s (%s)", in.Scope, in.Target, strings.Join(holders, ", "))}, nil
	}
	return audience{where: "the org's insights"}, nil
}

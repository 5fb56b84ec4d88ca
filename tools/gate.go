package tools

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// ReasonArg is an argument any tool call may carry to tell an approver
// why; it is taken off before the tool sees the arguments.
const ReasonArg = "_reason"

// gateNote tells a client, once, how held calls look and how to give a reason.
const gateNote = "A call that needs a person's approval answers pending with an approval id and runs only if approved; add a \"" + ReasonArg + "\" string argument to any call to tell the approver why."

// pendingOut is what a held call answers instead of running.
type pendingOut struct {
	Pending  bool            `json:"pending"`
	Approval domain.Approval `json:"approval"`
	Note     string          `json:"note"`
}

// Held reports whether a tool's answer is a held call's pending approval
// rather than the tool's own result, and which.
func Held(out any) (domain.Approval, bool) {
	p, ok := out.(pendingOut)
	return p.Approval, ok && p.Pending
}

// gated is what the gate let through: the context to run the call under
// — whatever the call writes carries the run's label (store.Writing) —
// the arguments without ReasonArg, the run's label, and, for a held call,
// the pending answer instead.
type gated struct {
	ctx     context.Context
	args    json.RawMessage
	label   domain.Label
	pending *pendingOut
}

// gate holds a call of t for a person when the caller's grant says so,
// or, in a run, when the run's label does (policy.go).
func gate(ctx context.Context, env *Env, t Tool, args json.RawMessage) (gated, error) {
	g := gated{ctx: ctx}
	args, reason, err := takeReason(args)
	if err != nil {
		return g, err
	}
	h, err := whyHeld(ctx, env, t.Name, args)
	if err != nil {
		return g, err
	}
	g.label = h.label
	if h.ownWords {
		g.ctx = store.WritingDeclassified(ctx, h.label)
	} else {
		g.ctx = store.Writing(ctx, h.label)
	}
	if h.why == "" {
		g.args = args
		return g, nil
	}
	if carriesSecret(ctx, env, t.Name, args) {
		// An approval keeps its arguments for the approver to read.
		return g, domain.Forbidden("%s carries a credential, which no approval may hold, and this call would wait (%s): call it outside a run", t.Name, h.why)
	}
	// Only a call that could run is worth a person's decision.
	checked, err := t.check(args)
	if err != nil {
		return g, err
	}
	canon, hash, err := domain.CanonicalArgs(checked)
	if err != nil {
		return g, err
	}
	a, err := env.Store.RequestApproval(g.ctx, domain.Approval{WorkerID: env.Caller, Tool: t.Name, Arguments: canon, ArgsHash: hash,
		ActivationID: env.ActivationID, Reason: reason, Why: h.why, Kind: h.kind, Label: h.label}, env.Store.DurationSetting(ctx, ApprovalTTLSetting))
	if err != nil {
		return g, err
	}
	note := fmt.Sprintf("Not run yet: %s waits for %s to approve it (%s) before %s. The outcome arrives in your inbox %s; do not call it again meanwhile.",
		t.Name, a.Approver, a.ID, a.ExpiresAt.Format(time.RFC3339), domain.InboxStream(env.Caller))
	g.pending = &pendingOut{Pending: true, Approval: a, Note: note}
	return g, nil
}

// carriesSecret says a call's arguments hold a credential: such a call
// never waits for approval, which would keep the arguments in clear for
// the approver. add_mcp_server's always do; a stream's transport config
// does when it sets one of its kind's secret keys (a webhook's secret),
// other than to the mask a read shows.
func carriesSecret(ctx context.Context, env *Env, tool string, args json.RawMessage) bool {
	switch tool {
	case "add_mcp_server":
		return true
	case "create_stream", "update_stream":
	default:
		return false
	}
	var in struct {
		ID        string `json:"id"`
		Transport struct {
			Kind   domain.TransportKind       `json:"kind"`
			Config map[string]json.RawMessage `json:"config"`
		} `json:"transport"`
	}
	if json.Unmarshal(args, &in) != nil {
		return false // the tool's own check refuses it
	}
	kind := in.Transport.Kind
	if kind == "" && tool == "update_stream" {
		st, err := env.Store.GetStream(ctx, in.ID)
		if err != nil {
			return false
		}
		kind = st.Transport.Kind
	}
	for _, key := range env.Store.Transports().Secrets(kind) {
		var v string
		raw, ok := in.Transport.Config[key]
		if ok && string(raw) != "null" && !(json.Unmarshal(raw, &v) == nil && (v == "" || v == domain.Redacted)) {
			return true
		}
	}
	return false
}

// hold is why a call must wait — empty when it need not — under which
// rule, and the caller's run's label (zero outside a run).
type hold struct {
	why   string
	kind  domain.ApprovalKind
	label domain.Label
	// ownWords: a write beyond the run's readers that the person who woke
	// it may make; what it writes is readable by the org.
	ownWords bool
}

// whyHeld decides whether a call waits: a write beyond what the run's
// readers allow asks a person among them to declassify; a high-risk call
// in a run that read untrusted data, a call whose grant requires it, or
// one of approvals.ai_requires by an AI worker, asks the caller's nearest
// human manager.
func whyHeld(ctx context.Context, env *Env, tool string, args json.RawMessage) (hold, error) {
	var h hold
	if env.ActivationID != "" {
		var err error
		if h.label, err = env.Store.ActivationLabel(ctx, env.ActivationID); err != nil {
			return h, err
		}
	}
	var whys []string
	declassify, own, err := needsDeclassifying(ctx, env, h.label, tool, args)
	if err != nil {
		return h, err
	}
	if declassify != "" {
		h.kind, whys = domain.ApprovalDeclassify, append(whys, declassify)
	}
	h.ownWords = own
	risky, err := untrustedHighRisk(ctx, env, h.label, tool, args)
	if err != nil {
		return h, err
	}
	if risky != "" {
		h.kind, whys = cmp.Or(h.kind, domain.ApprovalUntrusted), append(whys, risky)
	}
	required, err := grantRequires(ctx, env, tool)
	if err != nil {
		return h, err
	}
	if required {
		h.kind, whys = cmp.Or(h.kind, domain.ApprovalGrant), append(whys, "the grant of "+tool+" requires approval")
	}
	ai, err := aiRequires(ctx, env, tool)
	if err != nil {
		return h, err
	}
	if ai != "" {
		h.kind, whys = cmp.Or(h.kind, domain.ApprovalAI), append(whys, ai)
	}
	h.why = strings.Join(whys, "; and ")
	return h, nil
}

// aiRequires says why a call waits because an AI worker makes it and
// approvals.ai_requires names the tool, or "": some acts (a merge) are a
// person's to sign off whatever the agent read.
func aiRequires(ctx context.Context, env *Env, tool string) (string, error) {
	v, err := env.Store.SettingOr(ctx, AIRequiresSetting)
	if err != nil {
		return "", err
	}
	names, err := aiRequiresList(v)
	if err != nil || !slices.Contains(names, tool) {
		return "", err
	}
	w, err := env.Store.GetWorker(ctx, env.Caller)
	if err != nil || w.Kind != domain.WorkerAI {
		return "", err
	}
	return tool + " waits for a person when an AI worker calls it (" + AIRequiresSetting.Key + ")", nil
}

// aiRequiresList is parseToolList of approvals.ai_requires' value v,
// kept for the value last seen: every call asks, and it seldom changes.
func aiRequiresList(v string) ([]string, error) {
	if p := aiRequiresParsed.Load(); p != nil && p.value == v {
		return p.names, p.err
	}
	names, err := parseToolList(AIRequiresSetting.Key, v)
	aiRequiresParsed.Store(&parsedList{value: v, names: names, err: err})
	return names, err
}

// parsedList is a list setting's value and what parseToolList made of it.
type parsedList struct {
	value string
	names []string
	err   error
}

var aiRequiresParsed atomic.Pointer[parsedList]

// grantRequires says whether the caller's grant of tool requires approval.
func grantRequires(ctx context.Context, env *Env, tool string) (bool, error) {
	if env.ApprovalRequired != nil {
		return env.ApprovalRequired(tool), nil
	}
	return env.Store.ApprovalRequired(ctx, env.Caller, tool)
}

// untrustedHighRisk says why a high-risk call waits in a run that read
// untrusted data, or "".
func untrustedHighRisk(ctx context.Context, env *Env, label domain.Label, tool string, args json.RawMessage) (string, error) {
	if !label.Untrusted {
		return "", nil
	}
	if outsideWrites(env, tool) {
		return tool + " reaches outside (its server does not call it read-only) and this run read untrusted data: " + label.Origin, nil
	}
	v, err := env.Store.SettingOr(ctx, HighRiskSetting)
	if err != nil || !slices.Contains(splitList(v), tool) {
		return "", err
	}
	if tool == "publish" {
		if out, err := sendsElsewhere(ctx, env, args); err != nil || !out {
			return "", err
		}
	}
	return tool + " is high-risk and this run read untrusted data: " + label.Origin, nil
}

// sendsElsewhere: a publish to a stream whose transport sends outside,
// other than one whose events woke the run, or an answer on a thread
// that woke it and that the stream holds — answering where the input came
// from is what such a stream is for (Sam answers the customer; Lee, woken
// by Sam's escalation on the customer's thread, answers that customer);
// sending it on is not.
func sendsElsewhere(ctx context.Context, env *Env, args json.RawMessage) (bool, error) {
	stream := streamArg(args)
	if stream == "" {
		return false, nil
	}
	st, err := env.Store.GetStream(ctx, stream)
	if err != nil || !env.Store.Transports().Outbound(st.Transport.Kind) {
		// publish itself answers an unknown stream.
		return false, nil
	}
	from, err := env.Store.TriggerStreams(ctx, env.ActivationID)
	if err != nil || slices.Contains(from, stream) {
		return false, err
	}
	answers, err := answersTriggerThread(ctx, env, stream, args)
	return !answers, err
}

// answersTriggerThread: the publish names no recipients of its own, and
// its thread is the thread of an event that woke the run and one the
// stream has taken part in, so it goes back to whoever is on that thread.
func answersTriggerThread(ctx context.Context, env *Env, stream string, args json.RawMessage) (bool, error) {
	var in struct {
		To       []string `json:"to"`
		ThreadID string   `json:"threadId"`
	}
	if json.Unmarshal(args, &in) != nil || len(in.To) > 0 || in.ThreadID == "" {
		return false, nil
	}
	trigs, err := env.Store.ActivationTriggers(ctx, env.ActivationID)
	if err != nil {
		return false, err
	}
	if !slices.ContainsFunc(trigs, func(t domain.Trigger) bool { return t.Event.Message.ThreadID == in.ThreadID }) {
		return false, nil
	}
	return env.Store.OnThread(ctx, stream, in.ThreadID)
}

// streamArg is a call's "stream" argument, if it has one.
func streamArg(args json.RawMessage) string {
	var in struct {
		Stream string `json:"stream"`
	}
	json.Unmarshal(args, &in)
	return in.Stream
}

// takeReason removes ReasonArg from a JSON object of arguments.
func takeReason(args json.RawMessage) (json.RawMessage, string, error) {
	if !bytes.Contains(args, []byte(ReasonArg)) {
		return args, "", nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args, "", nil
	}
	raw, ok := m[ReasonArg]
	if !ok {
		return args, "", nil
	}
	var reason string
	if err := json.Unmarshal(raw, &reason); err != nil {
		return nil, "", domain.Invalid(ReasonArg, "must be a string")
	}
	delete(m, ReasonArg)
	out, err := json.Marshal(m)
	return out, reason, err
}

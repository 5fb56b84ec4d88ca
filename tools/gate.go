package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
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

// gate holds a call of t for a person when the caller's grant says so, or
// when the caller's run is tainted and t is high-risk. It returns the
// pending answer (nil when the call may go ahead) and the arguments
// without ReasonArg.
func gate(ctx context.Context, env *Env, t Tool, args json.RawMessage) (*pendingOut, json.RawMessage, error) {
	args, reason, err := takeReason(args)
	if err != nil {
		return nil, nil, err
	}
	why, err := whyHeld(ctx, env, t.Name, args)
	if err != nil || why == "" {
		return nil, args, err
	}
	// Only a call that could run is worth a person's decision.
	checked, err := checkArgs(t.Name, t.input, args)
	if err != nil {
		return nil, nil, err
	}
	canon, hash, err := domain.CanonicalArgs(checked)
	if err != nil {
		return nil, nil, err
	}
	a, err := env.Store.RequestApproval(ctx, domain.Approval{WorkerID: env.Caller, Tool: t.Name, Arguments: canon, ArgsHash: hash,
		ActivationID: env.ActivationID, Reason: reason, Why: why}, env.Store.DurationSetting(ctx, ApprovalTTLSetting))
	if err != nil {
		return nil, nil, err
	}
	note := fmt.Sprintf("Not run yet: %s waits for %s to approve it (%s) before %s. The outcome arrives in your inbox %s; do not call it again meanwhile.",
		t.Name, a.Approver, a.ID, a.ExpiresAt.Format(time.RFC3339), domain.InboxStream(env.Caller))
	return &pendingOut{Pending: true, Approval: a, Note: note}, nil, nil
}

// whyHeld says why a call must wait, or "" when it need not.
func whyHeld(ctx context.Context, env *Env, tool string, args json.RawMessage) (string, error) {
	var required bool
	var err error
	if env.ApprovalRequired != nil {
		required = env.ApprovalRequired(tool)
	} else {
		required, err = env.Store.ApprovalRequired(ctx, env.Caller, tool)
	}
	if err != nil || required {
		return "the grant of " + tool + " requires approval", err
	}
	if env.ActivationID == "" {
		return "", nil
	}
	v, err := env.Store.SettingOr(ctx, HighRiskSetting)
	if err != nil || !slices.Contains(splitList(v), tool) {
		return "", err
	}
	act, err := env.Store.GetActivation(ctx, env.ActivationID)
	if err != nil || !act.Tainted {
		return "", err
	}
	if tool == "publish" {
		if out, err := sendsElsewhere(ctx, env, args); err != nil || !out {
			return "", err
		}
	}
	return tool + " is high-risk and this run read outside input: " + act.TaintReason, nil
}

// sendsElsewhere: a publish to a stream whose transport sends outside,
// other than one whose events woke the run — answering where the input
// came from is what such a stream is for; sending it on is not.
func sendsElsewhere(ctx context.Context, env *Env, args json.RawMessage) (bool, error) {
	var in struct {
		Stream string `json:"stream"`
	}
	if json.Unmarshal(args, &in) != nil || in.Stream == "" {
		return false, nil
	}
	st, err := env.Store.GetStream(ctx, in.Stream)
	if err != nil || !env.Store.Transports().Outbound(st.Transport.Kind) {
		// publish itself answers an unknown stream.
		return false, nil
	}
	from, err := env.Store.TriggerStreams(ctx, env.ActivationID)
	return !slices.Contains(from, in.Stream), err
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

// holdForApproval is the gate on tools/call: a held call answers pending
// (not an error: nothing went wrong) without reaching the tool.
func holdForApproval(env *Env, granted []string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			p := req.GetParams().(*mcp.CallToolParamsRaw)
			t, ok := builtin(p.Name)
			if !ok || !slices.Contains(granted, p.Name) {
				return next(ctx, method, req)
			}
			held, args := gateResult(ctx, env, t, p.Arguments)
			if held != nil {
				return held, nil
			}
			p.Arguments = args
			return next(ctx, method, req)
		}
	}
}

// gateResult runs the gate as a tools/call answers it: a held call's
// pending approval, or a failure of the gate itself, as the result (held
// non-nil); otherwise the arguments to run the call with.
func gateResult(ctx context.Context, env *Env, t Tool, args json.RawMessage) (held *mcp.CallToolResult, _ json.RawMessage) {
	pending, args, err := gate(ctx, env, t, args)
	if err != nil {
		res := &mcp.CallToolResult{}
		res.SetError(err)
		return res, nil
	}
	if pending == nil {
		return nil, args
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pending approval " + pending.Approval.ID + ". " + pending.Note}},
		StructuredContent: pending}, nil
}

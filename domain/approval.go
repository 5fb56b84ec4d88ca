package domain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"
)

// prefixApproval starts every approval request's id.
const prefixApproval = "ap-"

// NewApprovalID returns a fresh random approval id.
func NewApprovalID() string { return prefixApproval + RandomSlug(12) }

// GrantApproval says whether calls under a grant wait for a person.
type GrantApproval string

const (
	ApprovalNone     GrantApproval = "none"
	ApprovalRequired GrantApproval = "required"
)

// GrantApprovals lists the valid values.
var GrantApprovals = []GrantApproval{ApprovalRequired, ApprovalNone}

// Validate rejects unknown values, naming the valid ones; empty is none.
func (g GrantApproval) Validate(field string) error {
	if g != "" && !slices.Contains(GrantApprovals, g) {
		return EnumError(field, "approval", g, GrantApprovals)
	}
	return nil
}

// ApprovalState is where an approval request is in its life. Only pending
// moves, and only forward: a request is decided, and run, at most once.
type ApprovalState string

const (
	ApprovalPending  ApprovalState = "pending"
	ApprovalApproved ApprovalState = "approved"
	ApprovalDenied   ApprovalState = "denied"
	ApprovalExpired  ApprovalState = "expired"
	ApprovalExecuted ApprovalState = "executed"
)

// ApprovalStates lists the valid states.
var ApprovalStates = []ApprovalState{ApprovalPending, ApprovalApproved, ApprovalDenied, ApprovalExpired, ApprovalExecuted}

// Validate rejects unknown states, naming the valid ones.
func (s ApprovalState) Validate(field string) error {
	if !slices.Contains(ApprovalStates, s) {
		return EnumError(field, "approval state", s, ApprovalStates)
	}
	return nil
}

// ApprovalDecision is what an approver answers.
type ApprovalDecision string

const (
	DecisionApprove ApprovalDecision = "approve"
	DecisionDeny    ApprovalDecision = "deny"
)

// ApprovalDecisions lists the valid decisions.
var ApprovalDecisions = []ApprovalDecision{DecisionApprove, DecisionDeny}

// Validate rejects unknown decisions, naming the valid ones.
func (d ApprovalDecision) Validate(field string) error {
	if !slices.Contains(ApprovalDecisions, d) {
		return EnumError(field, "decision", d, ApprovalDecisions)
	}
	return nil
}

// ApprovalKind says why a call waits for a person.
type ApprovalKind string

const (
	// ApprovalGrant: the caller's grant of the tool requires approval.
	ApprovalGrant ApprovalKind = "grant"
	// ApprovalUntrusted: a high-risk tool in a run that read untrusted data.
	ApprovalUntrusted ApprovalKind = "untrusted"
	// ApprovalAI: a tool that waits for a person whenever an AI worker
	// calls it (approvals.ai_requires), whatever its grant and its run.
	ApprovalAI ApprovalKind = "ai"
	// ApprovalDeclassify: a write to a wider audience than may read what
	// the run read; a person among its readers decides.
	ApprovalDeclassify ApprovalKind = "declassify"
)

// Approval is a tool call held for a person: the exact arguments, bound
// by their hash, run once as the requesting worker if approved in time.
type Approval struct {
	ID       string `json:"id"`
	WorkerID string `json:"workerId"`
	Tool     string `json:"tool"`
	// Arguments are canonical JSON (CanonicalArgs); ArgsHash their SHA-256.
	Arguments    json.RawMessage `json:"arguments"`
	ArgsHash     string          `json:"argumentsSha256"`
	ActivationID string          `json:"activationId,omitempty"`
	// Reason is the requester's, Why the server's (the grant, or the
	// label), Kind which rule held it; Label is the run's label when it
	// was held, which an approved declassification lifts for this call.
	Reason    string          `json:"reason,omitempty"`
	Why       string          `json:"why"`
	Kind      ApprovalKind    `json:"kind,omitempty"`
	Label     Label           `json:"label,omitzero"`
	Approver  string          `json:"approver"`
	State     ApprovalState   `json:"state"`
	DecidedBy string          `json:"decidedBy,omitempty"`
	Note      string          `json:"note,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
	CreatedAt time.Time       `json:"createdAt"`
	ExpiresAt time.Time       `json:"expiresAt"`
	DecidedAt *time.Time      `json:"decidedAt,omitempty"`
}

// CanonicalArgs returns arguments as canonical JSON — object keys sorted,
// no insignificant space, numbers as written — and its SHA-256 in hex, so
// the same call always hashes the same and any other call differently.
func CanonicalArgs(raw json.RawMessage) (json.RawMessage, string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "", Invalid("arguments", "are not JSON: %v", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, "", Invalid("arguments", "%v", err)
	}
	return out, ArgsHash(out), nil
}

// ArgsHash is the hex SHA-256 of canonical arguments.
func ArgsHash(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

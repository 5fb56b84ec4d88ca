package domain

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// ToolCall is the audit record of one tool call, whatever brought it
// (MCP, a task, the web UI, an approval): who called what, with which
// arguments (secrets redacted), how it ended and how long it took.
type ToolCall struct {
	Seq int64     `json:"seq"`
	At  time.Time `json:"at"`
	// Worker is the caller; Activation the run it called from, if any.
	Worker     string `json:"worker"`
	Activation string `json:"activation,omitempty"`
	Tool       string `json:"tool"`
	// Arguments are as the caller sent them, every secret redactedArg.
	Arguments json.RawMessage `json:"arguments"`
	Status    CallStatus      `json:"status"`
	Error     string          `json:"error,omitempty"`
	// Approval is the approval request a held call waits on, or the one
	// whose approval ran it.
	Approval   string  `json:"approval,omitempty"`
	DurationMs float64 `json:"durationMs"`
	// Label is the caller's run's label when the call was made.
	Label Label `json:"label"`
}

// CallStatus is how a tool call ended.
type CallStatus string

const (
	// CallOK: the tool ran and answered.
	CallOK CallStatus = "ok"
	// CallError: the tool (or its argument check) answered an error.
	CallError CallStatus = "error"
	// CallPending: the approval gate held the call for a person.
	CallPending CallStatus = "pending approval"
	// CallRefused: the caller holds no grant of the tool, or there is no
	// such tool.
	CallRefused CallStatus = "refused"
)

// redactedArg replaces a secret in a recorded call's arguments.
const redactedArg = "[redacted]"

// secretKeys are argument names that hold secrets at any depth, compared
// lower-cased without '_' or '-'; secretSuffixes catch their compounds
// (accessToken, github_private_key) but not plurals (budget "tokens").
var (
	secretKeys     = []string{"token", "secret", "password", "passwd", "apikey", "authorization", "privatekey", "clientsecret", "credentials"}
	secretSuffixes = []string{"token", "secret", "password", "apikey", "privatekey"}
	// secretValues start the values that are secrets whatever their key:
	// the tokens and sign-in codes the server mints, sealed values and
	// bearer credentials.
	secretValues = []string{"hxo_", "hxa_", "hxs_", "hxc_", "enc:v1:", "Bearer ", "bearer "}
)

// RedactArgs returns a call's JSON arguments with every secret replaced
// by redactedArg: values under a secret-sounding key or one of extraKeys
// (a transport's secret config fields), at any depth, and values that
// are secrets by their form. Arguments that are not JSON are replaced
// whole, since what they hide cannot be told.
func RedactArgs(args json.RawMessage, extraKeys []string) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage("{}")
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		b, _ := json.Marshal(redactedArg)
		return b
	}
	out, err := json.Marshal(redactValue(v, extraKeys))
	if err != nil {
		b, _ := json.Marshal(redactedArg)
		return b
	}
	return out
}

func redactValue(v any, extra []string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if secretKey(k, extra) {
				v[k] = redactedArg
				continue
			}
			v[k] = redactValue(x, extra)
		}
	case []any:
		for i, x := range v {
			v[i] = redactValue(x, extra)
		}
	case string:
		for _, p := range secretValues {
			if strings.HasPrefix(v, p) {
				return redactedArg
			}
		}
	}
	return v
}

// keySeparators are dropped from a key before it is compared: built once,
// as a Replacer builds its table on first use (a few KB each call).
var keySeparators = strings.NewReplacer("_", "", "-", "")

// secretKey reports whether an argument named k holds a secret.
func secretKey(k string, extra []string) bool {
	n := keySeparators.Replace(strings.ToLower(k))
	for _, s := range secretKeys {
		if n == s {
			return true
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	for _, e := range extra {
		if strings.EqualFold(k, e) {
			return true
		}
	}
	return false
}

// AuditRetentionSetting is how long the audit of tool calls keeps a call.
var AuditRetentionSetting = SettingSpec{Key: "audit.retention", Type: SettingDuration, Default: "720h",
	Description: "How long the audit of tool calls keeps each call (helix-org audit, the web UI's Calls page); older calls are removed. A Go duration: 720h is 30 days."}

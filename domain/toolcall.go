package domain

import (
	"bytes"
	"encoding/json"
	"slices"
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

// RedactArgs returns a call's JSON arguments, as MarshalPlain writes
// them (keys sorted; <, > and & as themselves, however the client
// escaped them), with every secret replaced by redactedArg: values under
// a secret-sounding key or one of extraKeys (a transport's secret config
// fields), at any depth, and values that are secrets by their form. Arguments that are not JSON are replaced
// whole, since what they hide cannot be told.
func RedactArgs(args json.RawMessage, extraKeys []string) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage("{}")
	}
	if out, ok := redactFlat(args, extraKeys); ok {
		return out
	}
	return redactDecoded(args, extraKeys)
}

// redactDecoded is RedactArgs the long way: decoded, redacted, marshalled.
func redactDecoded(args json.RawMessage, extraKeys []string) json.RawMessage {
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		b, _ := json.Marshal(redactedArg)
		return b
	}
	out, err := MarshalPlain(redactValue(v, extraKeys))
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
		if secretValue(v) {
			return redactedArg
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

// flatMember is one member of a flat object: its key, and its value as
// written (a string with its quotes).
type flatMember struct{ key, value []byte }

// redactFlat is RedactArgs for the arguments most calls have — one object
// whose members are strings MarshalPlain writes as they are (ASCII, no
// escapes), numbers, booleans or null — written as MarshalPlain writes
// the decoded object (keys sorted, compact) without decoding it,
// which is most of the audit's cost of a call. ok is false for any other
// arguments, which are decoded.
func redactFlat(args []byte, extra []string) (out json.RawMessage, ok bool) {
	if !json.Valid(args) {
		return nil, false
	}
	var buf [8]flatMember
	ms := buf[:0]
	i := skipSpace(args, 0)
	if args[i] != '{' {
		return nil, false
	}
	// Valid vouches for the punctuation: after the brace comes a key or
	// the closing brace; after a key, a colon; after a value, a comma or
	// the closing brace.
	for i = skipSpace(args, i+1); args[i] != '}'; i = skipSpace(args, i+1) {
		key, next, ok := plainString(args, i)
		if !ok {
			return nil, false
		}
		i = skipSpace(args, skipSpace(args, next)+1)
		var value []byte
		switch args[i] {
		case '{', '[':
			return nil, false
		case '"':
			text, next, ok := plainString(args, i)
			if !ok {
				return nil, false
			}
			value, i = args[i:next], next
			if secretValue(string(text)) {
				value = redactedJSON
			}
		default: // a number, true, false or null
			j := i
			for j < len(args) && !endsValue(args[j]) {
				j++
			}
			value, i = args[i:j], j
		}
		if secretKey(string(key), extra) {
			value = redactedJSON
		}
		ms = append(ms, flatMember{key, value})
		if i = skipSpace(args, i); args[i] == '}' {
			break
		}
	}
	slices.SortFunc(ms, func(a, b flatMember) int { return bytes.Compare(a.key, b.key) })
	n := 2
	for k, m := range ms {
		if k > 0 && bytes.Equal(m.key, ms[k-1].key) {
			return nil, false // the decoder keeps the last of a key
		}
		n += len(m.key) + len(m.value) + 4
	}
	out = make([]byte, 0, n)
	out = append(out, '{')
	for k, m := range ms {
		if k > 0 {
			out = append(out, ',')
		}
		out = append(append(append(append(out, '"'), m.key...), '"', ':'), m.value...)
	}
	return append(out, '}'), true
}

// redactedJSON is redactedArg as a JSON string.
var redactedJSON = []byte(`"` + redactedArg + `"`)

// plainString returns the text of the JSON string starting at args[i]
// and the index after it; ok is false unless MarshalPlain would write
// the text back exactly as it is here.
func plainString(args []byte, i int) (text []byte, next int, ok bool) {
	if args[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(args); j++ {
		switch c := args[j]; {
		case c == '"':
			return args[i+1 : j], j + 1, true
		case c < 0x20 || c >= 0x80 || c == '\\':
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// endsValue: c ends a number, true, false or null in an object.
func endsValue(c byte) bool {
	return c == ',' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// secretValue reports whether a string is a secret by its form.
func secretValue(v string) bool {
	for _, p := range secretValues {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

// MarshalPlain is json.Marshal without its escapes of <, > and & (made
// for HTML's sake): what people and models read says `<body>` and `R&D`,
// not `\u003cbody\u003e` and `R\u0026D`, six characters for one, in a
// role, an email, a diff. The go-sdk writes its own JSON so too.
func MarshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// ReadableJSON is JSON text as a person reads it: the escapes of <, > and
// & that Go's encoder (and so many clients) writes for HTML's sake are
// turned back into the characters, so a role's `<body>` does not show as
// `\u003cbody\u003e`. Anything else is kept as written; the result is
// the same JSON value. Only for display, where the page escapes it.
func ReadableJSON(raw []byte) string {
	var b strings.Builder
	b.Grow(len(raw))
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '"':
			inString = !inString
		case inString && c == '\\' && i+1 < len(raw):
			if raw[i+1] == 'u' && i+6 <= len(raw) {
				if r, ok := htmlEscapes[strings.ToLower(string(raw[i+2:i+6]))]; ok {
					b.WriteByte(r)
					i += 5
					continue
				}
			}
			// Any other escape, \" among them, is copied whole.
			b.WriteByte(c)
			b.WriteByte(raw[i+1])
			i++
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

var htmlEscapes = map[string]byte{"003c": '<', "003e": '>', "0026": '&'}

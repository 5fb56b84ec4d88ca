package server

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// serveCalls answers a plain tools/call of a built-in tool itself, with
// tools.Call — the one call path the go-sdk's server runs too (grant,
// approval gate, argument check, handler, audit) — and writes the answer the go-sdk
// would write. The go-sdk decodes a call about 26 times, each into a
// fresh 32 KB buffer: 350 KB of garbage a call, and with its collection
// about a third of a publish's CPU. Every request that is not plainly
// such a call (another method, a skill, an unknown tool, a task, _meta
// beyond the protocol's own, headers the SDK checks or refuses) goes on to
// the go-sdk, which stays the reference: TestDirectCallsAnswerAsTheSDK
// sends every kind of call both ways and compares the answers byte for
// byte.
func (s *Server) serveCalls(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		call, ok := s.directCall(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		c := callerFrom(r.Context())
		env := s.callerEnv(c)
		// As in the go-sdk, a client that goes away does not stop its call.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.cfg.CallTimeout)
		defer cancel()
		if tools.ReadOnly(call.name) {
			// It changes nothing, so it may read the caches at the
			// epochs authenticating read: one read of them, not three.
			ctx = store.WithEpochs(ctx, c.epochs)
		} else {
			// Until it first writes, so may it.
			ctx = store.WithAuthenticated(ctx, c.epochs)
		}
		o := tools.Call(ctx, env, c.granted, call.name, call.args)
		res, err := o.Result(ctx, env)
		s.countCall(env.Known, call.name, res, err)
		s.directCalls.Add(1)
		writeCallAnswer(w, call, res, o.Reached, err)
	})
}

// directCall is a tools/call serveCalls answers itself.
type directCall struct {
	id   json.RawMessage
	name string
	args json.RawMessage
	// modern (2026-07-28): the result names the server, and says it is
	// complete when the tool ran.
	modern bool
}

// directVersions are the protocol versions whose plain tools/call
// serveCalls answers.
var directVersions = []string{"2025-06-18", "2025-11-25", statelessVersion}

// directCall reports whether r is a call serveCalls answers, and which.
func (s *Server) directCall(r *http.Request) (directCall, bool) {
	req := rpcRequestOf(r)
	version := r.Header.Get("MCP-Protocol-Version")
	if s.viaSDK || r.Method != http.MethodPost || req.Method != "tools/call" || req.JSONRPC != "2.0" ||
		callerFrom(r.Context()) == nil || !slices.Contains(directVersions, version) {
		return directCall{}, false
	}
	id, ok := plainID(req.ID)
	if !ok {
		return directCall{}, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(req.Params, &params) != nil {
		return directCall{}, false
	}
	var name string
	if json.Unmarshal(params["name"], &name) != nil || !tools.IsBuiltin(name) || !plainHeaders(r, version, "tools/call", name) {
		return directCall{}, false
	}
	for k, v := range params {
		switch {
		case k == "name" || k == "arguments":
		case k == "_meta" && version >= statelessVersion && plainMeta(v, version):
		default:
			return directCall{}, false
		}
	}
	if version >= statelessVersion && params["_meta"] == nil {
		return directCall{}, false
	}
	args := params["arguments"]
	if bytes.Equal(args, []byte("null")) {
		args = nil
	}
	return directCall{id: id, name: name, args: args, modern: version >= statelessVersion}, true
}

// plainHeaders reports whether r's headers are ones the go-sdk would take
// a request of method (naming name, for a call) with and do nothing more
// about.
func plainHeaders(r *http.Request, version, method, name string) bool {
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		return false
	}
	if !acceptsBoth(r.Header.Values("Accept")) || r.Header.Get("Last-Event-ID") != "" || ui.ReboundHost(r) {
		return false
	}
	for k := range r.Header {
		if strings.HasPrefix(k, "Mcp-Param-") {
			return false
		}
	}
	if version >= statelessVersion {
		// The 2026-07-28 standard headers must name the request in the body.
		return r.Header.Get("Mcp-Method") == method && r.Header.Get("Mcp-Name") == name
	}
	return true
}

// acceptsBoth: Accept names application/json and text/event-stream
// themselves (the go-sdk takes wildcards too; those go to it).
func acceptsBoth(values []string) bool {
	var js, sse bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				js = true
			case "text/event-stream":
				sse = true
			}
		}
	}
	return js && sse
}

// plainID returns a request id as the go-sdk writes it back: an integer
// as it is, a string re-encoded. Any other id goes to the go-sdk.
func plainID(raw json.RawMessage) (json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		b, err := json.Marshal(s)
		return b, err == nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return nil, false
	}
	return strconv.AppendInt(nil, n, 10), true
}

// plainMeta: a 2026-07-28 call's _meta holds only the protocol's own
// keys, with the version the header names.
func plainMeta(raw json.RawMessage, version string) bool {
	var meta map[string]json.RawMessage
	if json.Unmarshal(raw, &meta) != nil {
		return false
	}
	var v string
	if json.Unmarshal(meta[mcp.MetaKeyProtocolVersion], &v) != nil || v != version {
		return false
	}
	for k := range meta {
		switch k {
		case mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities:
		default:
			return false
		}
	}
	return true
}

// writeCallAnswer writes the JSON-RPC answer to call as the go-sdk's
// stateless, JSON-answering handler writes it. The go-sdk marks a result
// complete only when the tool's handler made it, not when the grant check
// or the approval gate (middleware) answered.
func writeCallAnswer(w http.ResponseWriter, call directCall, res *mcp.CallToolResult, reached bool, err error) {
	msg := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result,omitempty"`
		Error   *jsonrpc.Error  `json:"error,omitempty"`
	}{JSONRPC: "2.0", ID: call.id}
	if err == nil {
		if res.Content == nil {
			res.Content = []mcp.Content{}
		}
		if call.modern {
			res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: tools.Implementation()}
		}
		// The result's own MarshalJSON is json.Marshal's output: compact,
		// and escaped as json.Marshal escapes, which Marshal would only
		// compact once more for the result and again for the envelope.
		msg.Result, err = marshalResult(res)
		if err == nil && call.modern && reached {
			msg.Result = append(msg.Result[:len(msg.Result)-1], `,"resultType":"complete"}`...)
		}
	}
	var body []byte
	if err == nil && isScalarID(call.id) {
		body = append(make([]byte, 0, len(msg.Result)+48), `{"jsonrpc":"2.0","id":`...)
		body = append(append(append(body, call.id...), `,"result":`...), msg.Result...)
		body = append(body, '}')
	} else {
		if err != nil {
			msg.Result = nil
			msg.Error = wireError(err)
		}
		body, _ = json.Marshal(msg)
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	// With its length known the answer is not chunked: two writes to the
	// socket for a short read_events' 9 KB instead of three, one segment
	// less for the client to wake for. The go-sdk chunks; framing is not
	// part of the answer (TestDirectCallsAnswerAsTheSDK).
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// marshalResult is res.MarshalJSON(). A built-in tool's structured
// content is already compact JSON (tools.Marshalled), so it is
// marshalled as a one-byte stand-in and copied into its place after,
// instead of being checked and compacted again. The stand-in's member is
// found by its quoted name: in the content's text every quote is escaped,
// so the name cannot match there, and it is the last member named so.
func marshalResult(res *mcp.CallToolResult) ([]byte, error) {
	raw, ok := res.StructuredContent.(tools.Marshalled)
	if !ok {
		return res.MarshalJSON()
	}
	if b, ok := appendTextResult(nil, res, raw); ok {
		return b, nil
	}
	stand := *res
	stand.StructuredContent = json.RawMessage("0")
	b, err := stand.MarshalJSON()
	if err != nil {
		return nil, err
	}
	const member = `"structuredContent":0`
	i := bytes.LastIndex(b, []byte(member))
	if i < 0 || i+len(member) >= len(b) || (b[i+len(member)] != ',' && b[i+len(member)] != '}') {
		return res.MarshalJSON()
	}
	at := i + len(member) - 1
	out := make([]byte, 0, len(b)+len(raw))
	out = append(appendWire(append(out, b[:at]...), raw), b[at+1:]...)
	return out, nil
}

// appendWire writes a tool's structured content as json.Marshal would
// write it into the answer: the tools leave <, > and & as themselves (a
// model reads its text so), the go-sdk escapes them on the wire, and a
// direct answer is the go-sdk's to the byte.
func appendWire(b []byte, raw tools.Marshalled) []byte {
	if !bytes.ContainsAny(raw, "<>&") {
		return append(b, raw...)
	}
	buf := bytes.NewBuffer(b)
	json.HTMLEscape(buf, raw)
	return buf.Bytes()
}

// appendTextResult writes the result nearly every built-in tool's call
// has — its output as one plain text and as structured content, no
// error — as res.MarshalJSON() writes it, but with the text escaped once:
// the go-sdk's way compacts it twice more after (a tenth of a short
// read_events' CPU). Any other result is not written (false).
func appendTextResult(b []byte, res *mcp.CallToolResult, raw tools.Marshalled) ([]byte, bool) {
	if len(res.Content) != 1 {
		return nil, false
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok || text.Meta != nil || text.Annotations != nil || res.IsError ||
		res.InputRequests != nil || res.RequestState != "" {
		return nil, false
	}
	b = slices.Grow(b, 2*len(text.Text)+len(raw)+128)
	b = append(b, '{')
	if len(res.Meta) > 0 {
		meta, err := json.Marshal(res.Meta)
		if err != nil {
			return nil, false
		}
		b = append(append(append(b, `"_meta":`...), meta...), ',')
	}
	b = appendQuoted(append(b, `"content":[{"type":"text","text":`...), text.Text)
	b = append(appendWire(append(b, `}],"structuredContent":`...), raw), '}')
	return b, true
}

// appendQuoted writes s as json.Marshal quotes it. The text of a tool's
// answer is its JSON, in which only quotes, backslashes and the <, > and
// & it leaves as written need escaping again; a text with a control byte
// or one that starts a character beyond ASCII is marshalled.
func appendQuoted(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	for {
		i := strings.IndexAny(s, `"\<>&`)
		if i < 0 {
			break
		}
		b = append(b, s[:i]...)
		switch c := s[i]; c {
		case '"', '\\':
			b = append(b, '\\', c)
		default:
			b = append(append(b, `\u00`...), hexDigits[c>>4], hexDigits[c&0xf])
		}
		s = s[i+1:]
	}
	return append(append(b, s...), '"')
}

const hexDigits = "0123456789abcdef"

// isScalarID reports an id json.Marshal would copy as it is: a number or
// a string without characters it escapes, which is every id a client
// sends but a few.
func isScalarID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	for _, c := range id {
		if c < 0x20 || c >= 0x7f || c == '<' || c == '>' || c == '&' || c == '\\' || c == ' ' {
			return false
		}
	}
	return true
}

// wireError is err as the go-sdk puts a handler's error on the wire: a
// JSON-RPC error as it is, any other with its text.
func wireError(err error) *jsonrpc.Error {
	if e, ok := err.(*jsonrpc.Error); ok {
		return e
	}
	return &jsonrpc.Error{Message: err.Error()}
}

package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// This file is a strict decoder of MCP messages, written from the
// protocol's schema (2025-11-25 and 2026-07-28): every object the suite
// sees must hold its required fields and no field its type does not
// declare. _meta and schemas are open by the protocol, so they are not
// looked into.

const (
	v20251125 = "2025-11-25"
	v20260728 = "2026-07-28"
)

// shape is one protocol type: its fields, each with the shape of its value
// ("" for any JSON, "[]X" for an array of X), and those it requires.
type shape struct {
	fields   map[string]string
	required []string
}

// sh builds a shape from "field field:Type field:[]Type" and the required
// field names.
func sh(fields, required string) shape {
	s := shape{fields: map[string]string{}, required: strings.Fields(required)}
	for _, f := range strings.Fields(fields) {
		name, typ, _ := strings.Cut(f, ":")
		s.fields[name] = typ
	}
	return s
}

// taskFields are a 2025-11-25 Task's.
const (
	taskFields   = "taskId status statusMessage createdAt lastUpdatedAt ttl pollInterval"
	taskRequired = "taskId status createdAt lastUpdatedAt ttl"
)

// task26Fields are a Task's in the 2026-07-28 tasks extension.
const (
	task26Fields   = "taskId status statusMessage createdAt lastUpdatedAt ttlMs pollIntervalMs"
	task26Required = "taskId status createdAt lastUpdatedAt ttlMs"
)

// cacheable are the fields 2026-07-28 adds to results a client may cache.
const cacheable = " cacheScope:CacheScope ttlMs:TTL resultType:ResultType"

var shapes = map[string]map[string]shape{
	v20251125: {
		"Tool":                sh("_meta name title description inputSchema outputSchema annotations:ToolAnnotations icons execution", "name inputSchema"),
		"ServerCapabilities":  sh("completions experimental logging prompts resources tasks tools", ""),
		"InitializeResult":    sh("_meta capabilities:ServerCapabilities instructions protocolVersion serverInfo:Implementation", "capabilities protocolVersion serverInfo"),
		"EmptyResult":         sh("_meta", ""),
		"ListToolsResult":     sh("_meta nextCursor tools:[]Tool", "tools"),
		"CallToolResult":      sh("_meta content:[]Content isError structuredContent", "content"),
		"ReadResourceResult":  sh("_meta contents:[]TextResourceContents", "contents"),
		"ListPromptsResult":   sh("_meta nextCursor prompts:[]Prompt", "prompts"),
		"ListTemplatesResult": sh("_meta nextCursor resourceTemplates:[]ResourceTemplate", "resourceTemplates"),
		"CreateTaskResult":    sh("_meta task:Task", "task"),
		"Task":                sh(taskFields, taskRequired),
		"GetTaskResult":       sh("_meta "+taskFields, taskRequired),
		"ListTasksResult":     sh("_meta nextCursor tasks:[]Task", "tasks"),
	},
	v20260728: {
		"Tool":                sh("_meta name title description inputSchema outputSchema annotations:ToolAnnotations icons", "name inputSchema"),
		"ServerCapabilities":  sh("completions experimental extensions logging prompts resources tools", ""),
		"DiscoverResult":      sh("_meta capabilities:ServerCapabilities instructions supportedVersions"+cacheable, "cacheScope capabilities resultType supportedVersions ttlMs"),
		"ListToolsResult":     sh("_meta nextCursor tools:[]Tool"+cacheable, "cacheScope resultType tools ttlMs"),
		"CallToolResult":      sh("_meta content:[]Content isError structuredContent resultType:ResultType", "content resultType"),
		"ReadResourceResult":  sh("_meta contents:[]TextResourceContents"+cacheable, "cacheScope contents resultType ttlMs"),
		"ListPromptsResult":   sh("_meta nextCursor prompts:[]Prompt"+cacheable, "cacheScope prompts resultType ttlMs"),
		"ListTemplatesResult": sh("_meta nextCursor resourceTemplates:[]ResourceTemplate"+cacheable, "cacheScope resourceTemplates resultType ttlMs"),
		// The tasks extension (io.modelcontextprotocol/tasks).
		"CreateTaskResult": sh("_meta resultType:TaskResultType "+task26Fields, "resultType "+task26Required),
		"GetTaskResult":    sh("_meta resultType:ResultType result:CallToolResult error:Error inputRequests "+task26Fields, "resultType "+task26Required),
		"EmptyResult":      sh("_meta resultType:ResultType", "resultType"),
	},
}

// common shapes are the same in both versions.
var common = map[string]shape{
	"Request":              sh("jsonrpc id method params", "jsonrpc id method"),
	"Notification":         sh("jsonrpc method params", "jsonrpc method"),
	"ResultResponse":       sh("jsonrpc id result", "jsonrpc id result"),
	"ErrorResponse":        sh("jsonrpc id error:Error", "jsonrpc error"),
	"Error":                sh("code message data", "code message"),
	"Implementation":       sh("name title version description icons websiteUrl", "name version"),
	"ToolAnnotations":      sh("title readOnlyHint destructiveHint idempotentHint openWorldHint", ""),
	"TextContent":          sh("_meta type text annotations", "type text"),
	"ResourceLink":         sh("_meta type uri name title description mimeType size annotations icons", "type uri name"),
	"TextResourceContents": sh("_meta uri mimeType text", "uri text"),
	"Prompt":               sh("_meta name title description arguments:[]PromptArgument icons", "name"),
	"PromptArgument":       sh("name title description required", "name"),
	"ResourceTemplate":     sh("_meta uriTemplate name title description mimeType annotations icons", "uriTemplate name"),
}

// resultShapes names the result type of each method per version; a method
// missing here is not one the suite expects an answer to.
var resultShapes = map[string]map[string]string{
	v20251125: {"initialize": "InitializeResult", "ping": "EmptyResult", "tools/list": "ListToolsResult", "tools/call": "CallToolResult",
		"resources/read": "ReadResourceResult", "prompts/list": "ListPromptsResult", "resources/templates/list": "ListTemplatesResult",
		"tasks/get": "GetTaskResult", "tasks/cancel": "GetTaskResult", "tasks/list": "ListTasksResult", "tasks/result": "CallToolResult"},
	v20260728: {"server/discover": "DiscoverResult", "tools/list": "ListToolsResult", "tools/call": "CallToolResult",
		"tasks/get": "GetTaskResult", "tasks/cancel": "EmptyResult", "tasks/update": "EmptyResult",
		"resources/read": "ReadResourceResult", "prompts/list": "ListPromptsResult", "resources/templates/list": "ListTemplatesResult"},
}

// check decodes v strictly as the named type of version.
func check(version, typ string, v json.RawMessage, path string) error {
	if elem, ok := strings.CutPrefix(typ, "[]"); ok {
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return fmt.Errorf("%s: want an array of %s: %v", path, elem, err)
		}
		for i, it := range items {
			if err := check(version, elem, it, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	switch typ {
	case "":
		return nil
	case "Content":
		var c struct{ Type string }
		if err := json.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		kinds := map[string]string{"text": "TextContent", "resource_link": "ResourceLink"}
		if kinds[c.Type] == "" {
			return fmt.Errorf("%s: content type %q is not one this server sends", path, c.Type)
		}
		return check(version, kinds[c.Type], v, path)
	case "CacheScope":
		if s := string(v); s != `"private"` && s != `"public"` {
			return fmt.Errorf("%s: cacheScope %s, want private or public", path, s)
		}
		return nil
	case "TTL":
		var n int64
		if err := json.Unmarshal(v, &n); err != nil || n < 0 {
			return fmt.Errorf("%s: ttlMs %s is not a non-negative integer", path, v)
		}
		return nil
	case "ResultType":
		if string(v) != `"complete"` {
			return fmt.Errorf("%s: resultType %s, want complete", path, v)
		}
		return nil
	case "TaskResultType":
		if string(v) != `"task"` {
			return fmt.Errorf("%s: resultType %s, want task", path, v)
		}
		return nil
	}
	s, ok := shapes[version][typ]
	if !ok {
		if s, ok = common[typ]; !ok {
			return fmt.Errorf("%s: no shape %s in %s", path, typ, version)
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(v, &obj); err != nil || obj == nil {
		return fmt.Errorf("%s: want a %s object, got %.80s", path, typ, v)
	}
	for _, f := range s.required {
		if _, ok := obj[f]; !ok {
			return fmt.Errorf("%s: %s lacks required field %q: %.200s", path, typ, f, v)
		}
	}
	for f, fv := range obj {
		ft, ok := s.fields[f]
		if !ok {
			return fmt.Errorf("%s: %s has field %q, which %s does not declare", path, typ, f, version)
		}
		if err := check(version, ft, fv, path+"."+f); err != nil {
			return err
		}
	}
	return nil
}

// message is one JSON-RPC message: its kind (the envelope shape) and the
// fields the checks need.
type message struct {
	kind   string
	raw    json.RawMessage
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
		Data    json.RawMessage
	}
}

func decodeMessage(raw []byte) (message, error) {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("not a JSON-RPC message: %v: %.120s", err, raw)
	}
	m.raw = raw
	var top map[string]json.RawMessage
	_ = json.Unmarshal(raw, &top)
	switch _, hasID := top["id"]; {
	case m.Method != "" && hasID:
		m.kind = "Request"
	case m.Method != "":
		m.kind = "Notification"
	case top["error"] != nil:
		m.kind = "ErrorResponse"
	default:
		m.kind = "ResultResponse"
	}
	if string(top["jsonrpc"]) != `"2.0"` {
		return m, fmt.Errorf("jsonrpc is %s, want \"2.0\": %.120s", top["jsonrpc"], raw)
	}
	return m, check("", m.kind, raw, m.kind)
}

// exchange is one HTTP request and its answer as the suite saw them.
type exchange struct {
	method, path string
	reqHeader    http.Header
	reqBody      []byte
	status       int
	respHeader   http.Header
	respBody     []byte
}

// wire records every exchange of a client and checks each strictly.
type wire struct {
	mu  sync.Mutex
	log []exchange
}

// RoundTrip records the exchange; the client gets the response unchanged.
func (w *wire) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	w.mu.Lock()
	w.log = append(w.log, exchange{r.Method, r.URL.Path, r.Header.Clone(), body, resp.StatusCode, resp.Header.Clone(), respBody})
	w.mu.Unlock()
	return resp, nil
}

// verify checks every recorded exchange against version and returns the
// methods the client called, in order.
func (w *wire) verify(t *testing.T, version string) []string {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var methods []string
	for i, x := range w.log {
		method, err := checkExchange(version, x)
		if err != nil {
			t.Errorf("exchange %d (%s %s → %d): %v", i, x.method, x.path, x.status, err)
		}
		if method != "" {
			methods = append(methods, method)
		}
	}
	return methods
}

// checkExchange checks one exchange: the request, then each answer
// against the result type of the method it answers.
func checkExchange(version string, x exchange) (string, error) {
	if x.method != http.MethodPost {
		return "", nil
	}
	req, err := decodeMessage(x.reqBody)
	if err != nil {
		return "", fmt.Errorf("request: %w", err)
	}
	return req.Method, checkAnswer(version, req, x)
}

func checkAnswer(version string, req message, x exchange) error {
	if version == v20260728 {
		if err := checkStateless(req, x); err != nil {
			return err
		}
	}
	if req.kind == "Notification" {
		if x.status != http.StatusAccepted || len(bytes.TrimSpace(x.respBody)) > 0 {
			return fmt.Errorf("notification %s answered %d %q, want 202 and no body", req.Method, x.status, x.respBody)
		}
		return nil
	}
	answers, err := responseMessages(x)
	if err != nil {
		return err
	}
	for _, a := range answers {
		resp, err := decodeMessage(a)
		if err != nil {
			return fmt.Errorf("answer to %s: %w", req.Method, err)
		}
		if resp.kind == "Notification" {
			continue
		}
		if !bytes.Equal(resp.ID, req.ID) {
			return fmt.Errorf("answer id %s to request id %s", resp.ID, req.ID)
		}
		if resp.kind == "ErrorResponse" {
			continue
		}
		typ, ok := resultShapes[version][req.Method]
		if req.Method == "tools/call" && (bytes.Contains(req.Params, []byte(`"task":`)) || bytes.Contains(resp.Result, []byte(`"resultType":"task"`))) {
			typ = "CreateTaskResult" // a call answered with a task
		}
		if !ok {
			return fmt.Errorf("a result to %s, which %s has no result for", req.Method, version)
		}
		if err := check(version, typ, resp.Result, req.Method); err != nil {
			return err
		}
	}
	return nil
}

// checkStateless checks what 2026-07-28 asks of every request and answer
// over HTTP: the version in _meta and in MCP-Protocol-Version, the client's
// capabilities, and no session.
func checkStateless(req message, x exchange) error {
	if req.kind != "Request" {
		return nil
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Meta == nil {
		return fmt.Errorf("%s request has no params._meta", req.Method)
	}
	var ver string
	_ = json.Unmarshal(p.Meta["io.modelcontextprotocol/protocolVersion"], &ver)
	if h := x.reqHeader.Get("MCP-Protocol-Version"); ver == "" || h != ver {
		return fmt.Errorf("%s request: _meta version %q, header %q", req.Method, ver, h)
	}
	if _, ok := p.Meta["io.modelcontextprotocol/clientCapabilities"]; !ok {
		return fmt.Errorf("%s request lacks clientCapabilities in _meta", req.Method)
	}
	if id := x.respHeader.Get("Mcp-Session-Id"); id != "" {
		return fmt.Errorf("%s answered with session %q; 2026-07-28 has no sessions", req.Method, id)
	}
	return nil
}

// responseMessages splits an HTTP answer into its JSON-RPC messages: one
// JSON body, or the data of each server-sent event.
func responseMessages(x exchange) ([][]byte, error) {
	ct := x.respHeader.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/json"):
		return [][]byte{x.respBody}, nil
	case strings.HasPrefix(ct, "text/event-stream"):
		var out [][]byte
		sc := bufio.NewScanner(bytes.NewReader(x.respBody))
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				out = append(out, []byte(strings.TrimSpace(data)))
			}
		}
		return out, sc.Err()
	}
	return nil, fmt.Errorf("answer %d with Content-Type %q: %.120s", x.status, ct, x.respBody)
}

// TestStrictDecoder: the decoder refuses what the protocol does not allow,
// so a passing suite means something.
func TestStrictDecoder(t *testing.T) {
	cases := []struct {
		name, version, typ, json, wantErr string
	}{
		{"a tools/list result", v20251125, "ListToolsResult", `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`, ""},
		{"an unknown top-level field", v20251125, "ListToolsResult", `{"tools":[],"extra":1}`, `has field "extra"`},
		{"a missing required field", v20251125, "ListToolsResult", `{}`, `lacks required field "tools"`},
		{"a nested unknown field", v20251125, "ListToolsResult", `{"tools":[{"name":"a","inputSchema":{},"bogus":true}]}`, `tools[0]: Tool has field "bogus"`},
		{"2026 needs cache fields", v20260728, "ListToolsResult", `{"tools":[],"resultType":"complete"}`, `lacks required field "cacheScope"`},
		{"a bad cache scope", v20260728, "ListToolsResult", `{"tools":[],"resultType":"complete","ttlMs":0,"cacheScope":"shared"}`, "cacheScope"},
		{"2025 has no resultType", v20251125, "CallToolResult", `{"content":[],"resultType":"complete"}`, `has field "resultType"`},
		{"an unknown content type", v20260728, "CallToolResult", `{"content":[{"type":"video"}],"resultType":"complete"}`, `content type "video"`},
		{"an error response", "", "ErrorResponse", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`, ""},
		{"an error without a message", "", "ErrorResponse", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601}}`, `lacks required field "message"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := check(c.version, c.typ, json.RawMessage(c.json), c.typ)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("check = %v, want %q", err, c.wantErr)
			}
		})
	}
	if _, err := decodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":{},"extra":1}`)); err == nil {
		t.Error("a response with an unknown top-level field passed")
	}
	if _, err := decodeMessage([]byte(`{"jsonrpc":"1.0","id":1,"result":{}}`)); err == nil {
		t.Error("jsonrpc 1.0 passed")
	}
}

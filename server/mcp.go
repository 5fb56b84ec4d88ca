package server

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/tools"
)

// workerServer returns the MCP server for the authenticated worker, holding
// exactly the tools it has live grants for, listing them as its catalog
// shows them.
func (s *Server) workerServer(r *http.Request) *mcp.Server {
	c := callerFrom(r.Context())
	if c == nil {
		return nil
	}
	c.readLimits()
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.cachedLocked(c)
	if key := catalogKey(c); cs.srv == nil || cs.catalog != key {
		env := *cs.env
		env.Catalog = s.catalogs.get(s, c).cat
		cs.srv, cs.catalog = tools.NewServer(&env, c.granted), key
		if s.cfg.Metrics != nil {
			cs.srv.AddReceivingMiddleware(countToolCalls(s.cfg.Metrics, cs.env.Known))
		}
	}
	return cs.srv
}

// callerEnv returns what the caller's tools work with, kept while its
// grants, run and skills stay as they are.
func (s *Server) callerEnv(c *caller) *tools.Env {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cachedLocked(c).env
}

// cachedLocked returns the caller's cache entry, new when its grants, run
// or skills changed; the MCP server in it is built when first asked for.
func (s *Server) cachedLocked(c *caller) *cachedServer {
	key := strings.Join(c.granted, ",") + "|" + strings.Join(c.held, ",") + "|" + c.activation + "|" + tools.SkillsKey(c.skills) + "|" + tools.OutsideKey(c.outside)
	if cs, ok := s.servers[c.worker]; ok && cs.key == key {
		return cs
	}
	cs := &cachedServer{key: key, env: s.env(c)}
	s.servers[c.worker] = cs
	return cs
}

// env is what the caller's tools work with.
func (s *Server) env(c *caller) *tools.Env {
	held := c.held
	return &tools.Env{Store: s.store, Root: s.cfg.Root, Caller: c.worker, Known: tools.KnownTools(c.skills, c.outside), ActivationID: c.activation,
		Skills: s.cfg.Skills, SkillDefs: c.skills, Outside: s.cfg.Outside, OutsideTools: c.outside, Logger: s.cfg.Logger.With("component", "tools"), Draining: s.draining,
		ApprovalRequired: func(tool string) bool { return slices.Contains(held, tool) }}
}

// statelessVersion is the first protocol version whose results carry the
// cache fields ttlMs and cacheScope, and that has no core tasks.
const statelessVersion = "2026-07-28"

// fitAnswers completes what the go-sdk answers with what this server adds
// and the SDK does not know. To clients of versions before 2026-07-28 it
// removes the cache fields the SDK sets on every list and read result,
// which those versions do not declare (the conformance suite decodes
// strictly), declares the tasks serveTasks offers in initialize, and marks
// the long tools in tools/list. To 2026-07-28 clients it declares the
// tasks extension in server/discover. Earlier clients send their version
// in MCP-Protocol-Version, or nothing before it is negotiated; an answer
// is one JSON body (JSONResponse).
func fitAnswers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := rpcRequestOf(r)
		modern := r.Header.Get("MCP-Protocol-Version") >= statelessVersion
		if r.Method != http.MethodPost || !slices.Contains(fitted[modern], req.Method) {
			next.ServeHTTP(w, r)
			return
		}
		buf := &bufferedResponse{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(buf, r)
		answer := buf.body.Bytes()
		if strings.HasPrefix(buf.header.Get("Content-Type"), "application/json") {
			if fitted, ok := fitAnswer(modern, req.Method, answer); ok {
				answer = fitted
				buf.header.Del("Content-Length")
			}
		}
		maps.Copy(w.Header(), buf.header)
		w.WriteHeader(buf.status)
		w.Write(answer)
	})
}

// fitted are the methods whose answers fitAnswers looks at, for modern
// (2026-07-28) clients and for earlier ones: those that declare
// capabilities or tools, and those whose results carry cache fields.
var fitted = map[bool][]string{
	true:  {"server/discover"},
	false: {"initialize", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"},
}

// taskTools are the tools whose calls take long enough to be worth a task:
// at 2026-07-28 the server makes their calls tasks for a client that
// declares the extension; at 2025-11-25 tools/list marks them, though a
// client may ask for any built-in tool's call as a task (skill_<name>
// tools, served by the SDK alone, not: use call_skill).
var taskTools = []string{"create_skill", "call_skill", "rollback_skill"}

// fitAnswer rewrites one JSON-RPC answer to method; ok is false when
// nothing needed changing or it could not be read.
func fitAnswer(modern bool, method string, body []byte) ([]byte, bool) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || msg["result"] == nil {
		return nil, false
	}
	result, ok := fitResult(modern, method, msg["result"])
	if !ok {
		return nil, false
	}
	msg["result"] = result
	b, err := json.Marshal(msg)
	return b, err == nil
}

// fitResult is fitAnswer on the result alone.
func fitResult(modern bool, method string, raw json.RawMessage) (json.RawMessage, bool) {
	var result map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers pass through exactly
	if dec.Decode(&result) != nil {
		return nil, false
	}
	caps, _ := result["capabilities"].(map[string]any)
	switch {
	case modern && caps != nil: // server/discover
		ext, _ := caps["extensions"].(map[string]any)
		if ext == nil {
			ext = map[string]any{}
		}
		ext[tasksExtension] = map[string]any{}
		caps["extensions"] = ext
	case modern:
		return nil, false
	case method == "initialize" && caps != nil:
		caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
			"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	case method == "tools/list":
		tools, _ := result["tools"].([]any)
		for _, t := range tools {
			if t, ok := t.(map[string]any); ok {
				if name, _ := t["name"].(string); slices.Contains(taskTools, name) {
					t["execution"] = map[string]any{"taskSupport": "optional"}
				}
			}
		}
	}
	if !modern {
		delete(result, "ttlMs")
		delete(result, "cacheScope")
	}
	b, err := json.Marshal(result)
	return b, err == nil
}

// bufferedResponse holds an answer until it has been looked at.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) WriteHeader(status int)      { b.status = status }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }

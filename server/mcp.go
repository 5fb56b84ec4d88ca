package server

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/tools"
)

// workerServer returns the MCP server for the authenticated worker, holding
// exactly the tools it has live grants for.
func (s *Server) workerServer(r *http.Request) *mcp.Server {
	c := callerFrom(r.Context())
	if c == nil {
		return nil
	}
	skills := c.skills
	key := strings.Join(c.granted, ",") + "|" + c.activation + "|" + tools.SkillsKey(skills)
	s.mu.Lock()
	defer s.mu.Unlock()
	if cs, ok := s.servers[c.worker]; ok && cs.key == key {
		return cs.srv
	}
	srv := tools.NewServer(s.env(c), c.granted)
	s.servers[c.worker] = cachedServer{key: key, srv: srv}
	return srv
}

// env is what the caller's tools work with.
func (s *Server) env(c *caller) *tools.Env {
	return &tools.Env{Store: s.store, Caller: c.worker, Known: tools.KnownTools(c.skills), ActivationID: c.activation,
		Skills: s.cfg.Skills, SkillDefs: c.skills}
}

// statelessVersion is the first protocol version whose results carry the
// cache fields ttlMs and cacheScope, and that has no core tasks.
const statelessVersion = "2026-07-28"

// legacyResults fits answers to clients of earlier versions to their
// protocol: it removes the cache fields the go-sdk sets on every list and
// read result, which those versions do not declare (the conformance suite
// decodes strictly), and declares the tasks serveTasks offers, which the
// SDK does not know. Those clients send their version in
// MCP-Protocol-Version, or nothing before it is negotiated; the answer is
// one JSON body (JSONResponse).
func legacyResults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("MCP-Protocol-Version"); r.Method != http.MethodPost || v >= statelessVersion {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req rpcRequest
		_ = json.Unmarshal(body, &req)
		buf := &bufferedResponse{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(buf, r)
		answer := buf.body.Bytes()
		if strings.HasPrefix(buf.header.Get("Content-Type"), "application/json") {
			if fitted, ok := legacyAnswer(req.Method, answer); ok {
				answer = fitted
				buf.header.Del("Content-Length")
			}
		}
		maps.Copy(w.Header(), buf.header)
		w.WriteHeader(buf.status)
		w.Write(answer)
	})
}

// taskTools are the tools whose calls take long enough to be worth a task;
// tools/list marks them so. Any built-in tool may be called as a task;
// skill_<name> tools, served by the SDK alone, may not (use call_skill).
var taskTools = []string{"create_skill", "call_skill", "rollback_skill"}

// legacyAnswer rewrites one JSON-RPC answer to method; ok is false when
// nothing needed changing or it could not be read.
func legacyAnswer(method string, body []byte) ([]byte, bool) {
	if method != "initialize" && method != "tools/list" && !bytes.Contains(body, []byte(`"ttlMs"`)) {
		return nil, false
	}
	var msg map[string]json.RawMessage
	var result map[string]any
	if json.Unmarshal(body, &msg) != nil || msg["result"] == nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(msg["result"]))
	dec.UseNumber() // numbers pass through exactly
	if dec.Decode(&result) != nil {
		return nil, false
	}
	delete(result, "ttlMs")
	delete(result, "cacheScope")
	switch method {
	case "initialize":
		if caps, ok := result["capabilities"].(map[string]any); ok {
			caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
				"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
		}
	case "tools/list":
		tools, _ := result["tools"].([]any)
		for _, t := range tools {
			if t, ok := t.(map[string]any); ok {
				if name, _ := t["name"].(string); slices.Contains(taskTools, name) {
					t["execution"] = map[string]any{"taskSupport": "optional"}
				}
			}
		}
	}
	b, err := json.Marshal(result)
	if err != nil {
		return nil, false
	}
	msg["result"] = b
	if b, err = json.Marshal(msg); err != nil {
		return nil, false
	}
	return b, true
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

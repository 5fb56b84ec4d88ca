package server

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
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
	env := &tools.Env{Store: s.store, Caller: c.worker, Known: tools.KnownTools(skills), ActivationID: c.activation,
		Skills: s.cfg.Skills, SkillDefs: skills}
	srv := tools.NewServer(env, c.granted)
	s.servers[c.worker] = cachedServer{key: key, srv: srv}
	return srv
}

// statelessVersion is the first protocol version whose results carry the
// cache fields ttlMs and cacheScope.
const statelessVersion = "2026-07-28"

// legacyResults removes the cache fields the go-sdk sets on every list and
// read result from the answers to clients of earlier versions, whose
// protocol does not declare them (the conformance suite decodes strictly).
// Those clients send their version in MCP-Protocol-Version, or nothing
// before it is negotiated; the answer is one JSON body (JSONResponse).
func legacyResults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("MCP-Protocol-Version"); r.Method != http.MethodPost || v >= statelessVersion {
			next.ServeHTTP(w, r)
			return
		}
		buf := &bufferedResponse{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(buf, r)
		body := buf.body.Bytes()
		if strings.HasPrefix(buf.header.Get("Content-Type"), "application/json") && bytes.Contains(body, []byte(`"ttlMs"`)) {
			body = withoutCacheFields(body)
			buf.header.Del("Content-Length")
		}
		maps.Copy(w.Header(), buf.header)
		w.WriteHeader(buf.status)
		w.Write(body)
	})
}

// withoutCacheFields drops ttlMs and cacheScope from a JSON-RPC response's
// result, leaving anything it cannot read as it was.
func withoutCacheFields(body []byte) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || msg["result"] == nil {
		return body
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(msg["result"], &result) != nil {
		return body
	}
	delete(result, "ttlMs")
	delete(result, "cacheScope")
	b, err := json.Marshal(result)
	if err != nil {
		return body
	}
	msg["result"] = b
	if b, err = json.Marshal(msg); err != nil {
		return body
	}
	return b
}

// bufferedResponse holds an answer until legacyResults has looked at it.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) WriteHeader(status int)      { b.status = status }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }

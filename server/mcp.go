package server

import (
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
	if s.cfg.Metrics != nil {
		srv.AddReceivingMiddleware(countToolCalls(s.cfg.Metrics, env.Known))
	}
	s.servers[c.worker] = cachedServer{key: key, srv: srv}
	return srv
}

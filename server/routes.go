package server

import "net/http"

func (s *Server) routes() {
	cop := http.NewCrossOriginProtection()
	mcpHandler := cop.Handler(s.authenticate(s.mcp))
	s.mux.Handle("POST /workers/{id}/mcp", mcpHandler)
	s.mux.Handle("GET /workers/{id}/mcp", mcpHandler)
	s.mux.Handle("DELETE /workers/{id}/mcp", mcpHandler)
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	for _, r := range s.cfg.Routes {
		s.mux.Handle(r.Pattern, r.Handler)
	}
}

package server

import "net/http"

func (s *Server) routes() {
	cop := http.NewCrossOriginProtection()
	mcpHandler := cop.Handler(s.authenticate(refuseBatches(s.cfg.MaxRequestBytes, refuseMalformed(s.cfg.MaxRequestBytes, s.serveTasks(s.serveCalls(s.serveLists(answerUnhandled(fitAnswers(s.mcp)))))))))
	s.mux.Handle("POST /workers/{id}/mcp", mcpHandler)
	s.mux.Handle("GET /workers/{id}/mcp", mcpHandler)
	s.mux.Handle("DELETE /workers/{id}/mcp", mcpHandler)
	// Model calls of activations, with the provider key added here.
	for pattern, h := range s.relay.Routes() {
		s.mux.Handle(pattern, cop.Handler(h))
	}
	// MCP clients that log in: metadata, registration and tokens (the
	// consent page is the UI's).
	for pattern, h := range s.oauth.Routes() {
		s.mux.Handle(pattern, h)
	}
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	s.mux.HandleFunc("GET /readyz", s.handleReady)
	if s.cfg.Metrics != nil {
		s.mux.HandleFunc("GET /metrics", s.handleMetrics)
	}
	// The web UI (server/ui): its pages live under /ui/; / sends a browser there.
	s.mux.Handle("/ui/", s.ui)
	s.mux.Handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusFound))
	for _, r := range s.cfg.Routes {
		s.mux.Handle(r.Pattern, r.Handler)
	}
}

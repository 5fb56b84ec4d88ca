package server

import (
	"context"
	"net/http"
	"time"
)

// readyTimeout bounds /readyz's write: a database that cannot take one
// small write in this long is not ready.
const readyTimeout = 2 * time.Second

// handleHealth answers while the process serves HTTP: liveness, touching
// nothing else, so a busy database never gets the server restarted.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReady answers 200 when the server can do its work: the database
// takes a write and the dispatcher runs (it stops at shutdown, so a load
// balancer drains this instance first). Otherwise 503, naming what fails.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	checks, ready := map[string]string{"database": "ok"}, true
	if err := s.store.CheckWritable(ctx); err != nil {
		checks["database"], ready = err.Error(), false
	}
	if s.cfg.Dispatching != nil {
		checks["dispatcher"] = "ok"
		if !s.cfg.Dispatching() {
			checks["dispatcher"], ready = "not running", false
		}
	}
	if !ready {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "checks": checks})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "checks": checks})
}

package server

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/helixml/helix-org/transports/inbound"
)

// writeError writes {"error": …}, logging 5xx once here and nowhere else.
// The status comes from the one mapping every transport uses too; a 503
// of a database that cannot take the request says why, with Retry-After.
func writeError(w http.ResponseWriter, log *slog.Logger, err error) {
	code := inbound.Status(err)
	msg := err.Error()
	if cause, ok := inbound.Unavailable(w, err); ok {
		log.Error("request failed", "err", err, "cause", cause)
	} else if code >= 500 {
		log.Error("request failed", "err", err)
		msg = http.StatusText(code)
	}
	writeJSON(w, code, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

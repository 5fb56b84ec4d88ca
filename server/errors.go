package server

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/helixml/helix-org/domain"
)

// Status maps an error to its HTTP status. Exported so transports answer
// the same way.
func Status(err error) int {
	switch {
	case errors.Is(err, domain.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, domain.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, domain.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, domain.ErrForbidden):
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

// writeError writes {"error": …}, logging 5xx once here and nowhere else.
func writeError(w http.ResponseWriter, log *slog.Logger, err error) {
	code := Status(err)
	msg := err.Error()
	if code >= 500 {
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

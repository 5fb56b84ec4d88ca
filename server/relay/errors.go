package relay

import (
	"encoding/json"
	"net/http"

	"github.com/helixml/helix-org/domain"
)

// fail answers in the wire format's own error shape (the Responses API's
// is Chat Completions'), so the agent's client library shows the message
// (and retries only what it should: 4xx are final, 5xx retried).
func fail(w http.ResponseWriter, format string, status int, msg string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="helix-org"`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	switch format {
	case domain.RelayAnthropic:
		json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(status), "message": msg}})
		return
	case domain.RelayGemini:
		json.NewEncoder(w).Encode(geminiError(status, msg))
		return
	}
	kind := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		kind = "rate_limit_exceeded"
	case status >= 500:
		kind = "server_error"
	}
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": kind, "code": nil}})
}

func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

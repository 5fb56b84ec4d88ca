// Package inbound is the HTTP plumbing every inbound transport handler
// shares: a size-capped body read and JSON answers that keep the detail of
// server faults out of the response (strangers send these requests).
package inbound

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
)

// ErrRead marks every ReadBody error, so a handler that maps other errors
// to statuses can send these to ReadStatus.
var ErrRead = errors.New("read body")

// ReadBody reads at most limit bytes, refusing a declared larger body
// before reading any of it.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, fmt.Errorf("%w: %w", ErrRead, &http.MaxBytesError{Limit: limit})
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRead, err)
	}
	return b, nil
}

// ReadStatus is the status for a ReadBody error: 413 for a body over the
// limit, else 400 (the client broke off or sent garbage).
func ReadStatus(err error) int {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// Fail answers {"error": …} with code. A 5xx is logged once, as what
// failed, and answered with only its status text; a refusal is logged at
// warn level with its reason, which is also the answer.
func Fail(log *slog.Logger, what string, w http.ResponseWriter, code int, err error) {
	msg := err.Error()
	if code >= 500 {
		log.Error(what+" failed", "err", err)
		msg = http.StatusText(code)
	} else {
		log.Warn(what+" refused", "status", code, "reason", msg)
	}
	WriteJSON(w, code, map[string]string{"error": msg})
}

// WriteJSON answers v as JSON with code.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// Package inbound is the one shape of every transport's inbound side: an
// Endpoint (check the headers, read the body under a byte budget while
// verifying it, parse it into messages, store them in one call, answer),
// the one mapping of errors to statuses that the server shares, and JSON
// answers that keep the detail of server faults out of the response
// (strangers send these requests).
package inbound

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// ErrRead marks every read error, so a handler that maps other errors to
// statuses can send these to ReadStatus.
var ErrRead = errors.New("read body")

// ErrBusy is wrapped when the shared budget has no room for a body: the
// request is answered 503 with Retry-After before its body is read.
var ErrBusy = errors.New("too many request bodies in flight")

// RetryAfter is the Retry-After, in seconds, sent with a busy 503.
const RetryAfter = "10"

// ReadStatus is the status for a read error: 413 for a body over the
// limit, 503 when the budget is exhausted, else 400 (the client broke off
// or sent garbage).
func ReadStatus(err error) int {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return http.StatusRequestEntityTooLarge
	}
	if errors.Is(err, ErrBusy) {
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest
}

// Fail answers {"error": …} with code. A 5xx is logged once, as what
// failed, and answered with only its status text; a refusal is logged at
// warn level with its reason, which is also the answer. A busy refusal
// (ErrBusy) is not a fault: it says so and when to retry. Nor is a
// database that cannot take the request for now (domain.ErrUnavailable):
// logged as a failure, it answers its reason and when to retry.
func Fail(log *slog.Logger, what string, w http.ResponseWriter, code int, err error) {
	msg := err.Error()
	if ae, ok := errors.AsType[*AuthError](err); ok && ae.Challenge != "" {
		w.Header().Set("WWW-Authenticate", ae.Challenge)
	}
	if cause, ok := Unavailable(w, err); ok {
		log.Error(what+" failed", "err", err, "cause", cause)
		WriteJSON(w, code, map[string]string{"error": msg})
		return
	}
	switch {
	case errors.Is(err, ErrBusy):
		w.Header().Set("Retry-After", RetryAfter)
		log.Warn(what+" refused", "status", code, "reason", msg)
	case code >= 500:
		log.Error(what+" failed", "err", err)
		msg = http.StatusText(code)
	default:
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

func readErr(err error) error { return fmt.Errorf("%w: %w", ErrRead, err) }

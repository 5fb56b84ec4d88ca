package inbound

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/helixml/helix-org/domain"
)

// ErrUnauthorized is wrapped by every refusal of a request's credentials:
// a missing or wrong signature, secret token or basic auth (401).
var ErrUnauthorized = errors.New("unauthorized")

// ErrUnsupported is wrapped when a body is of a kind a transport cannot
// store (415).
var ErrUnsupported = errors.New("unsupported body")

// AuthError is a 401 that asks for credentials: Challenge, when set, is
// sent as WWW-Authenticate.
type AuthError struct {
	Challenge string
	Err       error
}

func (e *AuthError) Error() string { return e.Err.Error() }
func (e *AuthError) Unwrap() []error {
	return []error{e.Err, ErrUnauthorized}
}

// Unauthorized is a refusal of credentials, with a challenge when the
// sender should be asked for them (basic auth).
func Unauthorized(challenge, format string, args ...any) error {
	return &AuthError{Challenge: challenge, Err: fmt.Errorf(format, args...)}
}

// Status is the one mapping of errors to HTTP statuses, for the server and
// every transport: read errors (413, 503, 400), a database that cannot
// take the request for now (503), credentials (401), bodies of the wrong
// kind (415), then the domain's sentinels, of which an archived stream's
// refusal is 410 Gone; anything else is a fault of ours (500).
func Status(err error) int {
	switch {
	case errors.Is(err, ErrRead), errors.Is(err, ErrBusy):
		return ReadStatus(err)
	case errors.Is(err, domain.ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, ErrUnauthorized):
		return http.StatusUnauthorized
	case errors.Is(err, ErrUnsupported):
		return http.StatusUnsupportedMediaType
	case errors.Is(err, domain.ErrGone):
		// Before ErrInvalid, which it also is: a sender stops at a 410.
		return http.StatusGone
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

// Malformed marks a parse error as the sender's (400), keeping its text.
func Malformed(err error) error {
	if err == nil || errors.Is(err, domain.ErrInvalid) {
		return err
	}
	return malformed{err}
}

type malformed struct{ error }

func (m malformed) Unwrap() []error { return []error{m.error, domain.ErrInvalid} }

// Unavailable reports whether err is domain.ErrUnavailable, and if so sets
// Retry-After on w: such a 503 answers with its reason, which is no
// internal detail (the disk is full, the database cannot be reached), and
// says when to retry. Its cause, the driver's error, is for the log.
func Unavailable(w http.ResponseWriter, err error) (cause error, ok bool) {
	if !errors.Is(err, domain.ErrUnavailable) {
		return nil, false
	}
	w.Header().Set("Retry-After", RetryAfter)
	if ue, ok := errors.AsType[*domain.UnavailableError](err); ok {
		return ue.Err, true
	}
	return err, true
}

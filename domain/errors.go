package domain

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Callers match them with errors.Is; the server maps them to
// HTTP statuses and MCP tool errors.
var (
	ErrNotFound  = errors.New("not found")
	ErrConflict  = errors.New("conflict")
	ErrInvalid   = errors.New("invalid input")
	ErrForbidden = errors.New("forbidden")
	// ErrUnavailable is a failure that is no fault of the request and
	// passes: the database's disk is full, or the database cannot be
	// reached. HTTP answers 503 with the reason and Retry-After; over MCP
	// it is a tool error saying so, and the client may retry.
	ErrUnavailable = errors.New("temporarily unavailable")
	// ErrGone is a request to what was archived: it is kept, and takes
	// nothing new. HTTP answers 410 Gone, so that a sender stops.
	ErrGone = errors.New("gone")
)

// UnavailableError is ErrUnavailable with its reason, in words for the
// client; Err, the driver's error, is for the server's log.
type UnavailableError struct {
	Reason string
	Err    error
}

func (e *UnavailableError) Error() string {
	return "temporarily unavailable: " + e.Reason + "; retry in a few seconds"
}

func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// FieldError is a validation failure tied to one input field.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Unwrap lets errors.Is(err, ErrInvalid) match every FieldError.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Invalid builds a FieldError with a formatted message.
func Invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// goneError is an ErrInvalid of a field naming what was archived, which
// errors.Is matches as ErrGone too.
type goneError struct{ FieldError }

func (e *goneError) Unwrap() []error { return []error{ErrInvalid, ErrGone} }

// KindError is an error of a sentinel kind (ErrConflict…)
// whose text is its message alone: errors.Is matches the kind, and the
// reader is not shown the kind's word tacked on ("…: conflict").
type KindError struct {
	Kind error
	Msg  string
}

func (e *KindError) Error() string { return e.Msg }

// Unwrap lets errors.Is match the kind.
func (e *KindError) Unwrap() error { return e.Kind }

// Conflict is an ErrConflict that reads as its message (Forbidden is its
// ErrForbidden twin).
func Conflict(format string, args ...any) error {
	return &KindError{Kind: ErrConflict, Msg: fmt.Sprintf(format, args...)}
}

// Required reports a missing field.
func Required(field string) error { return Invalid(field, "is required") }

// NotFound wraps ErrNotFound with the kind and id that were looked up.
func NotFound(kind, id string) error { return fmt.Errorf("%s %q: %w", kind, id, ErrNotFound) }

// EnumError reports a value outside a closed set, listing the valid values
// so a caller (often an AI agent) can correct itself in one step.
func EnumError[T ~string](field, what string, got T, valid []T) error {
	return Invalid(field, "unknown %s %q (valid: %s)", what, got, quoteList(valid))
}

func quoteList[T ~string](vs []T) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

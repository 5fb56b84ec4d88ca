package engineapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Error is the engine's refusal of a request: its status and message.
type Error struct {
	StatusCode int
	Message    string
	// Method and Path are the request's, for the error's text.
	Method, Path string
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	if e.Method == "" {
		return "docker engine: " + msg
	}
	return fmt.Sprintf("docker engine: %s (%s %s: %d)", msg, e.Method, e.Path, e.StatusCode)
}

// IsNotFound is whether err is the engine's 404: no such container,
// image or network.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsConflict is whether err is the engine's 409: a name in use, a
// container in a state that forbids the request.
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

func hasStatus(err error, code int) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == code
}

// errorOf reads a refusal: the engine's {"message": …}, or the start of
// whatever else answered on its address.
func errorOf(req *http.Request, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &Error{StatusCode: resp.StatusCode, Method: req.Method, Path: req.URL.Path}
	var body struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &body) == nil && body.Message != "" {
		e.Message = body.Message
	} else {
		e.Message = strings.TrimSpace(string(b[:min(len(b), 200)]))
	}
	return e
}

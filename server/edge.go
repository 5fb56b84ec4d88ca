package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/helixml/helix-org/domain"
)

// DefaultCallTimeout bounds an authenticated request: the longest MCP call
// (a skill build, up to skill.build_timeout) with room to spare.
const DefaultCallTimeout = 15 * time.Minute

// extendDeadlines lets an authenticated request outlive the http.Server's
// read and write timeouts, which are sized for strangers: a read_events
// long-poll waits up to 60 s, a skill build minutes, and a stream (SSE)
// as long as it is open. Strangers never get here; the timeouts still
// bound their slow headers, slow bodies and slow reads of our answers.
// Handlers that stream for longer than d extend again the same way.
func extendDeadlines(w http.ResponseWriter, d time.Duration) {
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(d)
	// ErrNotSupported (a test recorder) leaves the server's own deadlines.
	_ = rc.SetReadDeadline(deadline)
	_ = rc.SetWriteDeadline(deadline)
}

// refuseBatches answers a JSON-RPC batch (a body whose first non-space
// byte is '[') with a 400 JSON-RPC error before anything parses it. The
// MCP revisions since 2025-06-18 have no batches, and the SDK refuses them
// only when the client declares such a revision, after parsing the whole
// batch: 2,000 publishes in one request took one HTTP call. limit bounds
// the leading whitespace read.
func refuseBatches(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		// A small buffer: it only peeks the first byte; larger reads go
		// past it to the body.
		br := bufio.NewReaderSize(http.MaxBytesReader(w, r.Body, limit), 64)
		if first, err := firstNonSpace(br); err == nil && first == '[' {
			writeJSONRPCError(w, http.StatusBadRequest, -32600, "JSON-RPC batches are not supported: send one request per POST")
			return
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{br, r.Body}
		next.ServeHTTP(w, r)
	})
}

// firstNonSpace skips JSON whitespace and returns the next byte unread.
func firstNonSpace(br *bufio.Reader) (byte, error) {
	for {
		c, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c, br.UnreadByte()
	}
}

// writeJSONRPCError answers a JSON-RPC error with no id: the request was
// refused before any of its ids were read.
func writeJSONRPCError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
}

// refuseMalformed answers a POST body that is not a JSON-RPC message with
// JSON-RPC's parse error (-32700), as the protocol asks, instead of the
// SDK's plain text, and an object that is no message (no method, result
// or error) with invalid request (-32600) and its id, where the SDK took
// it for a response; a body over limit gets a JSON-RPC error too. The body
// is read whole here, as the SDK would read it anyway, and parsed once:
// the handlers after it read the request from the context (rpcRequestOf).
func refuseMalformed(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			writeJSONRPCError(w, http.StatusRequestEntityTooLarge, -32600, fmt.Sprintf("request body over %d bytes", limit))
			return
		case err != nil:
			writeJSONRPCError(w, http.StatusBadRequest, -32700, "reading the request: "+err.Error())
			return
		}
		// Before anything decodes it, on either path: the go-sdk's decoder
		// and the direct calls' would take any depth.
		if err := domain.CheckJSONDepth("request", body); err != nil {
			refuseDeep(w, body, err)
			return
		}
		var req rpcRequest
		if err := json.Unmarshal(body, &req); err != nil {
			if !json.Valid(body) {
				writeJSONRPCError(w, http.StatusBadRequest, -32700, "parse error: the body is not JSON")
				return
			}
			writeJSONRPCError(w, http.StatusBadRequest, -32600, "invalid request: the body is not a JSON-RPC message: "+err.Error())
			return
		}
		if !isMessage(req) {
			id, _ := requestID(req.ID)
			writeJSON(w, http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32600, "message": notAMessage}})
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), rpcRequestKey{}, &req))
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// refuseDeep answers a request nested past domain.MaxJSONDepth. One whose
// id can be read (Go's decoder takes 10,000 levels) gets a JSON-RPC error
// answering that id, so the client shows the reason: the go-sdk's client
// drops the body of an HTTP error. Anything else gets a 400.
func refuseDeep(w http.ResponseWriter, body []byte, err error) {
	msg := "invalid request: " + err.Error()
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &req) != nil || len(req.ID) == 0 || string(req.ID) == "null" {
		writeJSONRPCError(w, http.StatusBadRequest, -32600, msg)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32600, "message": msg}})
}

type rpcRequestKey struct{}

// rpcRequest is the part of a JSON-RPC message the server itself reads.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	// Result and Error are set in a response, which has no method.
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// rpcRequestOf returns the request refuseMalformed parsed, or an empty one.
func rpcRequestOf(r *http.Request) rpcRequest {
	if req, ok := r.Context().Value(rpcRequestKey{}).(*rpcRequest); ok {
		return *req
	}
	return rpcRequest{}
}

package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// The go-sdk refuses, before 2026-07-28, a method it does not serve with
// a plain-text 400 ("JSON RPC not handled"), and takes a message that is
// neither request, notification nor response as a response to nothing
// (202). JSON-RPC answers both: method not found (-32601) with the
// request's id, and invalid request (-32600).

// sdkUnhandled starts the go-sdk's refusal of a method it does not serve.
const sdkUnhandled = "JSON RPC not handled"

// notAMessage is what refuseMalformed says of a message that is neither a
// request or notification (a method) nor a response (a result or error).
const notAMessage = "invalid request: the message has neither a method (a request or notification) nor a result or error (a response)"

// isMessage reports whether req is a JSON-RPC message of some kind.
func isMessage(req rpcRequest) bool {
	return req.Method != "" || req.Result != nil || req.Error != nil
}

// answerUnhandled turns the go-sdk's plain-text refusal of a method into
// JSON-RPC's method not found: to a request, an answer carrying its id
// (200; at 2026-07-28 the SDK answers in JSON, 404, itself); to a
// notification, the 400 the transport asks for, with a JSON-RPC error of
// no id as its body. It wraps only what goes to the SDK: calls the server
// answers itself (serveCalls) never meet it.
func answerUnhandled(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		hw := &plainRefusal{ResponseWriter: w}
		next.ServeHTTP(hw, r)
		if !hw.held {
			return
		}
		msg := strings.TrimSpace(hw.body.String())
		req := rpcRequestOf(r)
		id, hasID := requestID(req.ID)
		switch {
		case !strings.HasPrefix(msg, sdkUnhandled):
			w.WriteHeader(http.StatusBadRequest) // another refusal: as the SDK wrote it
			w.Write(hw.body.Bytes())
		case hasID:
			writeJSON(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": msg}})
		default:
			writeJSONRPCError(w, http.StatusBadRequest, -32601, msg)
		}
	})
}

// requestID is a request's id as an answer carries it: a string or a
// number, as sent; anything else is no id.
func requestID(raw json.RawMessage) (json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	switch v.(type) {
	case string, float64:
		return raw, true
	}
	return nil, false
}

// plainRefusal holds a 400 written in plain text, the go-sdk's way of
// refusing, and passes everything else (answers, streams) straight on.
type plainRefusal struct {
	http.ResponseWriter
	held bool
	body bytes.Buffer
}

func (p *plainRefusal) WriteHeader(status int) {
	if status == http.StatusBadRequest && strings.HasPrefix(p.Header().Get("Content-Type"), "text/plain") {
		p.held = true
		return
	}
	p.ResponseWriter.WriteHeader(status)
}

func (p *plainRefusal) Write(b []byte) (int, error) {
	if p.held {
		return p.body.Write(b)
	}
	return p.ResponseWriter.Write(b)
}

func (p *plainRefusal) Flush() {
	if f, ok := p.ResponseWriter.(http.Flusher); ok && !p.held {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (p *plainRefusal) Unwrap() http.ResponseWriter { return p.ResponseWriter }

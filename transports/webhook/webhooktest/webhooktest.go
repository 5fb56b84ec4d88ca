// Package webhooktest helps test code that sends or receives Standard
// Webhooks: a verifier and signer written from the specification
// (standardwebhooks.com) sharing no code with package webhook, so each
// checks the other, and a recording fake of a remote receiver.
package webhooktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Verify is the specification's symmetric verification: strip "whsec_",
// base64-decode the key, HMAC-SHA256 "{id}.{timestamp}.{body}", and accept
// if any space-delimited "v1,<base64>" entry equals it (constant time) and
// the timestamp is within 5 minutes of now.
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	id, ts, sig := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sig == "" {
		return errors.New("missing required headers")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("invalid timestamp header")
	}
	if now.Sub(time.Unix(sec, 0)) > 5*time.Minute {
		return errors.New("message timestamp too old")
	}
	if time.Unix(sec, 0).Sub(now) > 5*time.Minute {
		return errors.New("message timestamp too new")
	}
	expected := []byte(signature(secret, id, ts, body))
	for _, versioned := range strings.Split(sig, " ") {
		version, value, ok := strings.Cut(versioned, ",")
		if ok && version == "v1" && hmac.Equal([]byte(value), expected) {
			return nil
		}
	}
	return errors.New("no matching signature found")
}

// Signature returns the "v1,<base64>" entry over the three values exactly
// as written, ts included: the specification signs the header as sent.
func Signature(secret, id, ts string, body []byte) string {
	return "v1," + signature(secret, id, ts, body)
}

// signature is the bare base64 HMAC, without the "v1," version prefix.
func signature(secret, id, ts string, body []byte) string {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return ""
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.%s", id, ts, body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Sign returns the three headers a sender puts on body.
func Sign(secret, id string, at time.Time, body []byte) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", ts)
	h.Set("webhook-signature", Signature(secret, id, ts, body))
	return h
}

// Request is one request a Receiver got.
type Request struct {
	Header http.Header
	Body   []byte
	// Err is the reference verification's verdict (nil = verified); set
	// when the Receiver has a secret.
	Err error
}

// Response is one scripted answer.
type Response struct {
	Status int
	Header map[string]string
	Body   string
}

// Receiver is a fake remote system on loopback that records what it is
// sent and answers from a script, then 204.
type Receiver struct {
	*httptest.Server
	// Got receives every request as it arrives.
	Got chan Request

	secret string
	mu     sync.Mutex
	script []Response
	all    []Request
}

// NewReceiver starts a receiver; secret, when set, verifies every request.
func NewReceiver(t testing.TB, secret string, script ...Response) *Receiver {
	r := &Receiver{Got: make(chan Request, 1000), secret: secret, script: script}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	got := Request{Header: req.Header.Clone(), Body: body}
	if r.secret != "" {
		got.Err = Verify(r.secret, req.Header, body, time.Now())
	}
	r.mu.Lock()
	r.all = append(r.all, got)
	resp := Response{Status: http.StatusNoContent}
	if len(r.script) > 0 {
		resp, r.script = r.script[0], r.script[1:]
	}
	r.mu.Unlock()
	for k, v := range resp.Header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(resp.Status)
	io.WriteString(w, resp.Body)
	r.Got <- got
}

// Requests returns every request so far.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.all...)
}

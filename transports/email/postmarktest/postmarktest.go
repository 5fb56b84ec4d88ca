// Package postmarktest fakes Postmark for tests: its email API (POST
// /email, as documented: X-Postmark-Server-Token, JSON in and out, 401 for a
// bad token, 422 for an invalid message) and the inbound webhook JSON
// Postmark POSTs for a received message.
package postmarktest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helixml/helix-org/transports/transport/transporttest"
)

// Header is one custom header of a sent email.
type Header struct {
	Name  string `json:"Name"`
	Value string `json:"Value"`
}

// Email is what the fake received on POST /email.
type Email struct {
	From          string            `json:"From"`
	To            string            `json:"To"`
	Cc            string            `json:"Cc"`
	ReplyTo       string            `json:"ReplyTo"`
	Subject       string            `json:"Subject"`
	TextBody      string            `json:"TextBody"`
	HtmlBody      string            `json:"HtmlBody"`
	Headers       []Header          `json:"Headers"`
	MessageStream string            `json:"MessageStream"`
	Metadata      map[string]string `json:"Metadata"`
}

// Header returns the value of a custom header, "" when absent.
func (e Email) Header(name string) string {
	for _, h := range e.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// Reply is a scripted answer.
type Reply struct {
	Status  int
	Body    string
	Headers map[string]string
}

// Server is a fake Postmark email API on loopback.
type Server struct {
	URL   string
	token string

	// Replies answer the next requests past authentication and
	// validation (Script), in order, before the fake accepts again.
	transporttest.Replies[Reply]
	sent transporttest.Calls[Email]

	mu       sync.Mutex
	attempts int
}

// New starts a fake that accepts token; it stops at the test's end.
func New(t testing.TB, token string) *Server {
	s := &Server{token: token}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Sent lists the emails accepted so far.
func (s *Server) Sent() []Email { return s.sent.All() }

// Attempts counts every request that reached POST /email.
func (s *Server) Attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts
}

// Next waits up to d for the next accepted email.
func (s *Server) Next(d time.Duration) (Email, bool) {
	return s.sent.Wait(d)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != "POST" || r.URL.Path != "/email" {
		answer(w, http.StatusNotFound, 0, "not found", nil)
		return
	}
	s.mu.Lock()
	s.attempts++
	s.mu.Unlock()
	if r.Header.Get("X-Postmark-Server-Token") != s.token {
		answer(w, http.StatusUnauthorized, 10, "Request does not contain a valid Server token.", nil)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || r.Header.Get("Accept") != "application/json" {
		answer(w, http.StatusUnprocessableEntity, 409, "JSON required.", nil)
		return
	}
	var e Email
	if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
		answer(w, http.StatusUnprocessableEntity, 402, "Invalid JSON.", nil)
		return
	}
	if e.From == "" || e.To == "" || (e.TextBody == "" && e.HtmlBody == "") {
		answer(w, http.StatusUnprocessableEntity, 300, "Invalid email request: From, To and a body are required.", nil)
		return
	}
	if rep := s.Take(); rep != nil {
		w.Header().Set("Content-Type", "application/json")
		for k, v := range rep.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.Status)
		fmt.Fprint(w, rep.Body)
		return
	}
	n := s.sent.Add(e)
	answer(w, http.StatusOK, 0, "OK", map[string]any{"To": e.To, "SubmittedAt": time.Now().UTC().Format(time.RFC3339),
		"MessageID": fmt.Sprintf("b7bc2f4a-e38e-4336-af7d-%012d", n)})
}

func answer(w http.ResponseWriter, status, code int, msg string, extra map[string]any) {
	body := map[string]any{"ErrorCode": code, "Message": msg}
	for k, v := range extra {
		body[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// Inbound describes an email arriving at Postmark; JSON renders the
// webhook body Postmark would POST for it.
type Inbound struct {
	// InboundHash is the server's inbound hash; Alias the plus-part.
	InboundHash, Alias string
	From, FromName     string
	Subject, Text      string
	// Stripped is StrippedTextReply: the reply without the quote.
	Stripped string
	// PostmarkID is Postmark's MessageID; the fields below are headers.
	PostmarkID                       string
	MessageID, InReplyTo, References string
	Attachments                      map[string]string // name → content
}

// JSON is the inbound webhook body.
func (m Inbound) JSON() []byte {
	to := m.InboundHash + "+" + m.Alias + "@inbound.postmarkapp.com"
	headers := []Header{{"X-Spam-Status", "No"}, {"MIME-Version", "1.0"}}
	for _, h := range []Header{{"Message-ID", m.MessageID}, {"In-Reply-To", m.InReplyTo}, {"References", m.References}} {
		if h.Value != "" {
			headers = append(headers, h)
		}
	}
	atts := []map[string]any{}
	for name, content := range m.Attachments {
		atts = append(atts, map[string]any{"Name": name, "ContentType": "text/plain", "ContentLength": len(content),
			"Content": base64.StdEncoding.EncodeToString([]byte(content)), "ContentID": ""})
	}
	b, _ := json.Marshal(map[string]any{
		"FromName": m.FromName, "MessageStream": "inbound", "From": m.From,
		"FromFull": map[string]string{"Email": m.From, "Name": m.FromName, "MailboxHash": ""},
		"To":       to, "ToFull": []map[string]string{{"Email": to, "Name": "", "MailboxHash": m.Alias}},
		"Cc": "", "CcFull": []any{}, "Bcc": "", "BccFull": []any{},
		"OriginalRecipient": to, "Subject": m.Subject, "MessageID": m.PostmarkID, "ReplyTo": "",
		"MailboxHash": m.Alias, "Date": "Wed, 4 Mar 2026 10:00:00 +0000",
		"TextBody": m.Text, "HtmlBody": "", "StrippedTextReply": m.Stripped, "Tag": "",
		"Headers": headers, "Attachments": atts,
	})
	return b
}

// Package gitlabtest fakes GitLab for tests, on loopback, speaking its
// documented wire formats: the REST API's notes on issues and merge
// requests (POST /api/v4/projects/:id/issues/:iid/notes and
// /merge_requests/:iid/notes, :id a numeric id or a URL-encoded path,
// authenticated by PRIVATE-TOKEN or Authorization: Bearer; 201 with the
// note, 401 {"message":"401 Unauthorized"}, 404 for a project, issue or
// merge request it does not know, 400 without a body, or a scripted
// answer such as 429 with Retry-After), and the headers GitLab sends with
// a webhook.
package gitlabtest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/helixml/helix-org/transports/transport/transporttest"
)

// Note is one note the fake received.
type Note struct {
	// Auth is how the token came: "PRIVATE-TOKEN" or "Bearer".
	Auth, Token string
	// Project is :id as the path gave it, decoded ("group/name" or "5").
	Project string
	// Noteable is "issues" or "merge_requests".
	Noteable string
	IID      int
	Body     string
	// ID is the note's id, when the fake accepted it.
	ID int
}

// Reply is a scripted answer to the next call.
type Reply struct {
	Status     int
	RetryAfter int
}

// Server is a fake GitLab REST API.
type Server struct {
	// URL is the API's base, as transport.gitlab's api_url takes it
	// (ending in /api/v4).
	URL   string
	token string

	transporttest.Replies[Reply]
	notes transporttest.Calls[Note]

	mu       sync.Mutex
	projects map[string]string // path or id → canonical path
	items    map[string]bool   // path + "/issues/17"
}

// New starts a fake that accepts the token token, closed when the test ends.
func New(t testing.TB, token string) *Server {
	s := &Server{token: token, projects: map[string]string{}, items: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v4/projects/{id}/{noteable}/{iid}/notes", s.note)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/api/v4"
	return s
}

// Project makes a project exist, reachable by its path and its id.
func (s *Server) Project(path string, id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.projects[path], s.projects[strconv.Itoa(id)] = path, path
}

// Issue makes issue iid exist in a project; MergeRequest a merge request.
func (s *Server) Issue(path string, iid int) { s.item(path, "issues", iid) }

// MergeRequest makes merge request iid exist in a project.
func (s *Server) MergeRequest(path string, iid int) { s.item(path, "merge_requests", iid) }

func (s *Server) item(path, kind string, iid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[path+"/"+kind+"/"+strconv.Itoa(iid)] = true
}

// Notes returns every call so far, refused ones too.
func (s *Server) Notes() []Note { return s.notes.All() }

// Next waits for the next call.
func (s *Server) Next(t testing.TB) Note {
	t.Helper()
	return s.notes.Next(t, "note reached the fake GitLab")
}

func (s *Server) note(w http.ResponseWriter, r *http.Request) {
	n := Note{Project: r.PathValue("id"), Noteable: r.PathValue("noteable")}
	n.IID, _ = strconv.Atoi(r.PathValue("iid"))
	n.Auth, n.Token = credentials(r.Header)
	var in struct {
		Body string `json:"body"`
	}
	json.NewDecoder(r.Body).Decode(&in)
	n.Body = in.Body
	s.mu.Lock()
	path, known := s.projects[n.Project]
	exists := s.items[path+"/"+n.Noteable+"/"+strconv.Itoa(n.IID)]
	s.mu.Unlock()
	rep := s.Take()
	ok := n.Token == s.token && rep == nil && known && exists && n.Body != ""
	if ok {
		n.ID = 1240 + len(s.notes.All()) + 1
	}
	s.notes.Add(n)
	switch {
	case n.Token != s.token:
		answer(w, http.StatusUnauthorized, map[string]any{"message": "401 Unauthorized"})
	case rep != nil:
		if rep.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(rep.RetryAfter))
		}
		answer(w, rep.Status, map[string]any{"message": http.StatusText(rep.Status)})
	case !known:
		answer(w, http.StatusNotFound, map[string]any{"message": "404 Project Not Found"})
	case n.Noteable != "issues" && n.Noteable != "merge_requests":
		answer(w, http.StatusNotFound, map[string]any{"error": "404 Not Found"})
	case !exists:
		answer(w, http.StatusNotFound, map[string]any{"message": "404 Not found"})
	case n.Body == "":
		answer(w, http.StatusBadRequest, map[string]any{"error": "body is missing"})
	default:
		kind := map[string]string{"issues": "Issue", "merge_requests": "MergeRequest"}[n.Noteable]
		answer(w, http.StatusCreated, map[string]any{"id": n.ID, "type": nil, "body": n.Body, "attachment": nil,
			"author":     map[string]any{"id": 1, "username": "helix-bot", "name": "Helix", "state": "active"},
			"created_at": "2026-11-23T10:00:00.000Z", "updated_at": "2026-11-23T10:00:00.000Z", "system": false,
			"noteable_id": 90 + n.IID, "noteable_type": kind, "noteable_iid": n.IID, "resolvable": false, "confidential": false, "internal": false})
	}
}

// credentials reads a token the ways GitLab takes one.
func credentials(h http.Header) (auth, token string) {
	if t := h.Get("PRIVATE-TOKEN"); t != "" {
		return "PRIVATE-TOKEN", t
	}
	if a := h.Get("Authorization"); len(a) > 7 && a[:7] == "Bearer " {
		return "Bearer", a[7:]
	}
	return "", ""
}

func answer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// Delivery is one webhook request as GitLab sends it.
type Delivery struct {
	// Event is the X-Gitlab-Event, such as "Issue Hook".
	Event string
	// Token is the webhook's secret token; empty sends no X-Gitlab-Token.
	Token string
	// Idempotency is the Idempotency-Key, the same on every retry; empty
	// sends none (GitLab before 17.4).
	Idempotency string
	// EventUUID is X-Gitlab-Event-UUID; empty makes one up.
	EventUUID string
}

// Headers are the request headers GitLab sends with d (GitLab's
// webhooks documentation, "Delivery headers"); each call is a new
// X-Gitlab-Webhook-UUID, as each attempt is.
func (d Delivery) Headers() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "GitLab/17.6.0")
	h.Set("X-Gitlab-Event", d.Event)
	h.Set("X-Gitlab-Instance", "https://gitlab.example.com")
	h.Set("X-Gitlab-Webhook-UUID", uuid())
	if d.EventUUID == "" {
		d.EventUUID = uuid()
	}
	h.Set("X-Gitlab-Event-UUID", d.EventUUID)
	if d.Token != "" {
		h.Set("X-Gitlab-Token", d.Token)
	}
	if d.Idempotency != "" {
		h.Set("Idempotency-Key", d.Idempotency)
	}
	return h
}

func uuid() string {
	var b [16]byte
	rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// Package githubtest fakes GitHub's REST API for tests, on loopback,
// speaking its documented wire format for issue comments and opening pull
// requests (pulls.go): POST
// /repos/{owner}/{repo}/issues/{number}/comments with a bearer token and
// {"body":…}, answered 201 with the comment, 401 "Bad credentials", 404
// for an issue it does not know, or a scripted error (429 with
// Retry-After, 5xx).
package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/helixml/helix-org/transports/transport/transporttest"
)

// Comment is one comment the fake received.
type Comment struct {
	Token, Repo string
	Issue       int
	Body        string
	// APIVersion is the X-GitHub-Api-Version header.
	APIVersion string
}

// Reply is a scripted answer to the next call.
type Reply struct {
	Status     int
	RetryAfter int
}

// Server is a fake GitHub REST API.
type Server struct {
	URL   string
	token string

	transporttest.Replies[Reply]
	comments transporttest.Calls[Comment]

	mu     sync.Mutex
	issues map[string]bool
	pulls  []Pull
}

// New starts a fake that accepts the token token, closed when the test ends.
func New(t testing.TB, token string) *Server {
	s := &Server{token: token, issues: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{number}/comments", s.comment)
	mux.HandleFunc("POST /repos/{owner}/{repo}/pulls", s.pull)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Issue makes an issue exist on a repository ("owner/name").
func (s *Server) Issue(repo string, number int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.issues[repo+"#"+strconv.Itoa(number)] = true
}

// Comments returns every comment received so far, refused ones too.
func (s *Server) Comments() []Comment { return s.comments.All() }

// Next waits for the next call.
func (s *Server) Next(t testing.TB) Comment {
	t.Helper()
	return s.comments.Next(t, "comment reached the fake GitHub")
}

func (s *Server) comment(w http.ResponseWriter, r *http.Request) {
	c := Comment{Repo: r.PathValue("owner") + "/" + r.PathValue("repo"), APIVersion: r.Header.Get("X-GitHub-Api-Version")}
	c.Issue, _ = strconv.Atoi(r.PathValue("number"))
	if auth := r.Header.Get("Authorization"); len(auth) > 7 && auth[:7] == "Bearer " {
		c.Token = auth[7:]
	}
	var in struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		answer(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	c.Body = in.Body
	s.mu.Lock()
	known := s.issues[c.Repo+"#"+strconv.Itoa(c.Issue)]
	s.mu.Unlock()
	rep := s.Take()
	id := s.comments.Add(c)
	switch {
	case c.Token != s.token:
		answer(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
	case rep != nil:
		if rep.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(rep.RetryAfter))
		}
		answer(w, rep.Status, map[string]any{"message": http.StatusText(rep.Status)})
	case !known:
		answer(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
	case c.Body == "":
		answer(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed"})
	default:
		url := fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-%d", c.Repo, c.Issue, id)
		answer(w, http.StatusCreated, map[string]any{"id": id, "body": c.Body, "html_url": url})
	}
}

func answer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

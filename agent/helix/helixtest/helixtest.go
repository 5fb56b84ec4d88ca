// Package helixtest is a fake Helix control plane on loopback: the
// endpoints the helix runtime calls, with helixml/helix's JSON shapes,
// keeping projects, apps, repositories (branches of files), app
// secrets and sessions in memory and recording every call. Its Agent
// stands in for the agent in a session's desktop.
package helixtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Prompt is what the fake's agent is given: the prompt, and the worker's
// MCP server as Helix calls it, the Authorization header's ${SECRET}
// substituted from the secrets scoped to the app, as Helix evaluates an
// app's config.
type Prompt struct {
	SessionID, ProjectID, AppID string
	Text                        string
	MCPURL                      string
	MCPHeaders                  map[string]string
}

// Call is one request the fake served: its route, as Helix's router
// names it ("POST /api/v1/sessions/chat"), and its path.
type Call struct {
	Route, Path string
}

// Server is the fake.
type Server struct {
	*httptest.Server
	Key string
	// Providers and their models, as Helix lists them.
	Providers map[string][]string
	// ColdStarts is how many new chats fail as a desktop whose agent has
	// not connected yet: the session is named, then the stream errs.
	ColdStarts int
	// Agent answers each prompt; nil answers "done".
	Agent func(ctx context.Context, p Prompt) string

	mu       sync.Mutex
	calls    []Call
	n        int
	projects map[string]*project // by id
	apps     map[string]json.RawMessage
	repos    map[string]map[string]map[string]string // repo → branch → path → content
	secrets  map[string]*secret
	sessions map[string]*session
	wg       sync.WaitGroup
}

type project struct {
	ID, Name, Org, App, Repo string
	Agent                    json.RawMessage
}

type secret struct{ ID, Name, Value, App string }

type session struct {
	ID, App, Project string
	Interactions     []interaction
}

type interaction struct {
	ID, Prompt, State, Output string
}

// Start runs a fake whose key is "hx-test-key" and whose one provider,
// "helix", has the model "qwen3:8b".
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{Key: "hx-test-key", Providers: map[string][]string{"helix": {"qwen3:8b"}}, projects: map[string]*project{},
		apps: map[string]json.RawMessage{}, repos: map[string]map[string]map[string]string{}, secrets: map[string]*secret{}, sessions: map[string]*session{}}
	s.Server = httptest.NewServer(s.routes())
	t.Cleanup(func() { s.Close(); s.wg.Wait() })
	return s
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	for route, h := range map[string]http.HandlerFunc{
		"GET /api/v1/status":                                    s.status,
		"GET /api/v1/providers":                                 s.providers,
		"GET /v1/models":                                        s.models,
		"PUT /api/v1/projects/apply":                            s.apply,
		"GET /api/v1/projects/{id}":                             s.project,
		"PUT /api/v1/projects/{id}/repositories/{repo}/attach":  s.attach,
		"PUT /api/v1/projects/{id}/repositories/{repo}/primary": s.attach,
		"GET /api/v1/secrets":                                   s.listSecrets,
		"POST /api/v1/secrets":                                  s.createSecret,
		"PUT /api/v1/secrets/{id}":                              s.updateSecret,
		"POST /api/v1/git/repositories":                         s.createRepo,
		"GET /api/v1/git/repositories/{id}/branches":            s.branches,
		"POST /api/v1/git/repositories/{id}/branches":           s.createBranch,
		"PUT /api/v1/git/repositories/{id}/contents":            s.putFile,
		"GET /api/v1/git/repositories/{id}/contents":            s.getFile,
		"GET /api/v1/apps/{id}":                                 s.app,
		"PUT /api/v1/apps/{id}":                                 s.updateApp,
		"POST /api/v1/sessions/chat":                            s.chat,
		"POST /api/v1/sessions/{id}/messages":                   s.message,
		"GET /api/v1/sessions/{id}/output":                      s.output,
		"POST /api/v1/sessions/{id}/cancel":                     s.cancel,
	} {
		mux.HandleFunc(route, h)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+s.Key {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_, route := mux.Handler(r)
		s.mu.Lock()
		s.calls = append(s.calls, Call{Route: route, Path: r.URL.Path})
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	})
}

// Calls is every request served so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Count is how many requests took route.
func (s *Server) Count(route string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Route == route {
			n++
		}
	}
	return n
}

// Projects is how many projects exist.
func (s *Server) Projects() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.projects) }

// Sessions is how many sessions exist.
func (s *Server) Sessions() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.sessions) }

// ProjectOf is the project named name: its id, app, primary repository.
func (s *Server) ProjectOf(name string) (id, app, repo string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.projects {
		if p.Name == name {
			return p.ID, p.App, p.Repo, true
		}
	}
	return "", "", "", false
}

// DeleteProject deletes the project named name, with its app,
// repository and sessions, as an operator might on Helix's side.
func (s *Server) DeleteProject(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, p := range s.projects {
		if p.Name != name {
			continue
		}
		delete(s.projects, id)
		delete(s.apps, p.App)
		delete(s.repos, p.Repo)
		for sid, ses := range s.sessions {
			if ses.App == p.App {
				delete(s.sessions, sid)
			}
		}
	}
}

// File is a file on a branch of a repository.
func (s *Server) File(repo, branch, path string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.repos[repo][branch][path]
	return c, ok
}

// Secret is the value of an app's secret.
func (s *Server) Secret(appID, name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sec := range s.secrets {
		if sec.App == appID && sec.Name == name {
			return sec.Value, true
		}
	}
	return "", false
}

// AppConfig is an app's config as stored.
func (s *Server) AppConfig(id string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.apps[id]
}

// Prompts is every prompt a session was given, in order.
func (s *Server) Prompts(sessionID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ps []string
	if ses := s.sessions[sessionID]; ses != nil {
		for _, in := range ses.Interactions {
			ps = append(ps, in.Prompt)
		}
	}
	return ps
}

func (s *Server) id(prefix string) string {
	s.n++
	return fmt.Sprintf("%s_%04d", prefix, s.n)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		http.Error(w, "invalid request body: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

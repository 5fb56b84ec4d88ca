// Package helixtest is a fake Helix control plane on loopback: the
// endpoints the helix runtime calls, with helixml/helix's JSON shapes,
// keeping projects, apps, repositories (branches of files), project
// secrets and sessions in memory and recording every call. Its Agent
// stands in for the agent in a session's desktop.
package helixtest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// Prompt is what the fake's agent is given: the prompt, and the worker's
// MCP server as its desktop would see it, the Authorization header's
// ${SECRET} expanded from the project's secrets, as Helix gives them to
// a session's environment.
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

type secret struct{ ID, Name, Value, Project string }

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
		"GET /api/v1/projects/{id}/secrets":                     s.listSecrets,
		"POST /api/v1/projects/{id}/secrets":                    s.createSecret,
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

// File is a file on a branch of a repository.
func (s *Server) File(repo, branch, path string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.repos[repo][branch][path]
	return c, ok
}

// Secret is a project secret's value.
func (s *Server) Secret(projectID, name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sec := range s.secrets {
		if sec.Project == projectID && sec.Name == name {
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

func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{"admin": false, "user": "usr_tester", "slug": "tester", "config": map[string]any{}})
}

func (s *Server) providers(w http.ResponseWriter, _ *http.Request) {
	var ps []string
	for p := range s.Providers {
		ps = append(ps, p)
	}
	writeJSON(w, ps)
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	data := []map[string]any{}
	for _, m := range s.Providers[r.URL.Query().Get("provider")] {
		data = append(data, map[string]any{"id": m, "object": "model", "owned_by": "helix", "enabled": true})
	}
	writeJSON(w, map[string]any{"object": "list", "data": data})
}

func (s *Server) apply(w http.ResponseWriter, r *http.Request) {
	var req struct {
		OrganizationID string `json:"organization_id"`
		Name           string `json:"name"`
		Spec           struct {
			Agent json.RawMessage `json:"agent"`
		} `json:"spec"`
	}
	if !decode(w, r, &req) {
		return
	}
	if req.Name == "" {
		http.Error(w, "project name is required", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.projects {
		if p.Name == req.Name && p.Org == req.OrganizationID {
			p.Agent = req.Spec.Agent
			writeJSON(w, map[string]any{"project_id": p.ID, "agent_app_id": p.App, "created": false})
			return
		}
	}
	p := &project{ID: s.id("prj"), Name: req.Name, Org: req.OrganizationID, App: s.id("app"), Agent: req.Spec.Agent}
	s.projects[p.ID] = p
	s.apps[p.App], _ = json.Marshal(map[string]any{"helix": map[string]any{"name": req.Name, "assistants": []any{
		map[string]any{"name": req.Name, "agent_type": "zed_external", "mcps": []any{}}}}})
	writeJSON(w, map[string]any{"project_id": p.ID, "agent_app_id": p.App, "created": true})
}

func (s *Server) project(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	p := s.projects[r.PathValue("id")]
	s.mu.Unlock()
	if p == nil {
		http.Error(w, "Project not found", http.StatusNotFound)
		return
	}
	writeJSON(w, map[string]any{"id": p.ID, "name": p.Name, "organization_id": p.Org, "default_repo_id": p.Repo, "default_helix_app_id": p.App})
}

func (s *Server) attach(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, repo := s.projects[r.PathValue("id")], r.PathValue("repo")
	if p == nil || s.repos[repo] == nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/primary") {
		p.Repo = repo
	}
	writeJSON(w, map[string]any{"message": "ok"})
}

func (s *Server) listSecrets(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, sec := range s.secrets {
		if sec.Project == r.PathValue("id") {
			out = append(out, map[string]any{"id": sec.ID, "name": sec.Name, "project_id": sec.Project})
		}
	}
	writeJSON(w, out)
}

func (s *Server) createSecret(w http.ResponseWriter, r *http.Request) {
	var req struct{ Name, Value string }
	if !decode(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.projects[r.PathValue("id")] == nil {
		http.Error(w, "Project not found", http.StatusNotFound)
		return
	}
	sec := &secret{ID: s.id("sec"), Name: req.Name, Value: req.Value, Project: r.PathValue("id")}
	s.secrets[sec.ID] = sec
	writeJSON(w, map[string]any{"id": sec.ID, "name": sec.Name, "project_id": sec.Project})
}

func (s *Server) updateSecret(w http.ResponseWriter, r *http.Request) {
	var req struct{ Name, Value string }
	if !decode(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.secrets[r.PathValue("id")]
	if sec == nil {
		http.Error(w, "secret not found", http.StatusNotFound)
		return
	}
	sec.Value = req.Value
	writeJSON(w, map[string]any{"id": sec.ID, "name": sec.Name, "project_id": sec.Project})
}

func (s *Server) createRepo(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name          string            `json:"name"`
		OwnerID       string            `json:"owner_id"`
		InitialFiles  map[string]string `json:"initial_files"`
		DefaultBranch string            `json:"default_branch"`
	}
	if !decode(w, r, &req) {
		return
	}
	if req.Name == "" || req.OwnerID == "" {
		http.Error(w, "name and owner_id are required", http.StatusBadRequest)
		return
	}
	branch := req.DefaultBranch
	if branch == "" {
		branch = "main"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.id("repo")
	s.repos[id] = map[string]map[string]string{}
	if len(req.InitialFiles) > 0 {
		s.repos[id][branch] = req.InitialFiles
	}
	writeJSON(w, map[string]any{"id": id, "name": req.Name, "default_branch": branch, "repo_type": "code"})
}

func (s *Server) branches(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo := s.repos[r.PathValue("id")]
	if repo == nil {
		http.Error(w, "repository not found", http.StatusNotFound)
		return
	}
	names := []string{}
	for b := range repo {
		names = append(names, b)
	}
	writeJSON(w, names)
}

func (s *Server) createBranch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		BranchName string `json:"branch_name"`
		BaseBranch string `json:"base_branch"`
	}
	if !decode(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	repo := s.repos[r.PathValue("id")]
	base, ok := repo[req.BaseBranch]
	if repo == nil || !ok {
		// A repository created without files has no branch to fork.
		http.Error(w, "base branch "+req.BaseBranch+" not found", http.StatusBadRequest)
		return
	}
	files := map[string]string{}
	for k, v := range base {
		files[k] = v
	}
	repo[req.BranchName] = files
	writeJSON(w, map[string]any{"repository_id": r.PathValue("id"), "branch_name": req.BranchName, "base_branch": req.BaseBranch})
}

func (s *Server) putFile(w http.ResponseWriter, r *http.Request) {
	var req struct{ Path, Branch, Message, Author, Email, Content string }
	if !decode(w, r, &req) {
		return
	}
	content, err := base64.StdEncoding.DecodeString(req.Content)
	if err != nil {
		http.Error(w, "content must be base64", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	branch, ok := s.repos[r.PathValue("id")][req.Branch]
	if !ok {
		http.Error(w, "Remote branch "+req.Branch+" not found in upstream origin", http.StatusInternalServerError)
		return
	}
	branch[req.Path] = string(content)
	writeJSON(w, map[string]any{"path": req.Path})
}

func (s *Server) getFile(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c, ok := s.File(r.PathValue("id"), q.Get("branch"), q.Get("path"))
	if !ok {
		http.Error(w, "file not found", http.StatusNotFound)
		return
	}
	writeJSON(w, map[string]any{"path": q.Get("path"), "content": c})
}

func (s *Server) app(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	cfg, ok := s.apps[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		http.Error(w, "app not found", http.StatusNotFound)
		return
	}
	writeJSON(w, map[string]any{"id": r.PathValue("id"), "app_source": "helix", "config": cfg})
}

func (s *Server) updateApp(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     string          `json:"id"`
		Config json.RawMessage `json:"config"`
	}
	if !decode(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.apps[req.ID]; !ok || req.ID != r.PathValue("id") {
		http.Error(w, "app not found", http.StatusNotFound)
		return
	}
	s.apps[req.ID] = req.Config
	writeJSON(w, map[string]any{"id": req.ID, "config": req.Config})
}

// prompt is what the agent of ses sees: its worker's MCP server, the
// header's secrets expanded from the project's.
func (s *Server) prompt(ses *session, text string) Prompt {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := Prompt{SessionID: ses.ID, ProjectID: ses.Project, AppID: ses.App, Text: text, MCPHeaders: map[string]string{}}
	var cfg struct {
		Helix struct {
			Assistants []struct {
				MCPs []struct {
					URL     string            `json:"url"`
					Headers map[string]string `json:"headers"`
				} `json:"mcps"`
			} `json:"assistants"`
		} `json:"helix"`
	}
	_ = json.Unmarshal(s.apps[ses.App], &cfg)
	env := map[string]string{}
	for _, sec := range s.secrets {
		if sec.Project == ses.Project {
			env[sec.Name] = sec.Value
		}
	}
	for _, a := range cfg.Helix.Assistants {
		for _, m := range a.MCPs {
			p.MCPURL = m.URL
			for k, v := range m.Headers {
				p.MCPHeaders[k] = os.Expand(v, func(k string) string { return env[k] })
			}
		}
	}
	return p
}

func (s *Server) answer(ctx context.Context, p Prompt) string {
	if s.Agent == nil {
		return "done"
	}
	return s.Agent(ctx, p)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		AppID     string `json:"app_id"`
		ProjectID string `json:"project_id"`
		SessionID string `json:"session_id"`
		AgentType string `json:"agent_type"`
		Messages  []struct {
			Role    string `json:"role"`
			Content struct {
				Parts []string `json:"parts"`
			} `json:"content"`
		} `json:"messages"`
	}
	if !decode(w, r, &req) {
		return
	}
	if len(req.Messages) == 0 || len(req.Messages[0].Content.Parts) == 0 {
		http.Error(w, "messages are required", http.StatusBadRequest)
		return
	}
	text := req.Messages[len(req.Messages)-1].Content.Parts[0]
	s.mu.Lock()
	if _, ok := s.apps[req.AppID]; !ok {
		s.mu.Unlock()
		http.Error(w, "app not found", http.StatusNotFound)
		return
	}
	ses := s.sessions[req.SessionID]
	if ses == nil {
		ses = &session{ID: s.id("ses"), App: req.AppID, Project: req.ProjectID}
		s.sessions[ses.ID] = ses
	}
	cold := s.ColdStarts > 0
	if cold {
		s.ColdStarts--
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	chunk(map[string]any{"id": ses.ID, "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant"}}}})
	if cold {
		chunk(map[string]any{"error": map[string]any{"message": "external agent for session " + ses.ID + " is not connected yet"}})
		return
	}
	out := s.answer(r.Context(), s.prompt(ses, text))
	s.mu.Lock()
	ses.Interactions = append(ses.Interactions, interaction{ID: s.id("int"), Prompt: text, State: "complete", Output: out})
	s.mu.Unlock()
	chunk(map[string]any{"id": ses.ID, "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": out}}}})
	chunk(map[string]any{"id": ses.ID, "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s *Server) message(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Content string `json:"content"`
	}
	if !decode(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Content) == "" {
		http.Error(w, "content is required", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	ses := s.sessions[r.PathValue("id")]
	if ses == nil {
		s.mu.Unlock()
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	in := interaction{ID: s.id("int"), Prompt: req.Content, State: "waiting"}
	ses.Interactions = append(ses.Interactions, in)
	n := len(ses.Interactions) - 1
	prompt := s.id("prm")
	s.mu.Unlock()
	// Helix keeps the prompt and its agent takes it when it can: the
	// answer comes later, on the session's output.
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		out := s.answer(context.Background(), s.prompt(ses, req.Content))
		s.mu.Lock()
		ses.Interactions[n].State, ses.Interactions[n].Output = "complete", out
		s.mu.Unlock()
	}()
	writeJSON(w, map[string]any{"prompt_id": prompt})
}

func (s *Server) output(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ses := s.sessions[r.PathValue("id")]
	if ses == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	out := map[string]any{"session_id": ses.ID, "status": "complete", "output": ""}
	if n := len(ses.Interactions); n > 0 {
		last := ses.Interactions[n-1]
		out["interaction_id"], out["status"], out["output"] = last.ID, last.State, last.Output
	}
	writeJSON(w, out)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ses := s.sessions[r.PathValue("id")]
	if ses == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	if n := len(ses.Interactions); n > 0 && ses.Interactions[n-1].State == "waiting" {
		ses.Interactions[n-1].State = "interrupted"
	}
	writeJSON(w, map[string]any{"message": "cancelled"})
}

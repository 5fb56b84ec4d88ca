package helixtest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

// The fake's account, providers, projects, repositories, apps and
// secrets.

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

func (s *Server) listSecrets(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, sec := range s.secrets {
		out = append(out, map[string]any{"id": sec.ID, "name": sec.Name, "app_id": sec.App, "project_id": ""})
	}
	writeJSON(w, out)
}

func (s *Server) createSecret(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name  string `json:"name"`
		Value string `json:"value"`
		AppID string `json:"app_id"`
	}
	if !decode(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := &secret{ID: s.id("sec"), Name: req.Name, Value: req.Value, App: req.AppID}
	s.secrets[sec.ID] = sec
	writeJSON(w, map[string]any{"id": sec.ID, "name": sec.Name, "app_id": sec.App})
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
	writeJSON(w, map[string]any{"id": sec.ID, "name": sec.Name, "app_id": sec.App})
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

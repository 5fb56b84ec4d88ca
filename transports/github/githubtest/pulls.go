package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Pull is one pull request the fake was asked to open: POST
// /repos/{owner}/{repo}/pulls with {"title","body","head","base"},
// answered 201 with the pull request as GitHub documents it.
type Pull struct {
	Token, Repo             string
	Title, Body, Head, Base string
}

// Pulls returns every pull request opened so far.
func (s *Server) Pulls() []Pull {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Pull(nil), s.pulls...)
}

func (s *Server) pull(w http.ResponseWriter, r *http.Request) {
	p := Pull{Repo: r.PathValue("owner") + "/" + r.PathValue("repo"), Token: strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")}
	var in struct{ Title, Body, Head, Base string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		answer(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	p.Title, p.Body, p.Head, p.Base = in.Title, in.Body, in.Head, in.Base
	if p.Token != s.token {
		answer(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
		return
	}
	s.mu.Lock()
	s.pulls = append(s.pulls, p)
	n := 100 + len(s.pulls)
	s.mu.Unlock()
	url := fmt.Sprintf("https://github.com/%s/pull/%d", p.Repo, n)
	answer(w, http.StatusCreated, map[string]any{"id": n, "number": n, "state": "open", "title": p.Title, "body": p.Body, "html_url": url,
		"head": map[string]any{"ref": p.Head, "label": strings.Split(p.Repo, "/")[0] + ":" + p.Head}, "base": map[string]any{"ref": p.Base}})
}

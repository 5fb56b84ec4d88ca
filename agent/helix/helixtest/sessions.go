package helixtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// The fake's sessions: streamed chats, the durable message queue, a
// session's output, and cancelling a turn.

// prompt is what the agent of ses sees: its worker's MCP server, the
// header's ${…} substituted as Helix evaluates the app's config.
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
	// Helix substitutes the user's secrets and the app's own, never
	// another app's (controller.evaluateSecrets).
	for _, sec := range s.secrets {
		if sec.App == "" || sec.App == ses.App {
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

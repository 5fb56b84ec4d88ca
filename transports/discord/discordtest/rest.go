package discordtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"unicode/utf8"
)

func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bot "+s.token {
			answer(w, http.StatusUnauthorized, map[string]any{"message": "401: Unauthorized", "code": 0})
			return
		}
		h(w, r)
	}
}

func answer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) gatewayBot(w http.ResponseWriter, r *http.Request) {
	answer(w, http.StatusOK, map[string]any{"url": s.wsURL("/gateway"), "shards": 1,
		"session_start_limit": map[string]any{"total": 1000, "remaining": 999, "reset_after": 14400000, "max_concurrency": 1}})
}

func (s *Server) getChannel(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	c, ok := s.channels[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		answer(w, http.StatusNotFound, map[string]any{"message": "Unknown Channel", "code": 10003})
		return
	}
	answer(w, http.StatusOK, c.object())
}

func (c chan_) object() map[string]any {
	o := map[string]any{"id": c.ID, "type": c.Type}
	if c.GuildID != "" {
		o["guild_id"] = c.GuildID
	}
	if c.ParentID != "" {
		o["parent_id"], o["name"] = c.ParentID, c.Name
	}
	if c.Recipient != "" {
		o["recipients"] = []any{map[string]any{"id": c.Recipient}}
	}
	return o
}

// scripted takes the next scripted answer, if any, and gives it.
func (s *Server) scripted(w http.ResponseWriter) bool {
	rep := s.Take()
	if rep == nil {
		return false
	}
	if rep.Status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(int(rep.RetryAfter+0.999)))
		answer(w, rep.Status, map[string]any{"message": "You are being rate limited.", "retry_after": rep.RetryAfter, "global": false})
		return true
	}
	answer(w, rep.Status, map[string]any{"message": http.StatusText(rep.Status), "code": rep.Code})
	return true
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Content      string `json:"content"`
		Nonce        string `json:"nonce"`
		EnforceNonce bool   `json:"enforce_nonce"`
		Reference    *struct {
			MessageID       string `json:"message_id"`
			FailIfNotExists *bool  `json:"fail_if_not_exists"`
		} `json:"message_reference"`
	}
	if json.NewDecoder(r.Body).Decode(&in) != nil {
		answer(w, http.StatusBadRequest, map[string]any{"message": "400: Bad Request", "code": 50109})
		return
	}
	if s.scripted(w) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.channels[r.PathValue("id")]
	switch {
	case !ok:
		answer(w, http.StatusNotFound, map[string]any{"message": "Unknown Channel", "code": 10003})
		return
	case in.Content == "":
		answer(w, http.StatusBadRequest, map[string]any{"message": "Cannot send an empty message", "code": 50006})
		return
	case utf8.RuneCountInString(in.Content) > 2000:
		answer(w, http.StatusBadRequest, map[string]any{"message": "Invalid Form Body", "code": 50035,
			"errors": map[string]any{"content": map[string]any{"_errors": []any{map[string]any{"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}}}}})
		return
	}
	if id, seen := s.nonces[in.Nonce]; seen && in.EnforceNonce && in.Nonce != "" {
		answer(w, http.StatusOK, s.messages[id].object())
		return
	}
	m := Message{ID: s.newIDLocked(), ChannelID: ch.ID, GuildID: ch.GuildID, AuthorID: BotID, Author: "helix", Bot: true, Content: in.Content, Nonce: in.Nonce}
	if in.Reference != nil {
		ref, exists := s.messages[in.Reference.MessageID]
		if !exists || ref.ChannelID != ch.ID {
			if in.Reference.FailIfNotExists == nil || *in.Reference.FailIfNotExists {
				answer(w, http.StatusBadRequest, map[string]any{"message": "Invalid Form Body", "code": 50035})
				return
			}
		} else {
			m.ReplyTo = ref.ID
		}
	}
	s.messages[m.ID] = m
	if in.Nonce != "" {
		s.nonces[in.Nonce] = m.ID
	}
	s.posts <- m
	s.dispatchLocked("MESSAGE_CREATE", m.object())
	answer(w, http.StatusOK, m.object())
}

func (s *Server) startThread(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name string `json:"name"`
	}
	json.NewDecoder(r.Body).Decode(&in)
	if s.scripted(w) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	parent, mid := r.PathValue("id"), r.PathValue("mid")
	m, ok := s.messages[mid]
	switch {
	case s.channels[parent].Type != 0:
		answer(w, http.StatusNotFound, map[string]any{"message": "Unknown Channel", "code": 10003})
		return
	case !ok || m.ChannelID != parent:
		answer(w, http.StatusNotFound, map[string]any{"message": "Unknown Message", "code": 10008})
		return
	case s.channels[mid].ID != "":
		answer(w, http.StatusBadRequest, map[string]any{"message": "A thread has already been created for this message", "code": 160004})
		return
	case in.Name == "" || utf8.RuneCountInString(in.Name) > 100:
		answer(w, http.StatusBadRequest, map[string]any{"message": "Invalid Form Body", "code": 50035})
		return
	}
	c := chan_{ID: mid, GuildID: s.channels[parent].GuildID, ParentID: parent, Name: in.Name, Type: 11}
	s.channels[mid] = c
	s.threads <- c
	s.dispatchLocked("THREAD_CREATE", c.object())
	answer(w, http.StatusCreated, c.object())
}

func (s *Server) openDM(w http.ResponseWriter, r *http.Request) {
	var in struct {
		RecipientID string `json:"recipient_id"`
	}
	json.NewDecoder(r.Body).Decode(&in)
	if in.RecipientID == "" {
		answer(w, http.StatusBadRequest, map[string]any{"message": "Invalid Form Body", "code": 50035})
		return
	}
	s.mu.Lock()
	id := s.dmLocked(in.RecipientID)
	c := s.channels[id]
	s.mu.Unlock()
	answer(w, http.StatusOK, c.object())
}

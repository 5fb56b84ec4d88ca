package discordtest

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/coder/websocket"
)

// gateway serves one Gateway connection: Hello, then Identify or Resume,
// then heartbeats until the connection ends.
func (s *Server) gateway(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	ctx := r.Context()
	s.mu.Lock()
	if s.conn != nil {
		s.conn.CloseNow() // one session at a time, as for one shard
	}
	s.conn = conn
	s.writeLocked(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": s.HeartbeatInterval}})
	s.mu.Unlock()
	defer s.disconnected(conn)
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var p struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if json.Unmarshal(data, &p) != nil {
			conn.Close(4002, "Decode error")
			return
		}
		if !s.handle(conn, r.URL.Path, p.Op, p.D) {
			return
		}
	}
}

func (s *Server) disconnected(conn *websocket.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == conn {
		s.conn = nil
		select {
		case <-s.connected:
			s.connected = make(chan struct{})
		default:
		}
	}
}

// handle answers one payload; false ends the connection.
func (s *Server) handle(conn *websocket.Conn, path string, op int, d json.RawMessage) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != conn {
		return false
	}
	switch op {
	case 1:
		s.beats = append(s.beats, d)
		if s.noAcks > 0 {
			s.noAcks--
			return true
		}
		s.writeLocked(map[string]any{"op": 11})
	case 2:
		return s.identifyLocked(conn, d)
	case 6:
		return s.resumeLocked(path, d)
	default:
		conn.Close(4001, "Unknown opcode")
		return false
	}
	return true
}

func (s *Server) identifyLocked(conn *websocket.Conn, d json.RawMessage) bool {
	var id struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
	}
	json.Unmarshal(d, &id)
	s.identify = append(s.identify, Identify(id))
	switch {
	case id.Token != s.token:
		conn.Close(4004, "Authentication failed.")
		return false
	case id.Intents&MessageContentIntent == 0:
		conn.Close(4014, "Disallowed intent(s).")
		return false
	}
	s.session, s.log, s.seq = s.newIDLocked(), nil, 0
	s.dispatchLocked("READY", map[string]any{"v": 10, "session_id": s.session, "session_type": "normal",
		"resume_gateway_url": s.wsURL("/gateway-resume"), "user": map[string]any{"id": BotID, "username": "helix", "bot": true},
		"guilds": []any{}, "application": map[string]any{"id": BotID, "flags": 0}})
	s.readyLocked()
	return true
}

func (s *Server) resumeLocked(path string, d json.RawMessage) bool {
	var rs struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	json.Unmarshal(d, &rs)
	s.resumes = append(s.resumes, Resume{SessionID: rs.SessionID, Seq: rs.Seq, Path: path})
	if rs.Token != s.token || rs.SessionID == "" || rs.SessionID != s.session {
		s.writeLocked(map[string]any{"op": 9, "d": false})
		return true
	}
	for _, e := range s.log {
		if e.s > rs.Seq {
			s.writeLocked(map[string]any{"op": 0, "s": e.s, "t": e.t, "d": e.data})
		}
	}
	s.seq++
	s.writeLocked(map[string]any{"op": 0, "s": s.seq, "t": "RESUMED", "d": map[string]any{}})
	s.log = slices.Clip(s.log)
	s.readyLocked()
	return true
}

// readyLocked marks the session going: Connected's channel closes.
func (s *Server) readyLocked() {
	select {
	case <-s.connected:
	default:
		close(s.connected)
	}
}

// Disconnect closes the connection with a close code, as the Gateway does
// when it refuses a session (4004, 4014) or ends one (4009).
func (s *Server) Disconnect(code int, reason string) {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.Close(websocket.StatusCode(code), reason)
	}
}

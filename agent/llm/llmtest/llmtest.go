// Package llmtest is a scripted fake LLM provider for tests: a real HTTP
// server on loopback that speaks the Anthropic Messages API or the OpenAI
// Chat Completions API (and its embeddings endpoint, embeddings.go),
// checks every request against the documented request schema
// (testdata/*.schema.json) and the rules the schemas cannot say (who may
// speak when, every tool call answered once), and answers with whatever
// its script decides. It decodes requests with its own code, never
// package llm's, so a test of llm against it is not circular.
package llmtest

import (
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/helixml/helix-org/agent/llm"
)

// APIKey is the key the fake accepts unless told another (WantKey).
const APIKey = "sk-llmtest-key"

// Turn is one request as the fake decoded it.
type Turn struct {
	Model     string
	System    string
	Messages  []llm.Message
	Tools     []llm.Tool
	MaxTokens int
	// APIKey is the key the request carried (x-api-key or the bearer).
	APIKey string
	// Stream is "stream": true; IncludeUsage is OpenAI's
	// stream_options.include_usage.
	Stream, IncludeUsage bool
	At                   time.Time
}

// Reply is what the script answers. By default it is a 200 with Text and
// ToolCalls (ids filled in when empty) and Usage (100 in, 10 out when zero).
type Reply struct {
	Text      string
	ToolCalls []llm.ToolCall
	Usage     llm.Usage
	// Status, when set, makes the reply an error in the provider's format.
	Status     int
	RetryAfter string
	// Body, when set, is sent as is (with Status or 200): a malformed reply.
	Body string
}

// Script decides each reply from the request.
type Script func(Turn) Reply

// Server is the fake provider.
type Server struct {
	format string
	srv    *httptest.Server
	t      testing.TB
	schema *jsonschema.Resolved
	script Script

	mu    sync.Mutex
	key   string
	turns []Turn
	// embeddings (embeddings.go)
	concepts  map[string]string
	embedFail int
	embeds    []EmbeddingsCall
}

//go:embed testdata/*.schema.json
var schemas embed.FS

// New starts a fake for format (llm.Anthropic or llm.OpenAI), closed when
// the test ends. A request that breaks the wire format fails the test and
// gets a 400.
func New(t testing.TB, format string, script Script) *Server {
	t.Helper()
	raw, err := schemas.ReadFile("testdata/" + format + "_request.schema.json")
	if err != nil {
		t.Fatalf("llmtest: no schema for format %q", format)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &Server{format: format, t: t, schema: resolved, script: script, key: APIKey}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// BaseURL is what agent.base_url should be set to: the host for
// Anthropic, the host plus /v1 for OpenAI.
func (f *Server) BaseURL() string {
	if f.format == llm.OpenAI {
		return f.srv.URL + "/v1"
	}
	return f.srv.URL
}

// WantKey makes the fake accept key instead of APIKey.
func (f *Server) WantKey(key string) *Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.key = key
	return f
}

// Turns returns every request received so far, in order.
func (f *Server) Turns() []Turn {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Turn(nil), f.turns...)
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/embeddings") {
		f.serveEmbeddings(w, r)
		return
	}
	turn, err := f.decode(r)
	if err != nil {
		f.t.Errorf("llmtest %s: invalid request: %v", f.format, err)
		f.writeError(w, Reply{Status: http.StatusBadRequest, Text: err.Error()})
		return
	}
	f.mu.Lock()
	f.turns = append(f.turns, turn)
	n := len(f.turns)
	reply := f.script(turn)
	f.mu.Unlock()
	if reply.Usage == (llm.Usage{}) {
		reply.Usage = llm.Usage{InputTokens: 100, OutputTokens: 10}
	}
	for i := range reply.ToolCalls {
		if reply.ToolCalls[i].ID == "" {
			reply.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", n, i)
		}
	}
	switch {
	case reply.Body != "":
		if reply.Status == 0 {
			reply.Status = http.StatusOK
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		io.WriteString(w, reply.Body)
	case reply.Status != 0:
		f.writeError(w, reply)
	case turn.Stream:
		f.writeStream(w, turn, reply)
	case f.format == llm.Anthropic:
		writeJSON(w, http.StatusOK, anthropicReply(turn.Model, reply))
	default:
		writeJSON(w, http.StatusOK, openaiReply(turn.Model, reply))
	}
}

// decode checks the request's method, path, headers and body and returns
// it as a Turn.
func (f *Server) decode(r *http.Request) (Turn, error) {
	want := "/v1/messages"
	if f.format == llm.OpenAI {
		want = "/v1/chat/completions"
	}
	if r.Method != http.MethodPost || r.URL.Path != want {
		return Turn{}, fmt.Errorf("%s %s, want POST %s", r.Method, r.URL.Path, want)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return Turn{}, fmt.Errorf("Content-Type %q, want application/json", ct)
	}
	key, err := f.checkAuth(r.Header)
	if err != nil {
		return Turn{}, err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return Turn{}, err
	}
	var instance any
	if err := json.Unmarshal(body, &instance); err != nil {
		return Turn{}, fmt.Errorf("body is not JSON: %v", err)
	}
	if err := f.schema.Validate(instance); err != nil {
		return Turn{}, fmt.Errorf("body breaks the request schema: %v\n%s", err, body)
	}
	var turn Turn
	if f.format == llm.Anthropic {
		turn, err = decodeAnthropic(body)
	} else {
		turn, err = decodeOpenAI(body)
	}
	if err != nil {
		return Turn{}, fmt.Errorf("%v\n%s", err, body)
	}
	var stream struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	json.Unmarshal(body, &stream)
	turn.Stream, turn.IncludeUsage, turn.APIKey = stream.Stream, stream.StreamOptions.IncludeUsage, key
	turn.At = time.Now()
	return turn, checkTools(turn.Tools)
}

// checkAuth returns the key the request carried, if it is the one wanted.
func (f *Server) checkAuth(h http.Header) (string, error) {
	f.mu.Lock()
	want := f.key
	f.mu.Unlock()
	if f.format == llm.Anthropic {
		if h.Get("anthropic-version") == "" {
			return "", fmt.Errorf("no anthropic-version header")
		}
		if got := h.Get("x-api-key"); got != want {
			return "", fmt.Errorf("x-api-key %q, want the test key", got)
		}
		return want, nil
	}
	if got := h.Get("Authorization"); got != "Bearer "+want {
		return "", fmt.Errorf("header Authorization %q, want Bearer and the test key", got)
	}
	return want, nil
}

// checkTools: names are unique and every schema is a JSON Schema object.
func checkTools(tools []llm.Tool) error {
	seen := map[string]bool{}
	for _, t := range tools {
		if seen[t.Name] {
			return fmt.Errorf("tool %q offered twice", t.Name)
		}
		seen[t.Name] = true
		var s jsonschema.Schema
		if err := json.Unmarshal(t.Schema, &s); err != nil {
			return fmt.Errorf("tool %q: input schema is not a JSON Schema: %v", t.Name, err)
		}
		if s.Type != "object" {
			return fmt.Errorf("tool %q: input schema type %q, want object", t.Name, s.Type)
		}
	}
	return nil
}

func (f *Server) writeError(w http.ResponseWriter, r Reply) {
	if r.RetryAfter != "" {
		w.Header().Set("Retry-After", r.RetryAfter)
	}
	msg := r.Text
	if msg == "" {
		msg = http.StatusText(r.Status)
	}
	if f.format == llm.Anthropic {
		kind := map[int]string{400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}[r.Status]
		if kind == "" {
			kind = "api_error"
		}
		writeJSON(w, r.Status, map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": msg}})
		return
	}
	writeJSON(w, r.Status, map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "code": nil}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

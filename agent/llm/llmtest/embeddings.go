package llmtest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"strings"
	"unicode"

	"github.com/helixml/helix-org/agent/llm"
)

// EmbeddingDim is the size of the fake's embeddings.
const EmbeddingDim = 64

// EmbeddingsCall is one embeddings request as the fake decoded it.
type EmbeddingsCall struct {
	Model  string
	Input  []string
	APIKey string
}

// Concepts makes the fake's embeddings read words as their concept:
// words mapped to one concept get one direction, so a paraphrase with
// no word in common embeds close to what it rephrases. Unmapped words
// are their own concept.
func (f *Server) Concepts(words map[string]string) *Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.concepts = words
	return f
}

// FailEmbeddings makes every embeddings request answer status (0: serve again).
func (f *Server) FailEmbeddings(status int) *Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.embedFail = status
	return f
}

// EmbeddingsCalls returns every embeddings request received so far.
func (f *Server) EmbeddingsCalls() []EmbeddingsCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]EmbeddingsCall(nil), f.embeds...)
}

// serveEmbeddings answers POST /v1/embeddings in OpenAI's shape with
// deterministic vectors: each word's concept hashed to a signed bucket,
// normalised to length 1.
func (f *Server) serveEmbeddings(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, msg string) {
		writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
	}
	if f.format != llm.OpenAI || r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		f.t.Errorf("llmtest %s: embeddings asked as %s %s", f.format, r.Method, r.URL.Path)
		fail(http.StatusNotFound, "no such endpoint")
		return
	}
	key, err := f.checkAuth(r.Header)
	if err != nil {
		fail(http.StatusUnauthorized, err.Error())
		return
	}
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || req.Model == "" {
		f.t.Errorf("llmtest: invalid embeddings request %s", body)
		fail(http.StatusBadRequest, "model and input are required")
		return
	}
	var input []string
	if err := json.Unmarshal(req.Input, &input); err != nil {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			f.t.Errorf("llmtest: embeddings input %s is neither a string nor strings", req.Input)
			fail(http.StatusBadRequest, "input must be a string or an array of strings")
			return
		}
		input = []string{one}
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" {
		fail(http.StatusBadRequest, "the fake serves encoding_format float only")
		return
	}
	f.mu.Lock()
	f.embeds = append(f.embeds, EmbeddingsCall{Model: req.Model, Input: input, APIKey: key})
	status, concepts := f.embedFail, f.concepts
	f.mu.Unlock()
	if status != 0 {
		fail(status, fmt.Sprintf("embeddings unavailable (%d)", status))
		return
	}
	data := make([]map[string]any, len(input))
	tokens := 0
	for i, text := range input {
		words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		tokens += len(words)
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": conceptVector(words, concepts)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "model": req.Model, "data": data,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}})
}

func conceptVector(words []string, concepts map[string]string) []float32 {
	v := make([]float64, EmbeddingDim)
	for _, w := range words {
		if c, ok := concepts[w]; ok {
			w = c
		}
		h := fnv.New64a()
		h.Write([]byte(w))
		sum := h.Sum64()
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		v[sum%EmbeddingDim] += sign
	}
	norm := 0.0
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, EmbeddingDim)
	for i, x := range v {
		if norm > 0 {
			out[i] = float32(x / math.Sqrt(norm))
		}
	}
	return out
}

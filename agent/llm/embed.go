package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MaxEmbeddingsBody bounds an embeddings answer read: a few hundred
// vectors of a few thousand floats.
const MaxEmbeddingsBody = 32 << 20

// Embeddings calls an OpenAI-compatible embeddings endpoint
// (POST {BaseURL}/embeddings). It has the method set of
// domain.Embedder without importing it.
type Embeddings struct {
	// BaseURL is as agent.base_url takes it (the /v1 base); empty means
	// OpenAI's public API.
	BaseURL string
	// APIKey, when set, goes as the bearer; empty for a keyless local server.
	APIKey string
	// Name is the embedding model asked for.
	Name string
	// Client makes the call; nil is one that follows no redirects (a
	// redirect would carry the key wherever it points).
	Client *http.Client
}

// Model is the embedding model's name.
func (e Embeddings) Model() string { return e.Name }

// Embed returns one vector per text, in order, or an error naming the
// status and what the provider said (never the key).
func (e Embeddings) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	if e.Name == "" {
		return nil, fmt.Errorf("embeddings: no model named")
	}
	base := strings.TrimRight(e.BaseURL, "/")
	if base == "" {
		base = OpenAIBaseURL
	}
	body, err := json.Marshal(map[string]any{"model": e.Name, "input": texts, "encoding_format": "float"})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	client := e.Client
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxEmbeddingsBody+1))
	if err != nil {
		return nil, fmt.Errorf("embeddings: read answer: %w", err)
	}
	if len(raw) > MaxEmbeddingsBody {
		return nil, fmt.Errorf("embeddings: answer over %d bytes", MaxEmbeddingsBody)
	}
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(raw))
		if e.APIKey != "" {
			// Some providers echo the key they refused.
			msg = strings.ReplaceAll(msg, e.APIKey, "[redacted]")
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return nil, fmt.Errorf("embeddings: provider answered %d: %s", resp.StatusCode, msg)
	}
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("embeddings: decode answer: %w", err)
	}
	if len(out.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings: %d vectors for %d texts", len(out.Data), len(texts))
	}
	vs := make([][]float32, len(texts))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(texts) || vs[d.Index] != nil || len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embeddings: answer has a bad or repeated index %d", d.Index)
		}
		vs[d.Index] = d.Embedding
	}
	return vs, nil
}

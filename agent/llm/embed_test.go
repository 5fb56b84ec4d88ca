package llm_test

import (
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
)

// TestEmbeddings: vectors come back one per text, in order, of unit
// length; texts read as the same concepts embed alike; a provider's
// refusal is an error naming its status and never the key.
func TestEmbeddings(t *testing.T) {
	fake := llmtest.New(t, llm.OpenAI, nil).Concepts(map[string]string{"rollback": "undo", "revert": "undo"})
	e := llm.Embeddings{BaseURL: fake.BaseURL(), APIKey: llmtest.APIKey, Name: "emb"}
	vs, err := e.Embed(t.Context(), []string{"rollback", "revert", "invoice"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 3 || len(vs[0]) != llmtest.EmbeddingDim {
		t.Fatalf("got %d vectors of %d; want 3 of %d", len(vs), len(vs[0]), llmtest.EmbeddingDim)
	}
	dot := func(a, b []float32) (d float64) {
		for i := range a {
			d += float64(a[i]) * float64(b[i])
		}
		return d
	}
	if d := dot(vs[0], vs[1]); math.Abs(d-1) > 1e-6 {
		t.Errorf("rollback·revert = %v; want 1 (one concept)", d)
	}
	if d := dot(vs[0], vs[2]); d > 0.5 {
		t.Errorf("rollback·invoice = %v; want unlike", d)
	}
	if calls := fake.EmbeddingsCalls(); len(calls) != 1 || calls[0].Model != "emb" || calls[0].APIKey != llmtest.APIKey {
		t.Errorf("calls %+v; want one for model emb with the key", calls)
	}

	for _, tc := range []struct {
		name string
		e    llm.Embeddings
		fail int
		want string
	}{
		{"provider down", e, http.StatusServiceUnavailable, "provider answered 503"},
		{"key refused, echoed by the provider", llm.Embeddings{BaseURL: fake.BaseURL(), APIKey: "sk-wrong-key", Name: "emb"}, 0, "provider answered 401"},
		{"no model", llm.Embeddings{BaseURL: fake.BaseURL(), APIKey: llmtest.APIKey}, 0, "no model named"},
		{"unreachable", llm.Embeddings{BaseURL: "http://127.0.0.1:1/v1", Name: "emb"}, 0, "embeddings:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake.FailEmbeddings(tc.fail)
			t.Cleanup(func() { fake.FailEmbeddings(0) })
			_, err := tc.e.Embed(t.Context(), []string{"rollback"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want one saying %q", err, tc.want)
			}
			if tc.e.APIKey != "" && strings.Contains(err.Error(), tc.e.APIKey) {
				t.Errorf("the error holds the key: %v", err)
			}
		})
	}
}

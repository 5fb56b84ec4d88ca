package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// The Gemini API (POST /relay/gemini/v1beta/models/{model}:{method}),
// which Gemini CLI speaks with GOOGLE_GEMINI_BASE_URL at the relay and the
// run's token as GEMINI_API_KEY. It has its own upstream (Config.Gemini:
// agent.gemini.base_url and api_key), not agent.provider's. The model is
// in the path; a reply, and each chunk of an alt=sse stream, carries
// usageMetadata, whose counts are totals so far.

// GeminiBaseURL is the Gemini API's public host.
const GeminiBaseURL = "https://generativelanguage.googleapis.com"

// geminiMethods are the relayed methods, and whether each is metered.
var geminiMethods = map[string]bool{"generateContent": true, "streamGenerateContent": true, "countTokens": false}

// geminiHandler parses {model}:{method} from the path and relays the call.
func (rl *Relay) geminiHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		model, method, _ := strings.Cut(r.PathValue("call"), ":")
		metered, ok := geminiMethods[method]
		if model == "" || !ok {
			fail(w, domain.RelayGemini, http.StatusNotFound, fmt.Sprintf(
				"models/%s: the relay takes models/{model}:{method} with method generateContent, streamGenerateContent or countTokens", r.PathValue("call")))
			return
		}
		e := endpoint{provider: domain.RelayGemini, format: domain.RelayGemini,
			path: "/v1beta/models/" + model + ":" + method, metered: metered, model: model}
		rl.handler(e).ServeHTTP(w, r)
	})
}

// geminiUpstream reads Config.Gemini.
func (rl *Relay) geminiUpstream(ctx context.Context, w http.ResponseWriter) (Upstream, bool) {
	if rl.cfg.Gemini == nil {
		fail(w, domain.RelayGemini, http.StatusServiceUnavailable, "this server relays no Gemini API")
		return Upstream{}, false
	}
	up, err := rl.cfg.Gemini(ctx)
	if err != nil {
		rl.internal(w, domain.RelayGemini, err)
		return Upstream{}, false
	}
	if up.APIKey == "" && up.BaseURL == "" {
		fail(w, domain.RelayGemini, http.StatusServiceUnavailable,
			"the model relay has no Gemini API key: an operator sets agent.gemini.api_key (or agent.gemini.base_url for a keyless server)")
		return Upstream{}, false
	}
	up.Provider = domain.RelayGemini
	return up, true
}

// geminiKey is the key as Google's SDKs send it: x-goog-api-key, or the
// key query parameter.
func geminiKey(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("x-goog-api-key")); k != "" {
		return k
	}
	return strings.TrimSpace(r.URL.Query().Get("key"))
}

// withoutKey is a query with the caller's key taken out: the server's
// goes in a header instead.
func withoutKey(q url.Values) string {
	q.Del("key")
	return q.Encode()
}

// geminiMaxTokens is generationConfig.maxOutputTokens (0: none said).
func geminiMaxTokens(fields map[string]json.RawMessage) int64 {
	var gc struct {
		MaxOutputTokens int64 `json:"maxOutputTokens"`
	}
	json.Unmarshal(fields["generationConfig"], &gc)
	return gc.MaxOutputTokens
}

type geminiChunk struct {
	UsageMetadata *struct {
		PromptTokenCount        int64 `json:"promptTokenCount"`
		ToolUsePromptTokenCount int64 `json:"toolUsePromptTokenCount"`
		CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
		ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
	Candidates []struct {
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	Error json.RawMessage `json:"error"`
}

// gemini reads a reply, a stream chunk, or the JSON array a stream is
// without alt=sse. Input is the prompt (cached content included) and
// tool-use prompt; output the candidates and thinking, both billed as
// output. The model stays the one asked for, the name llm.prices knows:
// modelVersion may be a dated or preview variant of it.
func (m *meter) gemini(data []byte) {
	var chunks []geminiChunk
	if json.Unmarshal(data, &chunks) != nil {
		var c geminiChunk
		if json.Unmarshal(data, &c) != nil {
			return
		}
		chunks = []geminiChunk{c}
	}
	for _, c := range chunks {
		if u := c.UsageMetadata; u != nil {
			m.seen, m.in, m.out = true, u.PromptTokenCount+u.ToolUsePromptTokenCount, u.CandidatesTokenCount+u.ThoughtsTokenCount
		}
	}
}

// geminiEnds says whether a stream chunk begins the tail: the one that
// finishes a candidate (it carries the final usage) or an error.
func geminiEnds(data []byte) bool {
	var c geminiChunk
	if json.Unmarshal(data, &c) != nil {
		return false
	}
	if len(c.Error) > 0 {
		return true
	}
	for _, cand := range c.Candidates {
		if cand.FinishReason != "" {
			return true
		}
	}
	return false
}

// geminiError is Google's error object: the HTTP code, a message and the
// canonical status name Google's SDKs read.
func geminiError(status int, msg string) map[string]any {
	return map[string]any{"error": map[string]any{"code": status, "message": msg, "status": geminiStatus(status)}}
}

func geminiStatus(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests, http.StatusPaymentRequired:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable, http.StatusBadGateway:
		return "UNAVAILABLE"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "INVALID_ARGUMENT"
}

package relay

import (
	"encoding/json"

	"github.com/helixml/helix-org/domain"
)

// The OpenAI Responses API (POST /relay/openai/v1/responses), which Codex
// speaks. It goes to the OpenAI upstream like Chat Completions and answers
// errors in the same shape; what differs is read here. A reply, or a
// stream's terminal event (response.completed, .incomplete or .failed),
// carries the response object whose usage has input_tokens (cached ones
// included) and output_tokens (reasoning included). A stream has no [DONE].
const formatResponses = "openai-responses"

type responsesUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

type responsesObject struct {
	Model string          `json:"model"`
	Usage *responsesUsage `json:"usage"`
}

// responses reads a whole reply (the response object) or a stream event
// (which wraps it in "response").
func (m *meter) responses(data []byte) {
	var e struct {
		responsesObject
		Response *responsesObject `json:"response"`
	}
	if json.Unmarshal(data, &e) != nil {
		return
	}
	for _, r := range []*responsesObject{&e.responsesObject, e.Response} {
		if r == nil {
			continue
		}
		m.setModel(r.Model)
		if r.Usage != nil {
			m.seen, m.in, m.out = true, r.Usage.InputTokens, r.Usage.OutputTokens
		}
	}
}

// responsesEnds says whether a stream event's type ends the reply.
func responsesEnds(typ string) bool {
	switch typ {
	case "response.completed", "response.incomplete", "response.failed", "error":
		return true
	}
	return false
}

// responsesBudgetEvent ends a stream with a failed response: Codex and the
// OpenAI SDKs read response.failed's error, and treat insufficient_quota
// as final, not to be retried.
func responsesBudgetEvent(stop *domain.BudgetExceededError) []byte {
	data, _ := json.Marshal(map[string]any{"type": "response.failed", "response": map[string]any{
		"status": "failed", "error": map[string]any{"code": "insufficient_quota", "message": stop.Error()}}})
	return append(append([]byte("event: response.failed\ndata: "), data...), "\n\n"...)
}

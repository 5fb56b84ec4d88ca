package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/helixml/helix-org/agent/llm"
)

// writeStream answers a "stream": true request with server-sent events in
// the provider's streaming format, flushing each event, and reporting the
// reply's usage where the provider does: Anthropic in message_start (input,
// and a first output count) and message_delta (the final output count);
// OpenAI in a last chunk with no choices, only when the request asked with
// stream_options.include_usage.
func (f *Server) writeStream(w http.ResponseWriter, turn Turn, r Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		if event != "" {
			fmt.Fprintf(w, "event: %s\n", event)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	if f.format == llm.Anthropic {
		anthropicStream(send, turn.Model, r)
		return
	}
	openaiStream(send, turn, r)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// halves splits text in two, so a reply arrives as more than one delta.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}

func anthropicStream(send func(string, any), model string, r Reply) {
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_llmtest", "type": "message",
		"role": "assistant", "model": model, "content": []any{}, "stop_reason": nil,
		"usage": map[string]any{"input_tokens": r.Usage.InputTokens, "output_tokens": 1}}})
	i := 0
	if r.Text != "" {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, part := range halves(r.Text) {
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": part}})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	stop := "end_turn"
	for _, c := range r.ToolCalls {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(c.Input)}})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
		stop = "tool_use"
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": r.Usage.OutputTokens}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

func openaiStream(send func(string, any), turn Turn, r Reply) {
	created := time.Now().Unix()
	chunk := func(choices []map[string]any) map[string]any {
		return map[string]any{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": created, "model": turn.Model, "choices": choices}
	}
	delta := func(d map[string]any, finish any) []map[string]any {
		return []map[string]any{{"index": 0, "delta": d, "finish_reason": finish}}
	}
	send("", chunk(delta(map[string]any{"role": "assistant", "content": ""}, nil)))
	if r.Text != "" {
		for _, part := range halves(r.Text) {
			send("", chunk(delta(map[string]any{"content": part}, nil)))
		}
	}
	finish := "stop"
	for i, c := range r.ToolCalls {
		send("", chunk(delta(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(c.Input)}}}}, nil)))
		finish = "tool_calls"
	}
	send("", chunk(delta(map[string]any{}, finish)))
	if turn.IncludeUsage {
		u := chunk([]map[string]any{})
		u["usage"] = map[string]any{"prompt_tokens": r.Usage.InputTokens, "completion_tokens": r.Usage.OutputTokens,
			"total_tokens": r.Usage.InputTokens + r.Usage.OutputTokens}
		send("", u)
	}
}

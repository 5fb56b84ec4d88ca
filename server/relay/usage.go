package relay

import (
	"bytes"
	"encoding/json"

	"github.com/helixml/helix-org/domain"
)

// Bounds on what the meter keeps while a reply passes through it.
const (
	maxMeteredBody = 32 << 20 // a whole JSON reply
	maxEventLine   = 1 << 20  // one server-sent event line
)

// meter reads usage out of a reply as it passes: a whole JSON reply, or
// the "data:" lines of a stream. Anthropic reports input tokens in
// message_start and a running output count in message_delta (the last one
// is the total); OpenAI reports both in its last chunk, or in the reply.
// Input tokens include Anthropic's cache reads and writes: every token the
// model was given.
type meter struct {
	provider string // the wire format
	sse      bool
	buf      []byte
	// skip drops the rest of an over-long line, or an over-long reply.
	skip bool

	model                   string
	in, cacheW, cacheR, out int64
	seen                    bool
}

// usage is what a call cost.
type usage struct {
	model   string
	in, out int64
	seen    bool
}

func newMeter(provider string, sse bool) *meter { return &meter{provider: provider, sse: sse} }

// Write never fails: the meter must not stop the reply.
func (m *meter) Write(p []byte) (int, error) {
	n := len(p)
	if !m.sse {
		if !m.skip && len(m.buf)+len(p) > maxMeteredBody {
			m.skip, m.buf = true, nil
		}
		if !m.skip {
			m.buf = append(m.buf, p...)
		}
		return len(p), nil
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if !m.skip && len(m.buf)+len(p) > maxEventLine {
				m.skip, m.buf = true, m.buf[:0]
			}
			if !m.skip {
				m.buf = append(m.buf, p...)
			}
			break
		}
		if !m.skip {
			m.line(append(m.buf, p[:i]...))
		}
		m.buf, m.skip, p = m.buf[:0], false, p[i+1:]
	}
	return n, nil
}

func (m *meter) line(l []byte) {
	if data, ok := bytes.CutPrefix(bytes.TrimRight(l, "\r"), []byte("data:")); ok {
		m.event(bytes.TrimSpace(data))
	}
}

// usage is the total once the reply has passed; model falls back to the
// request's.
func (m *meter) usage(requested string) usage {
	if !m.sse && !m.skip {
		m.event(m.buf)
	}
	model := m.model
	if model == "" {
		model = requested
	}
	return usage{model: model, in: m.in + m.cacheW + m.cacheR, out: m.out, seen: m.seen}
}

func (m *meter) event(data []byte) {
	switch m.provider {
	case domain.RelayAnthropic:
		m.anthropic(data)
	case formatResponses:
		m.responses(data)
	case domain.RelayGemini:
		m.gemini(data)
	default:
		m.openai(data)
	}
}

type anthropicUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

// anthropic reads a reply or a stream event; a later count replaces an
// earlier one, as message_delta's counts are cumulative.
func (m *meter) anthropic(data []byte) {
	var e struct {
		Model   string          `json:"model"`
		Usage   *anthropicUsage `json:"usage"`
		Message *struct {
			Model string          `json:"model"`
			Usage *anthropicUsage `json:"usage"`
		} `json:"message"`
	}
	if json.Unmarshal(data, &e) != nil {
		return
	}
	if e.Message != nil {
		m.setModel(e.Message.Model)
		m.apply(e.Message.Usage)
	}
	m.setModel(e.Model)
	m.apply(e.Usage)
}

func (m *meter) apply(u *anthropicUsage) {
	if u == nil {
		return
	}
	m.seen = true
	for _, f := range []struct {
		from *int64
		to   *int64
	}{{u.InputTokens, &m.in}, {u.OutputTokens, &m.out}, {u.CacheCreationInputTokens, &m.cacheW}, {u.CacheReadInputTokens, &m.cacheR}} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
}

func (m *meter) openai(data []byte) {
	var e struct {
		Model string `json:"model"`
		Usage *struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(data, &e) != nil {
		return
	}
	m.setModel(e.Model)
	if e.Usage != nil {
		m.seen, m.in, m.out = true, e.Usage.PromptTokens, e.Usage.CompletionTokens
	}
}

func (m *meter) setModel(s string) {
	if s != "" {
		m.model = s
	}
}

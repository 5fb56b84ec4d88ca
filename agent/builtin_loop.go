package agent

import (
	"context"
	"fmt"

	"github.com/helixml/helix-org/agent/llm"
)

// Loop is the built-in agent's conversation: ask the model, run the tools
// it calls, feed the results back, until it answers without a tool call.
// An activation runs it once; a chat runs it once per line typed.
type Loop struct {
	Provider  llm.Provider
	Tools     *Toolbox
	System    string
	MaxTurns  int
	MaxTokens int
	// OnMessage, if set, sees each message as it joins the conversation:
	// the model's replies, with what each cost, and the tool results.
	OnMessage func(m llm.Message, u llm.Usage)
	// OnToolCall and OnToolResult, if set, see each tool call just before
	// it runs and its result just after, for a live display.
	OnToolCall   func(c llm.ToolCall)
	OnToolResult func(c llm.ToolCall, r llm.ToolResult)
	// Steer, if set, returns what was said to the run since it last
	// asked ("" for nothing); it is asked after each round of tool calls,
	// so a message reaches the model on its next turn.
	Steer func(ctx context.Context) (string, error)

	// Usage and Turns add up every model call the loop has made.
	Usage llm.Usage
	Turns int
}

// ErrMaxTurns ends a run that used up agent.max_turns.
type ErrMaxTurns struct{ Turns int }

func (e ErrMaxTurns) Error() string {
	return fmt.Sprintf("stopped after %d model turns without finishing (raise agent.max_turns to allow more)", e.Turns)
}

// Run continues msgs, which end with the user's message, and returns the
// conversation as it stands when the run ends, on error too.
func (l *Loop) Run(ctx context.Context, msgs []llm.Message) ([]llm.Message, error) {
	for turn := 1; ; turn++ {
		if l.MaxTurns > 0 && turn > l.MaxTurns {
			return msgs, ErrMaxTurns{Turns: l.MaxTurns}
		}
		res, err := l.Provider.Complete(ctx, llm.Request{System: l.System, Messages: msgs, Tools: l.Tools.Specs(), MaxTokens: l.MaxTokens})
		if err != nil {
			return msgs, err
		}
		l.Turns++
		l.Usage.InputTokens += res.Usage.InputTokens
		l.Usage.OutputTokens += res.Usage.OutputTokens
		msgs = append(msgs, res.Message)
		l.emit(res.Message, res.Usage)
		if len(res.Message.ToolCalls) == 0 {
			return msgs, nil
		}
		results := llm.Message{Role: llm.RoleUser}
		for _, c := range res.Message.ToolCalls {
			if l.OnToolCall != nil {
				l.OnToolCall(c)
			}
			r := l.Tools.Call(ctx, c)
			if l.OnToolResult != nil {
				l.OnToolResult(c, r)
			}
			results.ToolResults = append(results.ToolResults, r)
		}
		if l.Steer != nil {
			said, err := l.Steer(ctx)
			if err != nil {
				return msgs, fmt.Errorf("steering: %w", err)
			}
			results.Text = said
		}
		msgs = append(msgs, results)
		l.emit(results, llm.Usage{})
	}
}

func (l *Loop) emit(m llm.Message, u llm.Usage) {
	if l.OnMessage != nil {
		l.OnMessage(m, u)
	}
}

// FinalText is the model's last word in a conversation.
func FinalText(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant {
			return msgs[i].Text
		}
	}
	return ""
}

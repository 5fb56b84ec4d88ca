package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/helixml/helix-org/domain"
)

// claudeInput is Claude Code's stdin in stream-json (`--input-format
// stream-json`): the prompt as the first user message, then the messages
// sent to the run (Run.Steer) as further user messages, taken each time
// Claude Code reaches a point where one can go in — a tool's result, or
// the end of a turn. Claude Code queues a message that comes mid-turn and
// takes it when it can, so it reaches the model within a turn or two.
// Stdin is closed at the end of a turn with nothing more to say, which
// ends the session once Claude Code has answered all it was given.
type claudeInput struct {
	run  domain.Run
	wake chan struct{} // a line after which a message can go in
	// turnEnded says a result line came since the feed last looked.
	turnEnded atomic.Bool
}

func newClaudeInput(run domain.Run) *claudeInput {
	return &claudeInput{run: run, wake: make(chan struct{}, 1)}
}

// saw notes the type of a line of Claude Code's output.
func (c *claudeInput) saw(typ string) {
	switch typ {
	case "result":
		c.turnEnded.Store(true)
	case "user": // tool results
	default:
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// feed is claudeInput's Feed. Without Run.Steer no message can come, and
// stdin closes after the prompt.
func (c *claudeInput) feed(ctx context.Context, w io.WriteCloser) {
	defer w.Close()
	if err := writeClaudeUser(w, c.run.Prompt); err != nil || c.run.Steer == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
		ended := c.turnEnded.Swap(false)
		msgs, err := c.run.Steer(ctx)
		if err != nil {
			// Closing stdin lets the agent finish; what was not taken
			// wakes the worker's next run.
			note(&c.run, fmt.Sprintf("steering: %v; messages sent from now on reach the worker's next run", err))
			return
		}
		if len(msgs) == 0 {
			if ended {
				return
			}
			continue
		}
		if err := writeClaudeUser(w, steerMessages(msgs)); err != nil {
			note(&c.run, fmt.Sprintf("steering: %d message(s) could not reach the agent, which stopped reading: %v", len(msgs), err))
			return
		}
		note(&c.run, fmt.Sprintf("steering: passed %d message(s) from %s to the running agent", len(msgs), senders(msgs)))
	}
}

// claudeUser is a user message of Claude Code's stream-json input.
type claudeUser struct {
	Type    string `json:"type"`
	Message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"message"`
}

func writeClaudeUser(w io.Writer, text string) error {
	m := claudeUser{Type: "user"}
	m.Message.Role, m.Message.Content = "user", text
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// steerMessages renders messages sent to a run as the built-in agent
// reads them (Toolbox.Steering).
func steerMessages(msgs []domain.SteerMessage) string {
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = steerText(m.From, m.SentAt.UTC().Format("2006-01-02T15:04:05Z"), m.Body)
	}
	return strings.Join(parts, "\n\n")
}

func senders(msgs []domain.SteerMessage) string {
	var out []string
	for _, m := range msgs {
		if !slices.Contains(out, m.From) {
			out = append(out, m.From)
		}
	}
	return strings.Join(out, ", ")
}

package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompts lists the prompts the worker's endpoint offers (prompts/list),
// for a chat's slash commands.
func (t *Toolbox) Prompts(ctx context.Context) ([]*mcp.Prompt, error) {
	var out []*mcp.Prompt
	for p, err := range t.session.Prompts(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list prompts: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Prompt expands a prompt on the server (prompts/get) and returns its
// text, every message's text joined, to be sent as the user's message.
func (t *Toolbox) Prompt(ctx context.Context, name string, args map[string]string) (string, error) {
	res, err := t.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("prompt %s: %w", name, err)
	}
	var parts []string
	for _, m := range res.Messages {
		if tc, ok := m.Content.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("prompt %s has no text", name)
	}
	return strings.Join(parts, "\n\n"), nil
}

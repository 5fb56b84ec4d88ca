package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

// Steering takes the messages sent to the run since it last looked
// (message_activation), through the worker's MCP endpoint, as text for
// the model: "" when there are none. Reading them takes them, so each
// reaches the model once.
func (t *Toolbox) Steering(ctx context.Context) (string, error) {
	res, err := t.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: domain.SteeringURI})
	if err != nil {
		return "", fmt.Errorf("read %s: %w", domain.SteeringURI, err)
	}
	var b strings.Builder
	for _, c := range res.Contents {
		var got struct {
			Messages []struct{ From, Body, SentAt string }
		}
		if err := json.Unmarshal([]byte(c.Text), &got); err != nil {
			return "", fmt.Errorf("read %s: %w", domain.SteeringURI, err)
		}
		for _, m := range got.Messages {
			b.WriteString(steerText(m.From, m.SentAt, m.Body) + "\n\n")
		}
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// steerText is one message sent to a running agent, as its model reads it.
func steerText(from, sentAt, body string) string {
	return fmt.Sprintf("Message from %s, sent to you while you work (%s):\n%s", from, sentAt, body)
}

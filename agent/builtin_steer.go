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
			fmt.Fprintf(&b, "Message from %s, sent to you while you work (%s):\n%s\n\n", m.From, m.SentAt, m.Body)
		}
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

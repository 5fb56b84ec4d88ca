package tools

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

// steerNoteOut is a message as the running agent reads it.
type steerNoteOut struct {
	From   string `json:"from"`
	Body   string `json:"body"`
	SentAt string `json:"sentAt"`
}

// steeringResult is what reading domain.SteeringURI returns.
type steeringResult struct {
	Messages []steerNoteOut `json:"messages"`
}

// addSteering lets a run take the messages sent to it (domain.SteeringURI),
// each reaching one run and raising its label by the message's; any other
// caller reads an empty list.
func addSteering(srv *mcp.Server, env *Env) {
	srv.AddResource(&mcp.Resource{URI: domain.SteeringURI, Name: "steering", MIMEType: "application/json",
		Description: "Messages your managers sent to your run while it works; reading takes them, each is shown once."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			out := steeringResult{Messages: []steerNoteOut{}}
			if env.ActivationID != "" {
				msgs, err := env.Store.TakeSteering(ctx, env.Caller, env.ActivationID)
				if err != nil {
					return nil, err
				}
				for _, m := range msgs {
					out.Messages = append(out.Messages, steerNote(m))
				}
			}
			b, err := domain.MarshalPlain(out)
			if err != nil {
				return nil, fmt.Errorf("steering: %w", err)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: domain.SteeringURI, MIMEType: "application/json", Text: string(b)}}}, nil
		})
}

func steerNote(m domain.SteerMessage) steerNoteOut {
	return steerNoteOut{From: m.From, Body: m.Body, SentAt: m.SentAt.UTC().Format("2006-01-02T15:04:05Z")}
}

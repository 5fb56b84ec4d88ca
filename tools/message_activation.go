package tools

import (
	"context"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
)

type messageActivationIn struct {
	Activation string `json:"activation" jsonschema:"the running run to steer: an activation id (a-…) of a worker below you"`
	Body       string `json:"body" jsonschema:"what to tell the running agent, in plain words (markdown allowed)"`
}

type messageActivationOut struct {
	ID         int64  `json:"id" jsonschema:"the message's id"`
	Activation string `json:"activation" jsonschema:"the activation the message was sent to (a-…)"`
	WorkerID   string `json:"workerId" jsonschema:"the worker whose run it is (w-…)"`
	Delivery   string `json:"delivery" jsonschema:"how and when the message reaches the agent"`
}

// steerDelivery says when a message reaches its agent: the agents that
// take input while they run are the built-in agent and Claude Code.
const steerDelivery = "The built-in agent reads it before its next model turn; Claude Code (claude, or docker with agent.docker.cli claude) " +
	"gets it as its next input once its current tool call returns or its turn ends. " +
	"An agent that takes no input while it runs (codex, gemini, opencode, command, the docker command), " +
	"or a run that ends before reading it, leaves it queued: it is the first input of the worker's next run."

func messageActivation() Tool {
	return define("message_activation", "Send a message to a running activation (run) of an AI worker below you, to steer it while it works.",
		func(ctx context.Context, env *Env, in messageActivationIn) (messageActivationOut, error) {
			if in.Activation == "" {
				return messageActivationOut{}, domain.Required("activation")
			}
			if in.Body == "" {
				return messageActivationOut{}, domain.Required("body")
			}
			if limit := maxBody(ctx, env); limit > 0 && len(in.Body) > limit {
				return messageActivationOut{}, domain.Invalid("body", "is %d bytes, over %s %d", len(in.Body), MaxBodySetting.Key, limit)
			}
			m, err := dispatch.MessageActivation(ctx, env.Store, in.Activation, env.Caller, in.Body)
			if err != nil {
				return messageActivationOut{}, err
			}
			return messageActivationOut{ID: m.ID, Activation: m.ActivationID, WorkerID: m.WorkerID, Delivery: steerDelivery}, nil
		}).annotated("Message run", 0)
}

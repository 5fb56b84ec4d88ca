package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type setContactIn struct {
	Worker string `json:"worker" jsonschema:"a human worker: you or one below you"`
	Email  string `json:"email" jsonschema:"empty removes the channel"`
}

func setContact() Tool {
	return define("set_contact", "Set a human Worker's email: its DMs, messages to it and inbox notices are mailed there; its replies come back as its messages.",
		func(ctx context.Context, env *Env, in setContactIn) (domain.Stream, error) {
			if in.Worker == "" {
				return domain.Stream{}, domain.Required("worker")
			}
			return env.Store.SetContact(ctx, env.Caller, in.Worker, in.Email)
		})
}

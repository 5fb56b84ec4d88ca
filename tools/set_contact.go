package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type setContactIn struct {
	Worker   string `json:"worker" jsonschema:"a human worker: you or one below you"`
	Email    string `json:"email,omitempty"`
	Slack    string `json:"slack,omitempty" jsonschema:"a channel id, e.g. the D… of its DM with the bot"`
	Telegram string `json:"telegram,omitempty" jsonschema:"the chat_id of its chat with the bot"`
}

func setContact() Tool {
	return define("set_contact", "Set a human Worker's channel (one of email, slack, telegram; none removes it): its DMs, messages to it and inbox notices go there; its replies come back as its messages.",
		func(ctx context.Context, env *Env, in setContactIn) (domain.Stream, error) {
			if in.Worker == "" {
				return domain.Stream{}, domain.Required("worker")
			}
			var c store.Contact
			for _, ch := range []store.Contact{{Kind: "email", Address: in.Email}, {Kind: "slack", Address: in.Slack}, {Kind: "telegram", Address: in.Telegram}} {
				switch {
				case ch.Address == "":
				case c.Kind != "":
					return domain.Stream{}, domain.Invalid(ch.Kind, "give one channel: %s is given too", c.Kind)
				default:
					c = ch
				}
			}
			return env.Store.SetContact(ctx, env.Caller, in.Worker, c)
		})
}

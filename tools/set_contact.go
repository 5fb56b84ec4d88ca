package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type setContactIn struct {
	Worker   string `json:"worker"`
	Email    string `json:"email,omitempty"`
	Slack    string `json:"slack,omitempty"`
	Telegram string `json:"telegram,omitempty"`
}

func setContact() Tool {
	return define("set_contact", "Route a human's messages to email, slack or telegram.",
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

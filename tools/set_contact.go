package tools

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type setContactIn struct {
	Worker  string `json:"worker" jsonschema:"the human worker to reach (w-…): you, or one below you"`
	Channel string `json:"channel,omitempty" jsonschema:"the transport that reaches them; with no address, removes the channel"`
	Address string `json:"address,omitempty" jsonschema:"where on the channel: an email address, a Slack channel id or a Telegram chat_id"`
}

func setContact() Tool {
	return define("set_contact", "Reach a human Worker outside at a channel address (email, Slack, Telegram); their replies come back as messages.",
		func(ctx context.Context, env *Env, in setContactIn) (domain.Stream, error) {
			if in.Worker == "" {
				return domain.Stream{}, domain.Required("worker")
			}
			c := store.Contact{Kind: in.Channel, Address: in.Address}
			if in.Channel == "" && in.Address != "" {
				return domain.Stream{}, domain.Invalid("channel", "is required with an address (valid: %s)", joinKinds(env.Store.Transports().ContactKinds()))
			}
			return env.Store.SetContact(ctx, env.Caller, in.Worker, c)
		}).withTransports(func(ts *domain.Transports, s *jsonschema.Schema) { enum("channel", ts.ContactKinds())(s) }).annotated("Set contact channel", destructive|idempotent)
}

func joinKinds(ks []domain.TransportKind) string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return strings.Join(out, ", ")
}

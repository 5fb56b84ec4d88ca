package tools

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type setContactIn struct {
	Worker  string `json:"worker"`
	Channel string `json:"channel,omitempty"`
	Address string `json:"address,omitempty"`
}

func setContact() Tool {
	return define("set_contact", "Reach a human at a channel address.",
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

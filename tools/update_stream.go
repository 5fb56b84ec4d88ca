package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type updateStreamIn struct {
	ID          string                 `json:"id" jsonschema:"the stream's id (s-…)"`
	Name        *string                `json:"name,omitempty" jsonschema:"the new name; omitted keeps it"`
	Description *string                `json:"description,omitempty" jsonschema:"the new description, shown to its readers; empty clears it, omitted keeps it"`
	Transport   *updateStreamTransport `json:"transport,omitempty" jsonschema:"changes to its transport's config; omitted keeps it"`
}

type updateStreamTransport struct {
	Kind   domain.TransportKind `json:"kind,omitempty" jsonschema:"the stream's kind as it is (get_stream shows it); a kind cannot change, so omit it or repeat it"`
	Config json.RawMessage      `json:"config,omitempty" jsonschema:"the config keys to change, merged into the config: a key given replaces its value, a key set to null is removed, a key not given is kept; a secret is encrypted at rest and kept when not given or given as ********"`
}

// updateStream changes a stream in place, so rotating a webhook's secret
// or moving its outbound_url keeps the stream's history and members.
func updateStream() Tool {
	return define("update_stream", "Change a Stream's name, description or transport config (merged key by key; the kind cannot change), "+
		"checked as create_stream checks a new one; its creator or an admin may. Outbound deliveries from then on use the new config; "+
		"an endpoint a 410 Gone disabled is enabled again when a key other than a secret (outbound_url) changes.",
		func(ctx context.Context, env *Env, in updateStreamIn) (domain.Stream, error) {
			if in.ID == "" {
				return domain.Stream{}, domain.Required("id")
			}
			u := store.StreamUpdate{Name: in.Name, Description: in.Description}
			if in.Transport != nil {
				cfg, err := configPatch(in.Transport.Config)
				if err != nil {
					return domain.Stream{}, err
				}
				u.Kind, u.Config = in.Transport.Kind, cfg
			}
			if u.Name == nil && u.Description == nil && u.Kind == "" && len(u.Config) == 0 {
				return domain.Stream{}, domain.Invalid("transport.config", "nothing to change: give name, description or transport.config")
			}
			st, err := env.Store.UpdateStream(ctx, env.Caller, in.ID, u)
			if errors.Is(err, domain.ErrInvalid) {
				// The refusal of a config shows what the kind takes.
				was, _ := env.Store.GetStream(ctx, in.ID)
				return domain.Stream{}, configHelp(env.Store.Transports(), was.Transport, err)
			}
			return redacted(env, st), err
		}, asObject("transport.config")).annotated("Update stream", destructive|idempotent)
}

// configPatch reads the keys to change; JSON null is kept as a value, the
// removal of its key.
func configPatch(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if raw = bytes.TrimSpace(raw); len(raw) == 0 {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, domain.Invalid("transport.config", `must be an object of the keys to change, e.g. {"outbound_url":"https://…"}`)
	}
	return m, nil
}

package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// StreamUpdate holds what update_stream may change; nil or empty keeps it.
// The id, the creator and whether the stream is private never change: its
// history and subscriptions mean what they meant.
type StreamUpdate struct {
	Name        *string
	Description *string
	// Kind, when set, must be the stream's own: a stream keeps its kind.
	Kind domain.TransportKind
	// Config are keys merged into the transport config: a value replaces
	// the key's, JSON null removes the key, a key not given is kept. A
	// secret given as domain.Redacted — what every read shows — is kept
	// too, so a config read and sent back does not overwrite the secret
	// with the mask.
	Config map[string]json.RawMessage
}

// UpdateStream changes a stream the actor may change (updatesStream) in
// one transaction: the merged config passes the same checks and Admit as
// at creation, its secrets are sealed, and the change is audited. Every
// server sees it at once: the streams epoch moves with the row.
func (s *Store) UpdateStream(ctx context.Context, actor, id string, u StreamUpdate) (domain.Stream, error) {
	if err := systemStream(id, "update"); err != nil {
		return domain.Stream{}, err
	}
	var before, after streamRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", id).Take(&before).Error; err != nil {
			return notFoundOr(err, "stream", id)
		}
		if err := s.updatesStream(tx, actor, "update", before); err != nil {
			return err
		}
		var moved bool
		var err error
		after, moved, err = s.updatedRow(ctx, actor, before, u)
		if err != nil || after == before {
			// Nothing changed: no write, and nothing to audit.
			return err
		}
		if err := tx.Model(&streamRow{}).Where("id = ?", id).
			Updates(map[string]any{"name": after.Name, "description": after.Description, "transport_config": after.TransportConfig}).Error; err != nil {
			return err
		}
		if err := s.audit(tx, Change{Action: "update_stream", Actor: actor, Target: id, Before: s.stream(before), After: s.stream(after)}); err != nil {
			return err
		}
		if !moved {
			return nil
		}
		// A 410 Gone that disabled its endpoint was the old destination's
		// answer; a rotated secret alone leaves it (enable_endpoint lifts it).
		_, err = s.enableEndpoint(tx, actor, id, map[string]string{"stream": id, "enabled": "update_stream changed where it sends"})
		return err
	})
	if err != nil {
		return domain.Stream{}, fmt.Errorf("update stream %s: %w", id, err)
	}
	return s.stream(after), nil
}

// updatedRow is before with u applied, checked as CreateStream checks a
// new stream, its config sealed; moved says a key other than a secret
// changed — where the stream sends.
func (s *Store) updatedRow(ctx context.Context, actor string, before streamRow, u StreamUpdate) (streamRow, bool, error) {
	after := before
	if u.Name != nil {
		after.Name = *u.Name
	}
	if u.Description != nil {
		after.Description = *u.Description
	}
	// The id is checked only when chosen, at creation: one stored before
	// today's rules must not block a fix of its description.
	checked := after.toDomain()
	checked.ID = ""
	if err := checked.Validate(); err != nil {
		return after, false, err
	}
	kind := domain.TransportKind(before.TransportKind)
	if u.Kind != "" && u.Kind != kind {
		return after, false, domain.Invalid("transport.kind", "%s is a %q stream and a stream's kind cannot change (valid: %q): its history and subscriptions are of that kind; "+
			"to connect %q, create a new stream", before.ID, kind, kind, u.Kind)
	}
	if len(u.Config) == 0 {
		return after, false, nil
	}
	cfg, changed, moved, err := s.mergeConfig(kind, before.TransportConfig, u.Config)
	if err != nil || !changed {
		return after, false, err
	}
	t := domain.Transport{Kind: kind, Config: cfg}
	if err := s.transports.Validate(t); err != nil {
		return after, false, err
	}
	if err := s.admit(ctx, actor, t, nil); err != nil {
		return after, false, err
	}
	sealed, _, err := s.sealConfig(kind, string(cfg))
	if err != nil {
		return after, false, fmt.Errorf("encrypt transport secrets: %w", err)
	}
	after.TransportConfig = sealed
	return after, moved, nil
}

// mergeConfig applies patch to the stored config, opened, and returns the
// plaintext result for the kind's checks, whether it differs, and whether
// a key other than a secret does.
func (s *Store) mergeConfig(kind domain.TransportKind, stored string, patch map[string]json.RawMessage) (json.RawMessage, bool, bool, error) {
	opened, err := s.openConfig(kind, stored)
	if err != nil {
		return nil, false, false, err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte(opened), &m); err != nil || m == nil {
		// A stored config that is not an object has no keys to keep: what
		// is given replaces it.
		m = map[string]json.RawMessage{}
	}
	was, _ := json.Marshal(m)
	secrets := s.transports.Secrets(kind)
	moved := false
	for k, v := range patch {
		v = bytes.TrimSpace(v)
		old := m[k]
		var str string
		switch {
		case len(v) == 0 || string(v) == "null":
			delete(m, k)
		case slices.Contains(secrets, k) && json.Unmarshal(v, &str) == nil && str == domain.Redacted:
			// The mask a read shows: keep the secret.
		default:
			m[k] = v
		}
		moved = moved || !slices.Contains(secrets, k) && !sameJSON(old, m[k])
	}
	merged, err := json.Marshal(m)
	return merged, !bytes.Equal(merged, was), moved, err
}

// sameJSON says two values are the same JSON, spacing aside; absent is
// neither.
func sameJSON(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// createStreamTool is the tool that makes a stream: who may not call it
// may not change one either.
const createStreamTool = "create_stream"

// updatesStream is who may change a stream — update or archive it, as
// verb says in a refusal: whoever may still make one (a live
// create_stream grant) and either made this one or is an admin. An AI
// worker has no org role, so it changes only its own streams and cannot
// redirect or archive another's outbound webhook. The operator is not
// bound.
func (s *Store) updatesStream(tx *gorm.DB, actor, verb string, st streamRow) error {
	if actor == "" {
		return nil
	}
	var g grantRow
	err := tx.Where("worker_id = ? AND tool = ?", actor, createStreamTool).Take(&g).Error
	if errors.Is(err, gorm.ErrRecordNotFound) || (err == nil && !g.toDomain().Live(s.Now())) {
		return domain.Forbidden("%s may not %s %s: it holds no live %s grant, and who may not make a stream may not change one", actor, verb, st.ID, createStreamTool)
	}
	if err != nil {
		return err
	}
	role, err := orgRoleOf(tx, actor)
	if err != nil || role == domain.RoleAdmin || st.CreatedBy == actor {
		return err
	}
	creator := st.CreatedBy
	if creator == "" {
		creator = "the operator"
	}
	return domain.Forbidden("%s may not %s %s: only its creator (%s) or an admin may", actor, verb, st.ID, creator)
}

// systemStream refuses to verb (update, archive) the streams the server
// makes and keeps for itself, saying why changing one would break what
// relies on it.
func systemStream(id, verb string) error {
	if id == domain.StreamOrg {
		return domain.Invalid("id", "%s is the org's audit trail, which the system keeps; it cannot be %sd", id, verb)
	}
	kind, _ := domain.StreamKindOf(id)
	if kind == domain.StreamShared {
		return nil
	}
	return domain.Invalid("id", "%s is %s; it cannot be %sd (%s_stream %ss only streams made with create_stream)", id, systemStreams[kind], verb, verb, verb)
}

// systemStreams say what each kind of system stream is and why it stays
// as the system made it.
var systemStreams = map[domain.StreamKind]string{
	domain.StreamDM:          "a DM stream, which the server finds by its id and description and keeps for its two members",
	domain.StreamActivations: "a worker's activation log, which the system writes",
	domain.StreamInbox:       "a worker's inbox, which only the system writes",
	domain.StreamContact:     "a person's contact stream, whose config follows their contact address: change it with set_contact",
	domain.StreamTask:        "a spec task's stream, which the system writes",
}

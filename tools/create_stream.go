package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/helixml/helix-org/domain"
)

type createStreamIn struct {
	ID          string          `json:"id,omitempty" jsonschema:"the new stream's id (s-…); by default derived from name"`
	Name        string          `json:"name" jsonschema:"the stream's name"`
	Description string          `json:"description,omitempty" jsonschema:"what the stream is for, shown to its readers"`
	Transport   json.RawMessage `json:"transport,omitempty" jsonschema:"where its events go or come from; local when omitted"`
}

func createStream() Tool {
	return define("create_stream", "Create a Stream of events: local, or connected outside by a transport (webhook, email, GitHub, Slack, Telegram, schedule).",
		func(ctx context.Context, env *Env, in createStreamIn) (domain.Stream, error) {
			if err := notReserved(in.ID, in.Name); err != nil {
				return domain.Stream{}, err
			}
			t, err := parseTransport(in.Transport)
			if err != nil {
				return domain.Stream{}, err
			}
			st, err := env.Store.CreateStream(ctx, env.Caller, domain.Stream{ID: in.ID, Name: in.Name, Description: in.Description, Transport: t})
			return redacted(env, st), configHelp(env.Store.Transports(), t, err)
		}).withTransports(transportSchema).annotated("Create stream", adds)
}

// notReserved refuses the ids the system gives its own streams (DMs,
// activation logs, inboxes, contact streams, task streams, s-org),
// whether chosen or derived from the name: a stream created under such an
// id would be taken for the real one, and whoever made it could read
// what lands there.
func notReserved(id, name string) error {
	if id == "" {
		id = domain.Slug(domain.PrefixStream, name)
	}
	for _, p := range domain.ReservedStreamPrefixes {
		if strings.HasPrefix(id, p) {
			return domain.Invalid("id", "%q is reserved: ids starting %q belong to streams the system creates; choose another id or name", id, p)
		}
	}
	if slices.Contains(domain.ReservedStreamIDs, id) {
		return domain.Invalid("id", "%q is reserved: it is the system's own stream; choose another id or name", id)
	}
	return nil
}

// parseTransport accepts the bare kind ("webhook") or {"kind":…,"config":{…}}.
func parseTransport(raw json.RawMessage) (domain.Transport, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return domain.Transport{Kind: domain.TransportLocal}, nil
	}
	var kind string
	if json.Unmarshal(raw, &kind) == nil {
		return domain.Transport{Kind: domain.TransportKind(kind)}, nil
	}
	var t domain.Transport
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return t, domain.Invalid("transport", `must be a kind string or {"kind":…,"config":{…}}: %v`, err)
	}
	return t, nil
}

// redacted hides the stream's transport secrets. The store already
// returns them redacted; this keeps a tool's answer safe whatever it got.
func redacted(env *Env, st domain.Stream) domain.Stream {
	st.Transport = env.Store.Transports().Redact(st.Transport)
	return st
}

// transportSchema offers the store's transport kinds. What each kind's
// config holds is told by the error a wrong one gets (configHelp), so
// only a caller that needs it pays for it. It shows the object form
// only: the bare kind ("webhook") is a shorthand the schema need not
// spend bytes on.
func transportSchema(ts *domain.Transports, s *jsonschema.Schema) {
	var kinds []any
	for _, spec := range ts.All() {
		kinds = append(kinds, string(spec.Kind))
	}
	s.Properties["transport"] = &jsonschema.Schema{Type: "object", Description: s.Properties["transport"].Description,
		Required: []string{"kind"}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		Properties: map[string]*jsonschema.Schema{
			"kind":   {Type: "string", Enum: kinds, Description: "local keeps events in the org; any other kind connects the stream outside"},
			"config": {Type: "object", Description: "the kind's settings; a wrong one's error shows what the kind takes"},
		}}
}

// configHelp adds to an invalid transport's error what its kind connects
// and the config it takes.
func configHelp(ts *domain.Transports, t domain.Transport, err error) error {
	if !errors.Is(err, domain.ErrInvalid) || t.Kind == domain.TransportLocal {
		return err
	}
	spec, serr := ts.Spec("transport.kind", t.Kind)
	if serr != nil || spec.Config == "" {
		return err
	}
	return fmt.Errorf("%w\n%s (%s) takes config %s", err, spec.Kind, spec.About, spec.Config)
}

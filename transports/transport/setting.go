package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
)

// Setting is a kind's one JSON setting, transport.<name>, with the parse
// that reads it: `config set` checks a value with it (Validate), and the
// receiver, the sender and a loop read it through Load, so a value one
// accepts is one the others work with.
type Setting[C any] struct {
	domain.SettingSpec
	Parse func(string) (C, error)
}

// NewSetting returns transport.<name>: a JSON object, "{}" when unset,
// its secret fields encrypted and never shown, checked by parse.
func NewSetting[C any](name, description string, secrets []string, parse func(string) (C, error)) Setting[C] {
	return Setting[C]{Parse: parse, SettingSpec: domain.SettingSpec{
		Key: "transport." + name, Type: domain.SettingJSON, Default: "{}",
		Description: description, SecretFields: secrets,
		Validate: func(v string) error { _, err := parse(v); return err },
	}}
}

// Load reads the setting through Parse.
func (s Setting[C]) Load(ctx context.Context, st Settings) (C, error) {
	return LoadConfig(ctx, st, s.SettingSpec, s.Parse)
}

// DecodeSettings decodes key's raw value into c, refusing unknown fields.
// The error says what is wrong without quoting the value: it holds
// secrets.
func DecodeSettings(key, raw string, c any) error {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return fmt.Errorf("not a %s object (%s): %w", key, decodeProblem(err), domain.ErrInvalid)
	}
	return nil
}

func decodeProblem(err error) string {
	if rest, ok := strings.CutPrefix(err.Error(), "json: unknown field"); ok {
		return "unknown field" + rest
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return "wrong type for " + te.Field
	}
	return "invalid JSON"
}

// URL checks a setting's optional URL field, and gives it def when empty.
func URL(field string, v *string, def string) error {
	if *v == "" {
		*v = def
		return nil
	}
	if err := domain.ValidateHTTPURL(*v); err != nil {
		return domain.Invalid(field, "%v", err)
	}
	return nil
}

// Client is c, or the default client when a transport was given none.
func Client(c *http.Client) *http.Client {
	if c == nil {
		return http.DefaultClient
	}
	return c
}

// Logger is l scoped to a component, or one that discards when nil.
func Logger(l *slog.Logger, component string) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.With("component", component)
}

// Ready begins a sender's attempt: the kind's setting loaded, and the
// stream's config read by parse (see delivery.Ready).
func Ready[C interface{ Sendable() error }, S any](ctx context.Context, s Setting[C], st Settings, stream domain.Stream, parse func(json.RawMessage) (S, error)) (C, S, delivery.Outcome) {
	cfg, err := s.Load(ctx, st)
	sc, out := delivery.Ready(cfg, err, stream, parse)
	return cfg, sc, out
}

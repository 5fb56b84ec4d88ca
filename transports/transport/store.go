package transport

import (
	"context"
	"errors"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
)

// Store is what a transport uses of the store, declared once for all of
// them: receivers, loops and install flows take it whole; a Sender reads
// only what delivery.Store names, an inbound endpoint stores through
// inbound.Store, and settings are read through Settings. *store.Store
// satisfies it.
type Store interface {
	Settings
	delivery.Store
	inbound.Store
	// SetSetting stores a value its spec accepts, secrets encrypted (an
	// install flow storing the token it was given).
	SetSetting(ctx context.Context, spec domain.SettingSpec, value string) error
	// StreamWithSecrets gives a stream's config decrypted, for verifying
	// and signing; never show what it returns.
	StreamWithSecrets(ctx context.Context, id string) (domain.Stream, error)
	ListStreams(ctx context.Context, kind domain.TransportKind) ([]domain.Stream, error)
	// OnThread reports whether a stream holds an event of a thread, or
	// delivered one as it.
	OnThread(ctx context.Context, streamID, thread string) (bool, error)
	// GetWorker gives a worker stream's worker, whose name a message may
	// mention.
	GetWorker(ctx context.Context, id string) (domain.Worker, error)
	// PullRequestItem is the spec-task item the server opened a pull
	// request for (forge reviews reach its builder), or an error wrapping
	// domain.ErrNotFound.
	PullRequestItem(ctx context.Context, forge, project string, number int) (domain.ItemRef, error)
	// Changed is closed at the next commit: the schedule ticker picks up
	// a new stream then.
	Changed() <-chan struct{}
	// SettingsChanged is closed once a commit has changed the settings:
	// a loop picks up a new token then, and is not woken by other writes.
	SettingsChanged() <-chan struct{}
}

// Settings reads operational config.
type Settings interface {
	SettingOr(ctx context.Context, spec domain.SettingSpec) (string, error)
}

// LoadConfig reads a kind's settings (spec) and decodes them with parse,
// the same check `config set` applies, so a value it accepts is one the
// receiver and the sender work with. A stored value parse refuses (set
// by hand, or by an older version) is ours to fix: the error says so
// without quoting it, since it holds secrets.
func LoadConfig[C any](ctx context.Context, st Settings, spec domain.SettingSpec, parse func(string) (C, error)) (C, error) {
	var c C
	raw, err := st.SettingOr(ctx, spec)
	if err != nil {
		return c, err
	}
	if c, err = parse(raw); err != nil {
		return c, errors.New(spec.Key + " cannot be used: " + err.Error())
	}
	return c, nil
}

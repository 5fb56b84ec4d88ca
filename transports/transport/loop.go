package transport

import (
	"cmp"
	"context"
	"log/slog"
	"math/rand/v2"
	"time"
)

// Loop keeps a transport's connection to its provider open (Slack's
// Socket Mode, Discord's Gateway): it connects while the kind's settings
// allow, reconnects after a backoff that doubles up to MaxBackoff and
// starts over once a connection got going, and after a refusal waits for
// the settings to change.
type Loop[C any] struct {
	Store Store
	// Setting is the kind's settings, watched for a change and read
	// before each connection.
	Setting Setting[C]
	// Credential is what a connection is made with (a token); while it is
	// empty the loop waits.
	Credential func(C) string
	// Name says whose connection it is in log lines: "slack socket mode".
	Name   string
	Logger *slog.Logger
	// Backoff is the first wait after a connection fails (default 1s),
	// doubled up to MaxBackoff (default 2m).
	Backoff, MaxBackoff time.Duration
	// Connect makes one connection with the settings and serves it to
	// its end.
	Connect func(ctx context.Context, cfg C) Ended
}

// Ended says how a connection ended, and so what the loop does next.
type Ended struct {
	Err error
	// Fatal: the settings cannot be read, or the provider refused them;
	// wait for them to change.
	Fatal bool
	// Again: reconnect at once (the provider asked to).
	Again bool
	// Ready: the connection got going, so the backoff starts over.
	Ready bool
}

// Run connects until ctx ends.
func (l Loop[C]) Run(ctx context.Context) error {
	log := l.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	wait := l.backoff()
	for ctx.Err() == nil {
		changed := l.Store.SettingsChanged()
		raw, _ := l.Store.SettingOr(ctx, l.Setting.SettingSpec)
		cfg, err := l.Setting.Load(ctx, l.Store)
		if err == nil && l.Credential(cfg) == "" {
			WaitOn(ctx, changed, 0) // nothing to connect with yet
			continue
		}
		e := Ended{Err: err, Fatal: true}
		if err == nil {
			e = l.Connect(ctx, cfg)
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case e.Fatal:
			log.Error(l.Name+" refused; waiting for "+l.Setting.Key+" to change", "err", e.Err)
			l.waitForChange(ctx, raw)
			continue
		case e.Again:
			log.Info(l.Name+" reconnecting", "why", e.Err)
			wait = l.backoff()
			continue
		case e.Ready:
			wait = l.backoff()
		}
		log.Warn(l.Name+" connection ended", "err", e.Err, "retry_in", wait)
		WaitOn(ctx, nil, wait/2+rand.N(wait/2+1))
		wait = min(wait*2, cmp.Or(l.MaxBackoff, 2*time.Minute))
	}
	return nil
}

// waitForChange returns once the settings differ from raw.
func (l Loop[C]) waitForChange(ctx context.Context, raw string) {
	for ctx.Err() == nil {
		changed := l.Store.SettingsChanged()
		if now, _ := l.Store.SettingOr(ctx, l.Setting.SettingSpec); now != raw {
			return
		}
		WaitOn(ctx, changed, time.Minute)
	}
}

func (l Loop[C]) backoff() time.Duration { return cmp.Or(l.Backoff, time.Second) }

// WaitOn waits for ctx, ch (nil: never) or d (0: forever).
func WaitOn(ctx context.Context, ch <-chan struct{}, d time.Duration) {
	var after <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		after = t.C
	}
	select {
	case <-ctx.Done():
	case <-ch:
	case <-after:
	}
}
